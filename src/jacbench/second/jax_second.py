"""Second-order methods in JAX under jit, as builders: build_NAME(case) -> callable."""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from jacbench.problems import moments
from jacbench.problems.gbm import GBMCase
from jacbench.problems.moments import MomentsCase
from jacbench.strategies import jax_gbm
from jacbench.strategies.jax_moments import f

jax.config.update("jax_enable_x64", True)

_hessian = jax.jit(jax.hessian(f))


@jax.jit
def _hvp(x, v):
    return jnp.stack([jax.jvp(jax.grad(lambda x, k=k: f(x)[k]), (x,), (v,))[1] for k in range(3)])


def build_hessian(case: MomentsCase) -> Callable[[], np.ndarray]:
    x = jnp.asarray(case.x)
    return lambda: np.asarray(_hessian(x))


def build_hvp(case: MomentsCase) -> Callable[[], np.ndarray]:
    x, v = jnp.asarray(case.x), jnp.asarray(moments.direction(case))
    return lambda: np.asarray(_hvp(x, v))


def build_diagonal(case: MomentsCase) -> Callable[[], np.ndarray]:
    x = jnp.asarray(case.x)
    ones = jnp.ones_like(x)
    return lambda: np.asarray(_hvp(x, ones))


@jax.jit
def _greeks(spot, vol, z, t, drift):
    n = z.shape[1]

    def pathwise(sp, vp):
        return jax.grad(lambda a, b: jax_gbm.simulate(a, b, z, t, drift).sum(), argnums=(0, 1))(
            sp, vp
        )

    sp, vp = jnp.full((n,), spot), jnp.full((n,), vol)
    _, (d_spot_vol, d_vol_vol) = jax.jvp(
        pathwise, (sp, vp), (jnp.zeros_like(sp), jnp.ones_like(vp))
    )
    return jnp.stack([d_spot_vol, d_vol_vol], axis=1)


def build_greeks(case: GBMCase) -> Callable[[], np.ndarray]:
    args = jax_gbm._args(case)
    return lambda: np.asarray(_greeks(*args))
