"""Geometric Brownian motion: the Monte-Carlo problem of the first question.

S_t = S0 * exp((mu - sigma^2/2) * t + sigma * W_t) on a grid of M steps over [0, T],
N paths; the output is S_T (N,). Every framework simulates from the same normals Z
(shape (M, N)), drawn once here with numpy's Generator, so paths agree up to rounding.

A streamed case holds no normals: at N = 10^8 and M = 52 they alone are 20.8 GB in float32.
The path-blocked strategies draw them one block of paths at a time from a stream that depends
only on the seed and the path's index (see :func:`stream_normals`), and its closed form is
computed from the same stream, block by block.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from jacbench.constants import DTYPES
from jacbench.errors import UsageError, check_device


@dataclass(frozen=True)
class GBMParams:
    """Model and discretisation of one GBM case."""

    paths: int = 1000
    steps: int = 52
    spot: float = 100.0
    vol: float = 0.2
    drift: float = 0.03
    maturity: float = 1.0
    seed: int = 1234
    dtype: str = "float32"
    chunk_size: int = 256

    @property
    def path_array_bytes(self) -> int:
        """Bytes of one path array: the (M + 1) x N simulated values in the case's dtype."""
        return (self.steps + 1) * self.paths * np.dtype(self.dtype).itemsize

    def validate(self) -> GBMParams:
        """Raise UsageError naming the first bad field."""
        if self.paths < 1:
            raise UsageError(f"--paths must be at least 1, got {self.paths}")
        if self.steps < 1:
            raise UsageError(f"--steps must be at least 1, got {self.steps}")
        if not self.vol > 0:
            raise UsageError(f"--vol must be positive, got {self.vol}")
        if not self.spot > 0:
            raise UsageError(f"--spot must be positive, got {self.spot}")
        if not self.maturity > 0:
            raise UsageError(f"--maturity must be positive, got {self.maturity}")
        if self.chunk_size < 1:
            raise UsageError(f"--chunk-size must be at least 1, got {self.chunk_size}")
        if self.dtype not in DTYPES:
            raise UsageError(f"--dtype must be one of {', '.join(DTYPES)}, got {self.dtype!r}")
        return self


@dataclass(frozen=True)
class GBMCase:
    """Parameters plus the inputs every framework shares: the time grid and the normals.

    ``normals`` is None for a streamed case: the normals of paths [a, b) are then
    ``stream_normals(params, a, b)``, drawn when asked; :meth:`block_normals` gives either.
    ``device`` is where a strategy computes (constants.DEVICES); the arrays here are numpy's.
    """

    params: GBMParams
    t: np.ndarray = field(repr=False)  # (M+1,) in the case's dtype
    normals: np.ndarray | None = field(default=None, repr=False)  # (M, N) in the case's dtype
    device: str = "cpu"

    problem = "gbm"

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self.params.dtype)

    @property
    def streamed(self) -> bool:
        return self.normals is None

    def block_normals(self, start: int, stop: int, out: np.ndarray | None = None) -> np.ndarray:
        """The normals of paths [start, stop), shape (M, stop - start), in the case's dtype:
        a slice of the held normals, or drawn from the stream. With ``out`` (M, B), B >=
        stop - start, they fill its first columns and the rest is set to zero."""
        n = stop - start
        if out is None:
            out = np.empty((self.params.steps, n), dtype=self.dtype)
        if self.normals is not None:
            out[:, :n] = self.normals[:, start:stop]
        else:
            stream_normals(self.params, start, stop, out=out[:, :n], threads=self.draw_threads)
        out[:, n:] = 0
        return out

    @property
    def draw_threads(self) -> int:
        """Threads that draw the stream: one on the CPU, where the framework's threads compute
        (every CPU row was measured so); every core where a GPU computes, which would otherwise
        wait on one core's numpy (5.2 x 10^9 normals a call at N = 10^8)."""
        return 1 if self.device == "cpu" else os.cpu_count() or 1

    def scalar(self, value: float) -> np.ndarray:
        """A 0-d array of the case's dtype (so no framework silently promotes)."""
        return np.asarray(value, dtype=self.dtype)


def draw_normals(paths: int, steps: int, seed: int, dtype: str = "float64") -> np.ndarray:
    """Standard normals of shape (steps, paths), from numpy's default Generator, drawn in
    float64 and rounded to the dtype. One step's row is drawn at a time: the Generator fills
    an array in order, so the numbers are a whole (steps, paths) draw's, and rounding them
    never holds a float64 copy of them all (at N = 10^7 that copy alone is 4.2 GB)."""
    rng = np.random.default_rng(seed)
    out = np.empty((steps, paths), dtype=dtype)
    for k in range(steps):
        out[k] = rng.standard_normal(paths)
    return out


# Paths per group of the stream: each group's normals come from their own generator.
STREAM_GROUP = 16_384


def stream_normals(
    params: GBMParams, start: int, stop: int, out: np.ndarray | None = None, threads: int = 1
) -> np.ndarray:
    """The streamed normals of paths [start, stop), shape (M, stop - start), case's dtype.

    Paths come in groups of STREAM_GROUP; group g's normals are numpy's default Generator
    seeded with (seed, g), drawn in float64 as an (M, STREAM_GROUP) array and rounded to the
    dtype, as make_case's are. A path's normals depend on the seed and its index only, not on
    N or on the blocks they are read in. They are not the normals make_case draws (those are
    one (M, N) draw from one generator, which cannot be read a block at a time). With threads
    above 1 the groups are drawn that many at a time (numpy draws without holding the GIL):
    the same numbers.
    """
    dtype, m = np.dtype(params.dtype), params.steps
    if out is None:
        out = np.empty((m, stop - start), dtype=dtype)
    first, last = start // STREAM_GROUP, (stop - 1) // STREAM_GROUP if stop > start else -1

    def group(g: int) -> None:
        z = np.random.default_rng([params.seed, g]).standard_normal((m, STREAM_GROUP))
        lo, hi = max(start, g * STREAM_GROUP), min(stop, (g + 1) * STREAM_GROUP)
        out[:, lo - start : hi - start] = z[:, lo - g * STREAM_GROUP : hi - g * STREAM_GROUP]

    groups = range(first, last + 1)
    if threads > 1 and len(groups) > 1:
        with ThreadPoolExecutor(min(threads, len(groups))) as pool:
            list(pool.map(group, groups))
    else:
        for g in groups:
            group(g)
    return out


def make_case(params: GBMParams, streamed: bool = False, device: str = "cpu") -> GBMCase:
    """Validate parameters and build the shared inputs in the case's dtype (streamed: the
    time grid only; the normals are drawn a block at a time by whoever needs them), for a
    strategy that computes on the device."""
    params.validate()
    check_device(device)
    dtype = np.dtype(params.dtype)
    t = np.linspace(0.0, params.maturity, params.steps + 1).astype(dtype)
    if streamed:
        return GBMCase(params=params, t=t, device=device)
    z = draw_normals(params.paths, params.steps, params.seed, dtype)
    return GBMCase(params=params, t=t, normals=z, device=device)


def brownian(t: np.ndarray, z: np.ndarray) -> np.ndarray:
    """W on the grid, shape (M+1, N): W_0 = 0, increments sqrt(dt) * Z, cumulated."""
    dw = np.sqrt(np.diff(t))[:, None] * z
    return np.concatenate([np.zeros((1, z.shape[1]), dtype=z.dtype), dw]).cumsum(axis=0)


def simulate(case: GBMCase) -> np.ndarray:
    """Numpy reference simulator in the case's dtype: S_T, shape (N,)."""
    p = case.params
    spot, vol, drift = case.scalar(p.spot), case.scalar(p.vol), case.scalar(p.drift)
    w = brownian(case.t, case.normals)
    s = spot * np.exp((drift - vol * vol / 2) * case.t[:, None] + vol * w)
    return s[-1]


def _float64(case: GBMCase) -> tuple[GBMParams, np.ndarray]:
    """Terminal Brownian value W_T in float64, from the case's own (possibly rounded) normals."""
    if case.streamed:
        return case.params, _terminal_brownian(case, 0, case.params.paths)
    t = case.t.astype(np.float64)
    w_t = brownian(t, case.normals.astype(np.float64))[-1]
    return case.params, w_t


def _terminal_brownian(case: GBMCase, start: int, stop: int) -> np.ndarray:
    """W_T of paths [start, stop) in float64, from their (possibly rounded) normals: the sum of
    the increments sqrt(dt) Z, which is the last row of :func:`brownian`."""
    z = case.block_normals(start, stop).astype(np.float64)
    return np.sqrt(np.diff(case.t.astype(np.float64))) @ z


# Paths per block of the error check: its float64 arrays stay near 100 MiB at M = 52.
CHECK_BLOCK = 1 << 18


def jacobian_error(case: GBMCase, jacobian: np.ndarray) -> float:
    """relative_error(jacobian, jacobian_closed_form(case)), computed a block of paths at a
    time, so that checking N = 10^8 paths never holds an (N, 2) float64 reference."""
    return _blockwise_error(
        jacobian, case.params.paths,
        lambda a, b: _jacobian(case.params, _terminal_brownian(case, a, b)),
    )  # fmt: skip


def jacobian_error_from_terminal(
    params: GBMParams, jacobian: np.ndarray, terminal: np.ndarray
) -> float:
    """relative_error(jacobian, jacobian_from_terminal(params, terminal)), a block of paths at
    a time: the check of a program that drew its own normals."""
    s = np.asarray(terminal).reshape(-1)
    return _blockwise_error(
        jacobian, s.shape[0], lambda a, b: jacobian_from_terminal(params, s[a:b])
    )


def _blockwise_error(jacobian: np.ndarray, n: int, reference) -> float:
    """relative_error of an (N, 2) Jacobian against reference(a, b), the float64 reference of
    paths [a, b), taken CHECK_BLOCK paths at a time."""
    j = np.asarray(jacobian)
    if j.shape != (n, 2):
        raise ValueError(f"shape {j.shape} does not match reference {(n, 2)}")
    diff, scale = np.zeros(2), np.zeros(2)
    for start in range(0, n, CHECK_BLOCK):
        stop = min(start + CHECK_BLOCK, n)
        r = reference(start, stop)
        diff = np.maximum(diff, np.max(np.abs(j[start:stop].astype(np.float64) - r), axis=0))
        scale = np.maximum(scale, np.max(np.abs(r), axis=0))
    scale[scale == 0] = 1.0
    return float(np.max(diff / scale))


def terminal_closed_form(case: GBMCase) -> np.ndarray:
    """S_T in float64 from the case's normals."""
    p, w_t = _float64(case)
    return _terminal(p, w_t)


def _terminal(p: GBMParams, w_t: np.ndarray) -> np.ndarray:
    return p.spot * np.exp((p.drift - 0.5 * p.vol**2) * p.maturity + p.vol * w_t)


def jacobian_closed_form(case: GBMCase) -> np.ndarray:
    """dS_T/d(spot, vol) in float64, shape (N, 2): (S_T / S0, S_T * (W_T - sigma T))."""
    p, w_t = _float64(case)
    return _jacobian(p, w_t)


def _jacobian(p: GBMParams, w_t: np.ndarray) -> np.ndarray:
    s_t = _terminal(p, w_t)
    return np.stack([s_t / p.spot, s_t * (w_t - p.vol * p.maturity)], axis=1)


def hessian_closed_form(case: GBMCase) -> np.ndarray:
    """Per-path second derivatives in float64, shape (N, 3), with X = W_T - sigma T:
    (d2/dS0^2 = 0, d2/dS0 dsigma = X S_T / S0, d2/dsigma^2 = S_T (X^2 - T))."""
    p, w_t = _float64(case)
    s_t = _terminal(p, w_t)
    x = w_t - p.vol * p.maturity
    return np.stack([np.zeros_like(s_t), x * s_t / p.spot, s_t * (x * x - p.maturity)], axis=1)


def implied_brownian(p: GBMParams, terminal: np.ndarray) -> np.ndarray:
    """The terminal driver X with S_T = S0 exp((mu - sigma^2/2) T + sigma X), recovered from S_T.

    Used to check programs that draw their own random numbers (the question's), whose
    normals we never see: their closed-form Jacobian follows from their own S_T.
    """
    s = np.asarray(terminal, dtype=np.float64)
    return (np.log(s / p.spot) - (p.drift - 0.5 * p.vol**2) * p.maturity) / p.vol


def jacobian_from_terminal(p: GBMParams, terminal: np.ndarray) -> np.ndarray:
    """Closed-form Jacobian (N, 2) of a GBM-shaped program from its own terminal values."""
    return _jacobian(p, implied_brownian(p, terminal))


def relative_error(jacobian: np.ndarray, reference: np.ndarray) -> float:
    """Largest error per column scaled by that column's largest magnitude, max over columns.

    Element-wise relative error is meaningless where dS_T/dsigma crosses zero, so each column
    is measured against its own scale.
    """
    j = np.asarray(jacobian, dtype=np.float64)
    r = np.asarray(reference, dtype=np.float64)
    if j.shape != r.shape:
        raise ValueError(f"shape {j.shape} does not match reference {r.shape}")
    scale = np.max(np.abs(r), axis=0)
    scale[scale == 0] = 1.0
    return float(np.max(np.max(np.abs(j - r), axis=0) / scale))


def terminal_without_cumsum(case: GBMCase) -> np.ndarray:
    """S_T of the question's TensorFlow program, in float64 numpy: W is never cumulated, so
    S_T depends on the last increment sqrt(dt) Z_M alone (a different process, for the book)."""
    p = case.params
    t = case.t.astype(np.float64)
    last = np.sqrt(t[-1] - t[-2]) * case.normals[-1].astype(np.float64)
    return p.spot * np.exp((p.drift - 0.5 * p.vol**2) * p.maturity + p.vol * last)
