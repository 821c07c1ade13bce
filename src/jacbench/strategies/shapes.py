"""The crossover's two modes in each framework: the (m, n) Jacobian of tanh(W x).

Forward mode pushes the n unit tangents through in one vectorized pass; reverse mode pulls the
m unit cotangents back in one; each compiled or traced once where the framework can (jax.jit,
tf.function), eager in PyTorch. Frameworks are imported only when a builder is called.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

from jacbench.problems import shapes
from jacbench.problems.shapes import ShapesCase

MODES = ("forward", "reverse")


def build(framework: str, mode: str, case: ShapesCase) -> Callable[[], np.ndarray]:
    """A callable computing the (m, n) Jacobian of tanh(W x) by forward or reverse mode."""
    w, x = case.w, case.x
    if framework == "torch":
        import torch

        wt, xt = torch.from_numpy(w), torch.from_numpy(x)
        transform = torch.func.jacfwd if mode == "forward" else torch.func.jacrev
        jac = transform(lambda v: torch.tanh(wt @ v))
        return lambda: jac(xt).numpy()
    if framework == "jax":
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)  # float64 inputs stay float64
        wj, xj = jnp.asarray(w), jnp.asarray(x)
        transform = jax.jacfwd if mode == "forward" else jax.jacrev
        jac = jax.jit(transform(lambda v, w: jnp.tanh(w @ v)))
        return lambda: np.asarray(jac(xj, wj))
    if framework == "tensorflow":
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow as tf

        wt, xt = tf.constant(w), tf.constant(x)

        def f(v):
            return tf.tanh(tf.linalg.matvec(wt, v))

        # Each mode inside one tf.function, traced on the first call: eagerly, pfor (behind
        # both GradientTape.jacobian and vectorized_map) traces and vectorizes anew on every
        # call, and that overhead, not the modes' arithmetic, would be what the crossover timed.
        if mode == "reverse":

            @tf.function
            def rev(v):
                with tf.GradientTape() as tape:
                    tape.watch(v)
                    y = f(v)
                return tape.jacobian(y, v)

            return lambda: rev(xt).numpy()

        def column(e):
            with tf.autodiff.ForwardAccumulator(primals=xt, tangents=e) as acc:
                y = f(xt)
            return acc.jvp(y)

        basis = tf.eye(x.shape[0], dtype=wt.dtype)

        @tf.function
        def fwd(basis):
            # pfor over the n unit tangents: n JVPs in one vectorized pass.
            return tf.transpose(tf.vectorized_map(column, basis))

        return lambda: fwd(basis).numpy()
    if framework == "numpy":
        return lambda: shapes.jacobian_closed_form(w, x).astype(w.dtype)
    raise ValueError(f"unknown framework {framework!r}")
