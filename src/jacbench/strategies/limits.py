"""The machine's limit for a problem: the least work any Jacobian of it must do, timed.

``read`` (numpy, torch, tensorflow, jax)
    GBM: one read of the case's normals, their sum over the steps, (M, N) read and N written.
    The derivative of S_T needs no more: W_T is that sum, weighted. numpy's sum is the
    machine's read; each framework's own, compiled, is its fused read. JAX's is compiled with
    XLA's YNNPACK fusion off: as installed, that fusion makes the sum over the leading axis
    some thirty times slower (the method chapter's YNNPACK section).
    Moments: one read of X and the 3 x n outputs written, X copied into each row.
``dispatch`` (torch, tensorflow, jax)
    An empty compiled call with the same arguments as the strategies' (it returns one element
    of the inputs): what a call costs before it computes anything, the floor of small calls.

Nothing here imports a framework until a builder is called.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

LIMITS = ("read", "dispatch")
# The frameworks that have each limit: numpy has no compiled call to dispatch.
HAS = {"read": ("numpy", "torch", "tensorflow", "jax"), "dispatch": ("torch", "tensorflow", "jax")}
# XLA's option that turns off the fusions it hands to YNNPACK (strategies.jax_gbm.NO_YNN_FUSION).
NO_YNN_FUSION = {"xla_cpu_experimental_ynn_fusion_type": ""}


def inputs(case) -> tuple[np.ndarray, ...]:
    """The arrays a strategy of the case's problem is given: the GBM's spot, vol, normals, grid
    and drift; the moments problem's X."""
    if case.problem == "gbm":
        p = case.params
        return (case.scalar(p.spot), case.scalar(p.vol), case.normals, case.t,
                case.scalar(p.drift))  # fmt: skip
    return (case.x,)


def _reader(total) -> Callable:
    """The read on one array library's arrays, given its sum over the first axis: the GBM's
    normals summed over the steps, or X in each of three rows (a broadcast add, so that no
    library returns a view of X)."""

    def read(*args):
        if len(args) > 1:
            return total(args[2])
        (x,) = args
        return x[None, :] + 0 * x[:3, None]

    return read


def expected(case) -> np.ndarray:
    """The read's result in float64."""
    if case.problem == "gbm":  # summed in float64, with no float64 copy of the normals
        return case.normals.sum(axis=0, dtype=np.float64)
    x = case.x.astype(np.float64)
    return np.repeat(x[None, :], min(3, x.shape[0]), axis=0)


def relative_error(case, result) -> float:
    """The read's largest error against its float64 result, scaled by that result's largest
    magnitude (a sum of 52 normals in float32 rounds at about 1e-6 of it)."""
    ref = expected(case)
    got = np.asarray(result, dtype=np.float64).reshape(ref.shape)
    return float(np.max(np.abs(got - ref)) / max(np.max(np.abs(ref)), 1e-300))


def build(framework: str, name: str, case) -> Callable[[], object]:
    """A no-argument call of the limit in the framework, on the case's inputs."""
    return {"numpy": _numpy, "torch": _torch, "tensorflow": _tensorflow, "jax": _jax}[framework](
        name, inputs(case)
    )


def _numpy(name: str, args: tuple) -> Callable[[], np.ndarray]:
    read = _reader(lambda z: z.sum(axis=0))
    return lambda: read(*args)


def _first(*args):
    """One element of the inputs: what the dispatch floor's call returns."""
    return args[2][0, 0] if len(args) > 1 else args[0][0]


def _torch(name: str, args: tuple) -> Callable[[], np.ndarray]:
    import torch

    tensors = tuple(torch.from_numpy(np.asarray(a)) for a in args)
    read = _reader(lambda z: z.sum(0))
    fn = torch.compile(read if name == "read" else _first, dynamic=False)
    return lambda: fn(*tensors).numpy()


def _tensorflow(name: str, args: tuple) -> Callable[[], np.ndarray]:
    import tensorflow as tf

    tensors = tuple(tf.constant(a) for a in args)
    read = _reader(lambda z: tf.reduce_sum(z, axis=0))
    fn = tf.function(read if name == "read" else _first, jit_compile=True)
    return lambda: fn(*tensors).numpy()


def _jax(name: str, args: tuple) -> Callable[[], np.ndarray]:
    import jax

    arrays = tuple(jax.device_put(a) for a in args)
    options = {"compiler_options": NO_YNN_FUSION} if name == "read" else {}
    read = _reader(lambda z: z.sum(0))
    fn = jax.jit(read if name == "read" else _first, **options)
    return lambda: np.asarray(fn(*arrays))
