"""The N x 2 Jacobian of one GBM step three ways, beside its closed form: by forward mode (dual
numbers, one pass per input), by reverse mode (a tape, one backward pass per output) and by one
backward pass over per-path copies of the inputs (the pathwise gradient). The book shows
`forward` and `reverse` as they are written here."""

from __future__ import annotations

import numpy as np

from jacbench.teaching import dual, tape
from jacbench.teaching.gbm_step import closed_form, step

SPOT, VOL, DT, DRIFT = 100.0, 0.2, 1 / 52, 0.03
SEED = 1234


def normals(paths: int, seed: int = SEED) -> np.ndarray:
    """The standard normals of one step, one per path."""
    return np.random.default_rng(seed).standard_normal(paths)


def simulate(z: np.ndarray, exp):
    """One GBM step as a function of (spot, vol), for one kind of number (its exp)."""
    return lambda spot, vol: step(spot, vol, z, DT, DRIFT, exp)


def forward(z: np.ndarray) -> np.ndarray:
    """The N x 2 Jacobian by forward mode: one pass of dual numbers per input."""
    f = simulate(z, dual.exp)
    _, d_spot = dual.jvp(f, (SPOT, VOL), (1.0, 0.0))  # the tangent on the spot
    _, d_vol = dual.jvp(f, (SPOT, VOL), (0.0, 1.0))  # the tangent on the volatility
    return np.column_stack([d_spot, d_vol])


def reverse(z: np.ndarray) -> np.ndarray:
    """The N x 2 Jacobian by reverse mode: one backward pass of a tape per output."""
    f = simulate(z, tape.exp)
    rows = []
    for i in range(len(z)):
        cotangent = np.eye(len(z))[i]  # one-hot on output i
        _, (d_spot, d_vol), _ = tape.vjp(f, (SPOT, VOL), cotangent)
        rows.append([d_spot, d_vol])
    return np.array(rows)


def pathwise(z: np.ndarray) -> np.ndarray:
    """The N x 2 Jacobian by one backward pass: every path its own copy of spot and vol."""
    n = len(z)
    copies = (np.full(n, SPOT), np.full(n, VOL))
    _, (d_spot, d_vol), _ = tape.vjp(simulate(z, tape.exp), copies, np.ones(n))
    return np.column_stack([d_spot, d_vol])


def exact(z: np.ndarray) -> np.ndarray:
    """The N x 2 Jacobian in closed form."""
    _, d_spot, d_vol = closed_form(SPOT, VOL, z, DT, DRIFT)
    return np.column_stack([d_spot, d_vol])


def relative_error(x, reference) -> float:
    """The largest relative error of x against a reference, element by element."""
    x, reference = np.asarray(x, dtype=float), np.asarray(reference, dtype=float)
    return float(np.max(np.abs(x - reference) / np.abs(reference)))


def recorded(z: np.ndarray) -> tape.Tape:
    """The tape that one backward pass of `reverse` walks (the first output's)."""
    cotangent = np.eye(len(z))[0]
    return tape.vjp(simulate(z, tape.exp), (SPOT, VOL), cotangent)[2]
