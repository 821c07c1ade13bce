"""A smooth test function of any shape, for the tall-to-wide crossover: f(x) = tanh(W x).

W is (m, n): m outputs, n inputs. Its Jacobian is diag(1 - tanh(W x)^2) W, in closed form.
"""

from __future__ import annotations

import numpy as np


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


def shapes(total: int, steps: int = 9) -> list[tuple[int, int]]:
    """(outputs m, inputs n) with m * n = total, from tall (m = total) to wide (n = total)."""
    exponent = int(round(np.log2(total)))
    if 2**exponent != total:
        raise ValueError(f"total must be a power of two, got {total}")
    ks = np.unique(np.linspace(0, exponent, steps).round().astype(int))
    return [(int(2 ** (exponent - k)), int(2**k)) for k in ks]
