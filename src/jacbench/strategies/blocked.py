"""The loop over blocks of paths that every path-blocked strategy shares (numpy only).

Paths are independent, so the N x 2 Jacobian of N paths is N / B Jacobians of B paths, stacked.
A path-blocked strategy fills one (M, B) buffer with the normals of paths [a, a + B), computes
S_T and its two derivative columns for those paths with its framework, and writes them into the
(N,) and (N, 2) results; then the next block. Nothing of size M x N is ever held: at N = 10^8,
M = 52 in float32 one path array is 21.2 GB, one block's 14 MB (B = 65,536 paths, the default).

The normals: a case that holds its normals (make_case's, as every other strategy gets) gives
each block its slice of them, so at the sizes of the tests a blocked strategy computes what its
unblocked twin computes, up to rounding. A streamed case (the harness makes one for every blocked
target, and ``jacbench jacobian`` for a blocked strategy) holds none: each block's normals are
drawn from the stream of problems.gbm.stream_normals, which depends on the seed and the path's
index only, and the closed-form check reads the same stream. So a blocked strategy's time
includes drawing its normals, and so does its blocked simulation's, its baseline: in a ratio
both sides draw the same numbers.

The block: B paths, from the memory budget of the case's ``chunk_size`` in MiB (256 by default)
by strategies.memory_model.block_paths, or ``block_size`` given to the builder. The Jacobian
and its simulation run on the same blocks.

The paths themselves are not kept: keeping them, as the question's program does, would cost
the (M+1) x N path array (21.2 GB at N = 10^8 in float32), which is what the blocks avoid; a
caller that wants them for later use is better served by keeping the seed and redrawing a
block's paths from the stream when it needs them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from jacbench.strategies.memory_model import block_paths

# step(z) with z the (M, B) normals of one block: numpy arrays, the first its S_T (B,), then,
# for a Jacobian, the two derivative columns dS_T/dspot and dS_T/dvol (B,).
Step = Callable[[np.ndarray], Sequence[np.ndarray]]


def block_size(case, requested: int | None = None) -> int:
    """B: the requested size, or the memory model's for the case's budget (chunk_size MiB)."""
    p = case.params
    if requested is not None:
        if requested < 1:
            raise ValueError(f"block_size must be at least 1, got {requested}")
        return min(requested, p.paths)
    return block_paths(p.paths, p.steps, p.dtype, p.chunk_size)


def blocks(paths: int, size: int) -> list[tuple[int, int]]:
    """The blocks [start, stop) of paths, all of the size but the last."""
    return [(a, min(a + size, paths)) for a in range(0, paths, size)]


def run(case, step: Step, out: Sequence[np.ndarray], size: int, pad: bool) -> None:
    """Call step on every block, writing its outputs into the (N,) arrays (or columns) out.

    pad: step always gets the full (M, B) buffer (the last block zero-padded), for a compiled
    step that would otherwise be compiled again for the last block's shape; else the last block
    gets its own columns only.
    """
    buffer = np.empty((case.params.steps, size), dtype=case.dtype)

    def values(block: int, start: int, stop: int) -> Sequence[np.ndarray]:
        case.block_normals(start, stop, out=buffer)
        return step(buffer if pad else buffer[:, : stop - start])

    _fill(case.params.paths, size, out, values)


def _fill(n: int, size: int, out: Sequence[np.ndarray], values) -> None:
    """Write values(block, start, stop), each block's outputs, into the (N,) arrays out."""
    for block, (start, stop) in enumerate(blocks(n, size)):
        for column, value in zip(out, values(block, start, stop), strict=True):
            column[start:stop] = np.asarray(value).reshape(-1)[: stop - start]


# Paths one call of a loop that draws its own normals computes (catalog.DRAWN): its state is a
# few arrays of B values, and its normals, drawn a step at a time inside, one more.
DRAWN_BLOCK = 1 << 18


def drawn_runner(case, step: Callable[[int], Sequence[np.ndarray]], jacobian: bool = True):
    """A call of a loop that draws its own normals inside (catalog.DRAWN), DRAWN_BLOCK paths at
    a time: step(b) computes block b's S_T (and, for a Jacobian, its two derivative columns)
    for a whole block, drawing block b's normals; the last block's extra paths are cut."""
    from jacbench.strategies.registry import JacobianResult

    n = case.params.paths
    size = min(DRAWN_BLOCK, n)

    def call():
        s = np.empty(n, dtype=case.dtype)
        if not jacobian:
            _fill(n, size, (s,), lambda b, *_: step(b))
            return s
        j = np.empty((n, 2), dtype=case.dtype)
        _fill(n, size, (s, j[:, 0], j[:, 1]), lambda b, *_: step(b))
        return JacobianResult(j, s)

    return call


def jacobian_runner(case, step: Step, requested: int | None = None, pad: bool = False):
    """A strategy's call: the Jacobian (N, 2) and S_T (N,) assembled block by block."""
    from jacbench.strategies.registry import JacobianResult

    size = block_size(case, requested)

    def call() -> JacobianResult:
        # Written in place: the result is the only N-sized memory (3 values a path).
        s = np.empty(case.params.paths, dtype=case.dtype)
        j = np.empty((case.params.paths, 2), dtype=case.dtype)
        run(case, step, (s, j[:, 0], j[:, 1]), size, pad)
        return JacobianResult(j, s)

    return call


def simulation_runner(case, step: Step, requested: int | None = None, pad: bool = False):
    """A blocked simulation's call: S_T (N,) block by block."""
    size = block_size(case, requested)

    def call() -> np.ndarray:
        s = np.empty(case.params.paths, dtype=case.dtype)
        run(case, step, (s,), size, pad)
        return s

    return call
