"""Memory model: the predicted peak resident memory of a strategy at N paths and M steps.

In units of one path array, A = (M+1) * N * itemsize bytes (the simulated paths), a strategy's
working memory beyond its inputs is

    fixed + arrays * A + batch * N * A + chunk * min(chunk_size, N) * A

- ``arrays``: the few path-sized tensors a single pass keeps (forward mode: primal and tangents;
  reverse mode: the tape of one pass);
- ``batch``: vectorized reverse mode holds a batch of N cotangents, each the size of the tape;
- ``chunk``: chunked reverse mode holds chunk_size of them;
- ``fixed``: tracing and compilation (pfor, XLA, inductor) independent of N.

The absolute peak adds the framework's import footprint and the normals. The coefficients are
the mechanism's count of path-sized buffers, rounded against measurements on the reference
machine; tests/test_model.py measures again and requires agreement within a factor of 2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MIB = 2**20

# Resident memory after importing the framework and initialising its CPU backend (measured).
IMPORT_BASE = {"torch": 220 * MIB, "tensorflow": 645 * MIB, "jax": 190 * MIB, "numpy": 30 * MIB}
# Copies of the normals held before the first call: numpy's, plus the framework's own
# (torch.from_numpy shares memory; tf.constant copies, and TensorFlow keeps a second one).
INPUT_COPIES = {"torch": 1.0, "tensorflow": 3.0, "jax": 1.3, "numpy": 1.0}


@dataclass(frozen=True)
class MemoryModel:
    """Coefficients of the working-memory formula (see the module docstring)."""

    arrays: float = 3.0
    batch: float = 0.0
    chunk: float = 0.0
    fixed_mib: float = 0.0

    def working(self, paths: int, steps: int, dtype: str, chunk_size: int = 256) -> int:
        """Predicted peak over the inputs, in bytes."""
        a = (steps + 1) * paths * np.dtype(dtype).itemsize
        return int(
            self.fixed_mib * MIB
            + self.arrays * a
            + self.batch * paths * a
            + self.chunk * min(chunk_size, paths) * a
        )


def inputs_bytes(framework: str, paths: int, steps: int, dtype: str) -> int:
    """The normals, in all the copies a framework holds before the first call."""
    return int(INPUT_COPIES[framework] * steps * paths * np.dtype(dtype).itemsize)


def predict(
    framework: str, name: str, paths: int, steps: int, dtype: str, chunk_size: int = 256
) -> int:
    """Predicted absolute peak RSS in bytes of a registered strategy's worker (or of a
    second-order method's, named "second:<method>")."""
    return (
        IMPORT_BASE[framework]
        + inputs_bytes(framework, paths, steps, dtype)
        + _memory(framework, name, "memory").working(paths, steps, dtype, chunk_size)
    )


def _memory(framework: str, name: str, attribute: str) -> MemoryModel:
    if name.startswith("second:"):
        from jacbench.second import registry as second

        return second.get(framework, name).memory
    from jacbench.strategies import registry

    return getattr(registry.get(framework, name), attribute)


def predict_moments(framework: str, name: str, inputs: int, batch: int, dtype: str) -> int:
    """Predicted absolute peak RSS in bytes for the moments problem (n inputs, B rows).

    The same formula with one "path array" being the E = n * max(B, 1) inputs (steps = 0):
    ``arrays`` counts input-sized buffers, ``batch`` n of them (an n x n matrix per row: the
    basis of forward mode over n inputs, or a dense Hessian). ``name`` is a registered
    strategy or "second:<method>".
    """
    memory = _memory(framework, name, "memory_moments")
    elements = inputs * max(batch, 1)
    size = elements * np.dtype(dtype).itemsize
    working = memory.fixed_mib * MIB + memory.arrays * size + memory.batch * inputs * size
    return int(IMPORT_BASE[framework] + INPUT_COPIES[framework] * size + working)
