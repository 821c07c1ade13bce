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


def build_hvp(case: MomentsCase) -> Callable[[], np.ndarray]:
    x, v = tf.constant(case.x), tf.constant(moments.direction(case))

    def run() -> np.ndarray:
        out = []
        for k in range(3):
            with tf.autodiff.ForwardAccumulator(primals=x, tangents=v) as acc:
                with tf.GradientTape() as tape:
                    tape.watch(x)
                    y = f(x)[k]
                g = tape.gradient(y, x)
            out.append(acc.jvp(g).numpy())
        return np.stack(out)

    return run


def build_greeks(case: GBMCase) -> Callable[[], np.ndarray]:
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
