"""JAX strategies for the moments problem's wide 3 x n Jacobian, under jit."""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from jacbench.problems.moments import MomentsCase
from jacbench.strategies import devices
from jacbench.strategies.registry import JacobianResult

jax.config.update("jax_enable_x64", True)


def f(x):
    return jnp.stack([jnp.sum(x**2, -1), jnp.sum(x**3, -1), jnp.sum(x**4, -1)], -1)


def _runner(case: MomentsCase, transform) -> Callable[[], JacobianResult]:
    """jit of the transform and f at X on the case's device; numpy on the CPU (the conversion
    blocks), left on a GPU (strategies.devices)."""
    x = devices.jax_put(case.x, case.device)
    jitted = jax.jit(lambda x: (transform(f)(x), f(x)))
    if devices.keeps_results(case.device):
        return lambda: JacobianResult(*jitted(x))

    def run() -> JacobianResult:
        j, y = jitted(x)
        return JacobianResult(np.asarray(j), np.asarray(y))

    return run


def build_jacrev(case: MomentsCase):
    return _runner(case, jax.jacrev)


def build_jacfwd(case: MomentsCase):
    return _runner(case, jax.jacfwd)


def build_vmap_jacrev(case: MomentsCase):
    return _runner(case, lambda g: jax.vmap(jax.jacrev(g)))
