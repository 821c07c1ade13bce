"""Memory model: the predicted peak resident memory of a strategy's worker.

In units of one path array, A = (M+1) * N * itemsize bytes (the simulated paths), a strategy's
working memory beyond its inputs is

    fixed + arrays * A + batch * N * A + chunk * min(chunk_size, N) * A

- ``arrays``: the few path-sized tensors a single pass keeps (forward mode: primal and tangents;
  reverse mode: the tape of one pass);
- ``batch``: vectorized reverse mode holds a batch of N cotangents, each the size of the tape;
- ``chunk``: chunked reverse mode holds chunk_size of them;
- ``fixed``: tracing and compilation (pfor, XLA, inductor) independent of N.

A path-blocked strategy holds no (M, N) array: it draws the normals and differentiates one
block of B paths at a time, B = :func:`block_paths` (a budget of ``chunk_size`` MiB for
BLOCK_ARRAYS path arrays of B paths). Its working memory is

    fixed + block * A_B + 3 * N * itemsize

with A_B = (M+1) * B * itemsize and the last term its result, J (N, 2) and S_T (N,): flat in N
but for the result, which is 3 / (M+1) of one path array (5.7% at M = 52). It has no inputs.

A strategy written over the time steps holds no path array either: its state, tangents or
the like are ``vectors`` arrays of N values (one value a path), so its working memory is
``fixed + vectors * N * itemsize`` beside the normals it reads. One that draws its normals
inside the loop (``holds_inputs`` false) has no inputs at all.

For the moments problems one "path array" is the E = n * max(B, 1) inputs (steps = 0):
``arrays`` counts input-sized buffers, ``batch`` n of them (an n x n matrix per row: the basis
of forward mode over n inputs, or a dense Hessian).

The absolute peak adds the framework's import footprint and the inputs. The coefficients are
the mechanism's count of path-sized buffers, rounded against measurements on the reference
machine; tests/test_model.py measures again and requires agreement within a factor of 2.
This module is a leaf: records import it, and it imports nothing of jacbench's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_MIB = 2**20  # the unit of fixed_mib and of the import footprints below

# Resident memory after importing the framework and initialising its CPU backend (measured).
IMPORT_BASE_MIB = {"torch": 220, "tensorflow": 645, "jax": 190, "numpy": 30}
# Copies of the inputs held before the first call: numpy's, plus the framework's own
# (torch.from_numpy shares memory; tf.constant copies, and TensorFlow keeps a second one).
INPUT_COPIES = {"torch": 1.0, "tensorflow": 3.0, "jax": 1.3, "numpy": 1.0}

# Path arrays of B paths that a block's budget is divided by, the same for every blocked
# strategy and simulation so that a Jacobian and its simulation run on the same blocks. What a
# blocked pass keeps resident is its own ``block`` coefficient: from 9 to 32 such arrays measured
# under glibc's allocator, which keeps freed blocks for the next one (so 256 MiB gives a working
# set of 115 to 420 MiB).
BLOCK_ARRAYS = 16
# A block of at least this many paths is a multiple of it: the stream draws the normals in
# groups of this size (problems.gbm.STREAM_GROUP, kept equal by a test).
BLOCK_ROUND = 16_384
# Values per path in a blocked strategy's result: J (N, 2) and S_T (N,).
RESULT_VALUES = 3


def block_paths(paths: int, steps: int, dtype: str, budget_mib: float) -> int:
    """Paths B of one block: BLOCK_ARRAYS arrays of (M+1) x B values within budget_mib MiB,
    rounded down to a multiple of BLOCK_ROUND when at least that, at most N, at least 1."""
    per_path = BLOCK_ARRAYS * (steps + 1) * np.dtype(dtype).itemsize
    b = max(1, int(budget_mib * _MIB // per_path))
    if b >= BLOCK_ROUND:
        b -= b % BLOCK_ROUND
    return min(b, paths)


@dataclass(frozen=True)
class MemoryModel:
    """Coefficients of the working-memory formula (see the module docstring)."""

    arrays: float = 3.0
    batch: float = 0.0
    chunk: float = 0.0
    fixed_mib: float = 0.0
    block: float = 0.0  # path arrays of one block of paths: a path-blocked strategy
    vectors: float = 0.0  # arrays of N values (one a path): a strategy over the time steps
    holds_inputs: bool = True  # False: it draws its normals itself, the case holds none

    @property
    def blocked(self) -> bool:
        """A path-blocked strategy's model: no inputs held, chunk_size is its block budget."""
        return self.block > 0

    def working(self, paths: int, steps: int, dtype: str, chunk_size: int = 256) -> int:
        """Predicted peak over the inputs, in bytes (GBM: N paths, M steps)."""
        itemsize = np.dtype(dtype).itemsize
        a = (steps + 1) * paths * itemsize
        blocked = 0.0
        if self.blocked:
            a_block = (steps + 1) * block_paths(paths, steps, dtype, chunk_size) * itemsize
            blocked = self.block * a_block + RESULT_VALUES * paths * itemsize
        return int(
            self.fixed_mib * _MIB
            + self.arrays * a
            + self.batch * paths * a
            + self.chunk * min(chunk_size, paths) * a
            + self.vectors * paths * itemsize
            + blocked
        )

    def peak(
        self, framework: str, paths: int, steps: int, dtype: str, chunk_size: int = 256
    ) -> int:
        """Predicted absolute peak RSS in bytes of a worker running the GBM problem."""
        inputs = INPUT_COPIES[framework] * steps * paths * np.dtype(dtype).itemsize
        if self.blocked or not self.holds_inputs:
            inputs = 0  # the normals are drawn a block at a time, or inside the loop
        working = self.working(paths, steps, dtype, chunk_size)
        return int(IMPORT_BASE_MIB[framework] * _MIB + inputs + working)

    def peak_moments(self, framework: str, inputs: int, batch: int, dtype: str) -> int:
        """Predicted absolute peak RSS in bytes for the moments problems (n inputs, B rows).

        The batch term is n x n per row, so it scales with n, not with n * B: the GBM formula
        with one path array of n * B elements would not fit without another parameter.
        """
        size = inputs * max(batch, 1) * np.dtype(dtype).itemsize
        working = self.fixed_mib * _MIB + self.arrays * size + self.batch * inputs * size
        return int(IMPORT_BASE_MIB[framework] * _MIB + INPUT_COPIES[framework] * size + working)
