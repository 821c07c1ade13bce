"""Second-order methods in JAX, under jit."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jacbench.problems.gbm import GBMCase
from jacbench.strategies import jax_gbm
from jacbench.strategies.jax_moments import f

jax.config.update("jax_enable_x64", True)


def hessian(x: np.ndarray) -> np.ndarray:
    return np.asarray(jax.jit(jax.hessian(f))(jnp.asarray(x)))


@jax.jit
def _hvp(x, v):
    return jnp.stack([jax.jvp(jax.grad(lambda x, k=k: f(x)[k]), (x,), (v,))[1] for k in range(3)])


def hvp(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    return np.asarray(_hvp(jnp.asarray(x), jnp.asarray(v)))


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


def greeks(case: GBMCase) -> np.ndarray:
    return np.asarray(_greeks(*jax_gbm._args(case)))
