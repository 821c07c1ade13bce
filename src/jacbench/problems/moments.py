"""The second question's function: f(X) = (sum X^2, sum X^3, sum X^4), a wide 3 x n Jacobian.

The function is separable, so its Jacobian rows and Hessians are known in closed form: the
Hessian of each output is diagonal. A batched variant applies f to each of B rows of X (B, n),
the per-sample Jacobian of the question's functorch answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from jacbench.constants import DTYPES
from jacbench.errors import UsageError, check_device

POWERS = (2, 3, 4)


@dataclass(frozen=True)
class MomentsParams:
    """Size and inputs of one case: n inputs (and B rows when batched)."""

    inputs: int = 100_000
    batch: int = 0  # 0: a single X of shape (n,); B >= 1: X of shape (B, n)
    seed: int = 1234
    dtype: str = "float32"

    def validate(self) -> MomentsParams:
        if self.inputs < 1:
            raise UsageError(f"--inputs must be at least 1, got {self.inputs}")
        if self.batch < 0:
            raise UsageError(f"--batch must be 0 (unbatched) or more, got {self.batch}")
        if self.dtype not in DTYPES:
            raise UsageError(f"--dtype must be one of {', '.join(DTYPES)}, got {self.dtype!r}")
        return self


@dataclass(frozen=True)
class MomentsCase:
    params: MomentsParams
    x: np.ndarray = field(repr=False)  # (n,) or (B, n), in the case's dtype
    device: str = "cpu"  # where a strategy computes (constants.DEVICES); x is numpy's

    @property
    def problem(self) -> str:
        """ "moments" for one X, "moments-batch" for B rows (per-sample Jacobians)."""
        return "moments-batch" if self.params.batch else "moments"


def make_case(params: MomentsParams, device: str = "cpu") -> MomentsCase:
    """Inputs near the question's value (2.00094), perturbed so that rows differ, for a strategy
    that computes on the device."""
    params.validate()
    check_device(device)
    shape = (params.batch, params.inputs) if params.batch else (params.inputs,)
    rng = np.random.default_rng(params.seed)
    x = 2.00094 + 0.1 * rng.standard_normal(shape)
    return MomentsCase(params, x.astype(params.dtype), device)


def evaluate(x: np.ndarray) -> np.ndarray:
    """f(X): (3,) for X (n,), (B, 3) for X (B, n)."""
    return np.stack([np.sum(x**k, axis=-1) for k in POWERS], axis=-1)


def jacobian_closed_form(x: np.ndarray) -> np.ndarray:
    """(3, n) rows 2X, 3X^2, 4X^3 (or (B, 3, n) for a batch), in float64."""
    x = np.asarray(x, dtype=np.float64)
    return np.stack([k * x ** (k - 1) for k in POWERS], axis=-2)


def hessian_diagonal(x: np.ndarray) -> np.ndarray:
    """The diagonal of each output's Hessian, (3, n): 2, 6X, 12X^2 (the rest is zero)."""
    x = np.asarray(x, dtype=np.float64)
    return np.stack([k * (k - 1) * x ** (k - 2) for k in POWERS], axis=-2)


def hvp_closed_form(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Hessian-vector products H_k v for the three outputs, (3, n)."""
    return hessian_diagonal(x) * np.asarray(v, dtype=np.float64)


def dense_hessian_bytes(inputs: int, dtype: str, outputs: int = 3) -> int:
    """Memory of the dense Hessians: outputs x n x n numbers."""
    return outputs * inputs * inputs * np.dtype(dtype).itemsize


def direction(case: MomentsCase) -> np.ndarray:
    """The vector v of the case's Hessian-vector products: fixed by the seed, in its dtype."""
    rng = np.random.default_rng(case.params.seed + 1)
    return rng.standard_normal(case.x.shape).astype(case.params.dtype)


# Hutchinson's estimate of diag(H): the mean of v * (H v) over random probes v. With Rademacher
# probes (entries +1 or -1) its error comes from the off-diagonal entries only, so it is exact for
# this separable f at any count; with Gaussian probes each entry's relative error is about
# sqrt(2 / samples). The methods measured use SAMPLES Rademacher probes.
SAMPLES = 16
PROBES = ("rademacher", "gaussian")


def probes(case: MomentsCase, samples: int = SAMPLES, kind: str = "rademacher") -> np.ndarray:
    """(samples, n) probe vectors for Hutchinson's estimate, fixed by the seed, in the case's
    dtype (a single X only)."""
    if kind not in PROBES:
        raise UsageError(f"probes must be one of {', '.join(PROBES)}, got {kind!r}")
    rng = np.random.default_rng(case.params.seed + 2)
    shape = (samples, *case.x.shape)
    if kind == "gaussian":
        return rng.standard_normal(shape).astype(case.params.dtype)
    return (2.0 * rng.integers(0, 2, shape) - 1.0).astype(case.params.dtype)


def dense_hessian(x: np.ndarray) -> np.ndarray:
    """The three dense Hessians (3, n, n) in float64: diagonal matrices (small n only)."""
    return np.stack([np.diag(d) for d in hessian_diagonal(x)])


# Rows of a dense Hessian checked at a time: the check holds a block of this many rows in float64
# (80 MB at n = 10,000), never a second copy of the whole Hessians. A float64 reference and
# the differences, whole, took 7.2 GB at n = 10,000 beside the 1.2 GB Hessians, and the harness
# counted them against the case's memory cap.
CHECK_ROWS = 1000


def dense_hessian_error(values: np.ndarray, x: np.ndarray) -> float:
    """The largest error of dense Hessians (3, n, n) against the closed form, per output scaled
    by its largest entry (relative_error's measure), read CHECK_ROWS rows at a time: entry
    (i, j) is 0 off the diagonal and hessian_diagonal's on it."""
    diagonal = hessian_diagonal(x)
    if np.shape(values) != (*diagonal.shape, diagonal.shape[-1]):
        raise ValueError(f"shape {np.shape(values)} does not match the Hessians of {x.shape}")
    worst = 0.0
    for k, d in enumerate(diagonal):
        scale = float(np.max(np.abs(d))) or 1.0
        for start in range(0, len(d), CHECK_ROWS):
            block = np.array(values[k, start : start + CHECK_ROWS], dtype=np.float64)
            rows = np.arange(len(block))
            block[rows, start + rows] -= d[start : start + len(block)]
            worst = max(worst, float(np.max(np.abs(block))) / scale)
    return worst


def relative_error(values: np.ndarray, reference: np.ndarray, axis: int = -2) -> float:
    """Largest error per output (along axis) scaled by that output's largest magnitude."""
    v = np.moveaxis(np.asarray(values, dtype=np.float64), axis, 0)
    r = np.moveaxis(np.asarray(reference, dtype=np.float64), axis, 0)
    if v.shape != r.shape:
        raise ValueError(f"shape {v.shape} does not match reference {r.shape}")
    v, r = v.reshape(len(v), -1), r.reshape(len(r), -1)
    scale = np.max(np.abs(r), axis=1)
    scale[scale == 0] = 1.0
    return float(np.max(np.max(np.abs(v - r), axis=1) / scale))
