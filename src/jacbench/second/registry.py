"""The registry of second-order methods, as data (framework, name, kind, description)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from jacbench.errors import UsageError

# dense: the full Hessian of each of the 3 outputs, (3, n, n); hvp: Hessian-vector products
# (3, n); diagonal: diag(H_k), (3, n), exact for a separable function; greeks: per-path
# (d2 S_T / dS0 dsigma, d2 S_T / dsigma2), (N, 2), of the GBM simulation.
KINDS = ("dense", "hvp", "diagonal", "greeks")


@dataclass(frozen=True)
class Method:
    framework: str
    name: str
    kind: str
    description: str

    @property
    def key(self) -> str:
        return f"{self.framework}/{self.name}"

    def load(self):
        module = importlib.import_module(f"jacbench.second.{self.framework}_second")
        return getattr(module, self.name.replace("-", "_"))


METHODS: tuple[Method, ...] = (
    Method("torch", "functional-hessian", "dense",
           "torch.autograd.functional.hessian of each output (reverse-over-reverse)."),
    Method("torch", "func-hessian", "dense",
           "torch.func.hessian (jacfwd over jacrev) of all three outputs at once."),
    Method("torch", "hvp", "hvp",
           "Forward-over-reverse: torch.func.jvp of torch.func.grad, one pass per output."),
    Method("torch", "diagonal", "diagonal",
           "The HVP with a vector of ones: exactly diag(H) when H is diagonal (separable f)."),
    Method("torch", "greeks", "greeks",
           "Per-path second-order Greeks: jvp in vol over the pathwise gradient."),
    Method("tensorflow", "nested-tapes", "dense",
           "A GradientTape.jacobian of the gradient from an inner tape, per output."),
    Method("tensorflow", "hvp", "hvp",
           "Forward-over-reverse: ForwardAccumulator around a GradientTape gradient."),
    Method("tensorflow", "greeks", "greeks",
           "Per-path second-order Greeks: ForwardAccumulator in vol over the pathwise gradient."),
    Method("jax", "hessian", "dense",
           "jax.hessian (jacfwd over jacrev) under jit."),
    Method("jax", "hvp", "hvp",
           "Forward-over-reverse: jax.jvp of jax.grad, under jit."),
    Method("jax", "greeks", "greeks",
           "Per-path second-order Greeks: jax.jvp in vol over the pathwise jax.grad, under jit."),
)  # fmt: skip


def get(framework: str, name: str) -> Method:
    for m in METHODS:
        if m.framework == framework and m.name == name:
            return m
    valid = ", ".join(m.key for m in METHODS)
    raise UsageError(f"unknown second-order method {framework}/{name}; choose one of: {valid}")
