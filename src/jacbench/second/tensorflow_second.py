"""Second-order methods in TensorFlow."""

from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from jacbench.problems.gbm import GBMCase  # noqa: E402
from jacbench.strategies import tensorflow_gbm  # noqa: E402
from jacbench.strategies.tensorflow_moments import f  # noqa: E402


def nested_tapes(x: np.ndarray) -> np.ndarray:
    xt = tf.constant(x)
    out = []
    for k in range(3):
        with tf.GradientTape() as outer:
            outer.watch(xt)
            with tf.GradientTape() as inner:
                inner.watch(xt)
                y = f(xt)[k]
            g = inner.gradient(y, xt)
        out.append(outer.jacobian(g, xt).numpy())
    return np.stack(out)


def hvp(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    xt, vt = tf.constant(x), tf.constant(v)
    out = []
    for k in range(3):
        with tf.autodiff.ForwardAccumulator(primals=xt, tangents=vt) as acc:
            with tf.GradientTape() as tape:
                tape.watch(xt)
                y = f(xt)[k]
            g = tape.gradient(y, xt)
        out.append(acc.jvp(g).numpy())
    return np.stack(out)


def greeks(case: GBMCase) -> np.ndarray:
    x = tensorflow_gbm._Inputs(case)
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
