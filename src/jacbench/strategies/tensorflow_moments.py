"""TensorFlow strategies for the moments problem's wide 3 x n Jacobian."""

from __future__ import annotations

import os
from collections.abc import Callable

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from jacbench.problems.moments import MomentsCase  # noqa: E402
from jacbench.strategies.registry import JacobianResult  # noqa: E402


def f(x):
    return tf.stack([tf.reduce_sum(x**2, -1), tf.reduce_sum(x**3, -1), tf.reduce_sum(x**4, -1)], -1)


def _tape(case: MomentsCase, persistent: bool = False, **kw) -> Callable[[], JacobianResult]:
    x = tf.constant(case.x)

    def run() -> JacobianResult:
        with tf.GradientTape(persistent=persistent) as tape:
            tape.watch(x)
            y = f(x)
        return JacobianResult(np.asarray(tape.jacobian(y, x, **kw)), np.asarray(y))

    return run


def build_tape_jacobian_pfor(case: MomentsCase):
    return _tape(case)


def build_tape_jacobian_loop(case: MomentsCase):
    # Without pfor, jacobian calls tape.gradient once per output: the tape must persist.
    return _tape(case, persistent=True, experimental_use_pfor=False)


def build_batch_jacobian(case: MomentsCase) -> Callable[[], JacobianResult]:
    # batch_jacobian wants a leading batch axis: a single X is a batch of one row.
    single = case.x.ndim == 1
    x = tf.constant(case.x[None, :] if single else case.x)

    def run() -> JacobianResult:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        j, y = np.asarray(tape.batch_jacobian(y, x)), np.asarray(y)
        return JacobianResult(j[0], y[0]) if single else JacobianResult(j, y)

    return run


def build_tape_jacobian_function(case: MomentsCase) -> Callable[[], JacobianResult]:
    # Eager tape.jacobian hands its loop to pfor, which wraps it in a new tf.function on every
    # call: each call traces the loop body and vectorizes it again. Inside one tf.function the
    # tape, pfor's conversion and the graph are built once, on the first (cold) call.
    x = tf.constant(case.x)

    @tf.function
    def jacobian(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        return tape.jacobian(y, x), y

    def run() -> JacobianResult:
        j, y = jacobian(x)
        return JacobianResult(np.asarray(j), np.asarray(y))

    run.traces = jacobian.experimental_get_tracing_count  # how often it was traced: once
    return run
