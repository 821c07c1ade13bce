"""One generic strategy as a record of data (the contract is in strategies.generic)."""

from __future__ import annotations

from dataclasses import dataclass

MODES = ("forward", "reverse", "pathwise", "finite-difference")
GENERIC_FRAMEWORKS = ("torch", "jax", "tensorflow")


@dataclass(frozen=True)
class Generic:
    """One generic way to differentiate a reader's function."""

    framework: str
    name: str  # kebab-case, unique within its framework and order
    mode: str  # one of MODES; pathwise = per-row reverse (one backward pass per row's output)
    call: str  # the API call it makes, in one line ("torch.func.jacrev(f)(theta, data)")
    description: str  # one sentence
    code: str  # the source defining jacobian(theta, data); calls the reader's function as f
    per_row: bool = False
    compiled: bool = False
    order: int = 1  # 1: the (m, d) Jacobian; 2: the (d, d) Hessian of a one-output f
    # The framework's plain reverse loop (one backward pass per output): what the others are
    # checked against at the smallest size. One per framework and order.
    reference: bool = False
    # Its framework's eager forward mode ("forward") or eager per-row gradient ("pathwise"),
    # the pair "Your function" compares as inputs grow; "" for the rest.
    answer: str = ""
    # A per-sample Jacobian of a batched function (advise --batch): theta (B, d), y led by B,
    # jacobian(theta, data) returning the (B, m', d) diagonal blocks. Run on batched requests
    # only; the others never run on one but the plain reverse loop, for comparison.
    batched: bool = False

    @property
    def key(self) -> str:
        return f"{self.framework}/{self.name}"
