"""Simulation baselines that measure drawing the random numbers.

A path-blocked strategy and its blocked simulation draw their normals block by block from
numpy's stream (strategies.blocked): at N = 10^6 and M = 52 that is 5.2 x 10^7 normals, a
large share of a blocked simulation's time. Two kinds of baseline say how large:

``simulation:blocked-draws`` (torch, tensorflow, jax: every framework with blocked strategies)
    draws the normals alone, through the very loop of strategies.blocked (same block size, same
    ``case.block_normals`` into one buffer) with no path computed. The drawing is numpy's in all
    three; a row per framework reads each blocked strategy's drawing share against a baseline
    measured under its own framework's thread settings.

``simulation:function-draws``, ``simulation:xla-draws`` and ``simulation:xla-philox-draws``
    (tensorflow) draw the normals inside the compiled function (tf.random.stateless_normal,
    seeded with the case's seed) and simulate from them as the other TensorFlow simulations do.
    Under tf.function(jit_compile=True) the default algorithm ("auto_select") draws far slower
    than in a plain tf.function; naming alg="philox" draws the same numbers at a plain
    tf.function's speed. Their normals are not the case's (nor the stream's), and XLA's are not
    tf.function's: these targets measure drawing inside compiled code, not a path to check.

Nothing here imports a framework until a builder is called. The names are data, in
strategies.catalog, which the registry reads.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from jacbench.strategies import blocked
from jacbench.strategies.catalog import BLOCKED_DRAWS
from jacbench.strategies.catalog import TENSORFLOW_DRAWS as TENSORFLOW


def build_blocked_draws(
    case, execution: str = BLOCKED_DRAWS, block_size: int | None = None
) -> Callable[[], np.ndarray]:
    """The normals of every block drawn as the blocked simulations draw them, nothing else done.

    Returns the (N,) normals of the last step: a copy of B values a block, so the call's time
    is the drawing's, and a result that is checked against the stream.
    """
    del execution  # one way to draw in every framework: numpy's stream
    return blocked.simulation_runner(case, lambda z: (z[-1],), block_size)


def build_tensorflow_draws(case, execution: str) -> Callable[[], np.ndarray]:
    """S_T (N,) from normals drawn inside one tf.function (jit_compile per TENSORFLOW)."""
    import tensorflow as tf

    from jacbench.strategies.tensorflow_gbm import simulate

    jit_compile, alg = TENSORFLOW[execution]
    p = case.params
    dtype = tf.as_dtype(p.dtype)
    shape = (p.steps, p.paths)

    # Every input is an argument: a draw from a constant seed is itself a constant, which
    # Grappler or XLA could fold at compile time, and the call would then draw nothing.
    @tf.function(jit_compile=jit_compile)
    def sim(spot, vol, t, drift, seed):
        z = tf.random.stateless_normal(shape, seed=seed, dtype=dtype, alg=alg)
        return simulate(spot, vol, z, t, drift)

    spot, vol, drift = (tf.constant(v, dtype=dtype) for v in (p.spot, p.vol, p.drift))
    t = tf.constant(case.t)
    seed = tf.constant([p.seed, 0], dtype=tf.int64)
    return lambda: sim(spot, vol, t, drift, seed).numpy()
