"""A smooth test function of any shape, for the tall-to-wide crossover: f(x) = tanh(W x).

W is (m, n): m outputs, n inputs. Its Jacobian is diag(1 - tanh(W x)^2) W, in closed form.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from jacbench.constants import DTYPES
from jacbench.errors import UsageError

# The longest side m or n at most this: at the tall and wide extremes the identity basis of the
# slower mode holds side^2 numbers (2^28 floats, 1 GiB in float32).
MAX_SIDE = 2**14


@dataclass(frozen=True)
class ShapesParams:
    """One shape of the crossover: m outputs, n inputs."""

    outputs: int = 64
    inputs: int = 64
    seed: int = 0
    dtype: str = "float32"

    def validate(self) -> ShapesParams:
        if self.outputs < 1 or self.inputs < 1:
            raise UsageError(f"a shape needs m, n >= 1, got {self.outputs} x {self.inputs}")
        if self.dtype not in DTYPES:
            raise UsageError(f"--dtype must be one of {', '.join(DTYPES)}, got {self.dtype!r}")
        return self


@dataclass(frozen=True)
class ShapesCase:
    params: ShapesParams
    w: np.ndarray = field(repr=False)  # (m, n)
    x: np.ndarray = field(repr=False)  # (n,)

    problem = "shapes"


def make_case(params: ShapesParams) -> ShapesCase:
    params.validate()
    w, x = make(params.inputs, params.outputs, params.seed, params.dtype)
    return ShapesCase(params, w, x)


def relative_error(j: np.ndarray, reference: np.ndarray) -> float:
    """Largest absolute error over the largest entry of the reference."""
    return float(np.max(np.abs(j - reference)) / np.max(np.abs(reference)))


def make(inputs: int, outputs: int, seed: int = 0, dtype: str = "float32"):
    """(W, x) with W scaled so that W x stays in tanh's curved range."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((outputs, inputs)) / np.sqrt(inputs)
    x = rng.standard_normal(inputs)
    return w.astype(dtype), x.astype(dtype)


def jacobian_closed_form(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    """(m, n) in float64."""
    w64, x64 = w.astype(np.float64), x.astype(np.float64)
    return (1 - np.tanh(w64 @ x64) ** 2)[:, None] * w64


# The crossover's shape settings where a profile leaves them out.
SHAPE_DEFAULTS = {"total": 1024, "steps": 7, "side": None}


def nearest_power_of_two(value: float, low: int, high: int) -> int:
    """The power of two from low to high nearest to value on a log scale (the smaller of two
    as near), for a refusal to suggest."""
    value = max(float(value), 1.0)
    candidates = [2**k for k in range(int(np.log2(low)), int(np.log2(high)) + 1)]
    return min(candidates, key=lambda p: (abs(np.log2(p) - np.log2(value)), p))


def shapes(total: int, steps: int = 9, side: int | None = None) -> list[tuple[int, int]]:
    """(outputs m, inputs n) with m * n = total, from tall to wide: from m = side to n = side
    (side defaults to total, at most MAX_SIDE: from a single column to a single row).

    A larger total with a shorter side keeps the extremes' identity basis (side^2 numbers) in
    memory while each shape's arithmetic grows: the aspects then run from side^2 / total to
    total / side^2.
    """
    if total < 2 or total & (total - 1):
        raise UsageError(
            f"the crossover's total m * n must be a power of two, got {total}; "
            f"the nearest is {nearest_power_of_two(total, 2, total * 2 + 2)}"
        )
    side = min(total, MAX_SIDE) if side is None else side
    low, high = 2 ** int(np.ceil(np.log2(total) / 2)), min(total, MAX_SIDE)
    if side & (side - 1) or not total <= side * side or side > min(total, MAX_SIDE):
        raise UsageError(
            f"the crossover's longest side must be a power of two from sqrt(total) to "
            f"min(total, {MAX_SIDE}), got {side} for total {total}; "
            f"the nearest is {nearest_power_of_two(side, low, high)}"
        )
    if steps < 2:
        raise UsageError(f"the crossover needs at least 2 shapes, got {steps}")
    exponent, longest = int(round(np.log2(total))), int(round(np.log2(side)))
    # n = 2^k from the tallest shape (m = side) to the widest (n = side).
    ks = np.unique(np.linspace(exponent - longest, longest, steps).round().astype(int))
    return [(int(2 ** (exponent - k)), int(2**k)) for k in ks]
