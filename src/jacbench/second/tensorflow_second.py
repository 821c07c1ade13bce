"""Second-order methods in TensorFlow, as builders: build_NAME(case) -> no-argument callable."""

from __future__ import annotations

import os
from collections.abc import Callable

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from jacbench.problems import moments  # noqa: E402
from jacbench.problems.gbm import GBMCase  # noqa: E402
from jacbench.problems.moments import MomentsCase  # noqa: E402
from jacbench.strategies import tensorflow_gbm  # noqa: E402
from jacbench.strategies.tensorflow_moments import f  # noqa: E402


def build_nested_tapes(case: MomentsCase) -> Callable[[], np.ndarray]:
    x = tf.constant(case.x)

    def run() -> np.ndarray:
        out = []
        for k in range(3):
            with tf.GradientTape() as outer:
                outer.watch(x)
                with tf.GradientTape() as inner:
                    inner.watch(x)
                    y = f(x)[k]
                g = inner.gradient(y, x)
            out.append(outer.jacobian(g, x).numpy())
        return np.stack(out)

    return run


def hvp_forward_over_reverse(x, v, fn=f):
    """H_k v for the three outputs at once, (3, n): a ForwardAccumulator carrying v around a
    tape whose jacobian (pfor over the three outputs' backward passes) it differentiates."""
    with tf.autodiff.ForwardAccumulator(primals=x, tangents=v) as acc:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = fn(x)
        jacobian = tape.jacobian(y, x)
    return acc.jvp(jacobian)


def hvp_reverse_over_reverse(x, v, fn=f):
    """H_k v as the reverse Jacobian of J(x) v, (3, n): an outer tape over an inner one."""
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = fn(x)
        jv = tf.linalg.matvec(inner.jacobian(y, x), v)
    return outer.jacobian(jv, x)


def hutchinson(x, probes, fn=f):
    """Hutchinson's estimate of diag(H_k), (3, n): the mean of v * (H_k v) over the probes,
    one product at a time, summed as they come (tf.foldl: a loop in the graph, not unrolled,
    holding one product, not all)."""
    first = probes[0] * hvp_forward_over_reverse(x, probes[0], fn)
    total = tf.foldl(lambda total, v: total + v * hvp_forward_over_reverse(x, v, fn),
                     probes[1:], initializer=first)  # fmt: skip
    return total / tf.cast(tf.shape(probes)[0], total.dtype)


# Each inside one tf.function, traced on the first (cold) call: eager, tape.jacobian's pfor
# would trace and vectorize its loop again on every call (tensorflow_moments).
_forward_over_reverse = tf.function(hvp_forward_over_reverse)
_reverse_over_reverse = tf.function(hvp_reverse_over_reverse)
_hutchinson = tf.function(hutchinson)


def _products(case: MomentsCase, traced) -> Callable[[], np.ndarray]:
    x, v = tf.constant(case.x), tf.constant(moments.direction(case))
    return lambda: traced(x, v).numpy()


def build_hvp_forward_over_reverse(case: MomentsCase) -> Callable[[], np.ndarray]:
    return _products(case, _forward_over_reverse)


def build_hvp_reverse_over_reverse(case: MomentsCase) -> Callable[[], np.ndarray]:
    return _products(case, _reverse_over_reverse)


def build_diagonal_hutchinson(case: MomentsCase) -> Callable[[], np.ndarray]:
    x, probes = tf.constant(case.x), tf.constant(moments.probes(case))
    return lambda: _hutchinson(x, probes).numpy()


def build_per_path_second(case: GBMCase) -> Callable[[], np.ndarray]:
    x = tensorflow_gbm._Inputs(case)

    def run() -> np.ndarray:
        spot = tf.fill([x.n], x.spot)
        vol = tf.fill([x.n], x.vol)
        with tf.autodiff.ForwardAccumulator(
            primals=[spot, vol], tangents=[tf.zeros_like(spot), tf.ones_like(vol)]
        ) as acc:
            with tf.GradientTape() as tape:
                tape.watch([spot, vol])
                total = tf.reduce_sum(x.f(spot, vol))
            d_spot, d_vol = tape.gradient(total, [spot, vol])
        return np.stack([acc.jvp(d_spot).numpy(), acc.jvp(d_vol).numpy()], axis=1)

    return run
