"""The Heston model by an Euler scheme with full truncation: a reader's model for ``jacbench
advise`` in JAX, with stochastic variance, kinks at v = 0 and no closed form, so the book can
advise on a model whose derivatives are checked only by finite differences.

``value(theta, data)`` is the FUNCTION (y = S_T per path) and ``example(n)`` the FACTORY.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

STEPS = 52  # weekly steps
MATURITY = 1.0  # years
RATE = 0.03
RHO = -0.7  # correlation of the spot's and the variance's shocks
SEED = 20241
# theta = (S0, v0, kappa, theta_v, xi): spot, initial variance, mean reversion, long-run
# variance, vol of variance. Feller's condition fails (2 kappa theta_v = 0.12 < xi^2 = 0.25),
# so some paths reach v <= 0 and the truncation max(v, 0) is hit.
THETA = (100.0, 0.04, 1.5, 0.04, 0.5)


def _sqrt_positive(v):
    """sqrt(max(v, 0)) with a finite derivative where v <= 0 (zero there).

    jnp.sqrt(jnp.maximum(v, 0)) gives NaN derivatives on any path that was truncated: the
    tangent of max(v, 0) is 0 there and sqrt's derivative at 0 is infinite, and 0 * inf is NaN.
    The two where calls keep sqrt away from 0 on the branch that is thrown away.
    """
    positive = v > 0
    return jnp.where(positive, jnp.sqrt(jnp.where(positive, v, 1.0)), 0.0)


def value(theta, data):
    """S_T per path, shape (n,); theta = (S0, v0, kappa, theta_v, xi), data normals (n, M, 2).

    The steps are a jax.lax.scan: jit compiles one step, where a Python loop would unroll all
    52 copies of it into the graph (and differentiating that under vmap took minutes)."""
    spot0, var0, kappa, long_var, xi = theta[0], theta[1], theta[2], theta[3], theta[4]
    n, steps = data.shape[0], data.shape[1]
    dt = MATURITY / steps
    # Python floats, not numpy's: they keep the arrays' float32 when x64 is on (numpy's
    # float64 scalars would promote the whole simulation to float64).
    mix = math.sqrt(1.0 - RHO**2)

    def step(state, z):
        spot, var = state
        var_plus = jnp.maximum(var, 0.0)
        root = _sqrt_positive(var) * math.sqrt(dt)  # sqrt(v_plus dt)
        spot = spot * jnp.exp((RATE - 0.5 * var_plus) * dt + root * z[:, 0])
        var = var + kappa * (long_var - var_plus) * dt + xi * root * (RHO * z[:, 0] + mix * z[:, 1])
        return (spot, var), None

    start = (jnp.broadcast_to(spot0, (n,)), jnp.broadcast_to(var0, (n,)))
    (spot, _), _ = jax.lax.scan(step, start, jnp.swapaxes(data, 0, 1))
    return spot


def variance_paths(theta, data) -> np.ndarray:
    """The variance v_t before each step, shape (n, M), in numpy: for finding paths near v = 0."""
    theta = np.asarray(theta, dtype=np.float64)
    data = np.asarray(data, dtype=np.float64)
    _, var0, kappa, long_var, xi = theta
    n, steps = data.shape[0], data.shape[1]
    dt = MATURITY / steps
    var = np.full(n, var0)
    out = np.empty((n, steps))
    for t in range(steps):
        out[:, t] = var
        var_plus = np.maximum(var, 0.0)
        shock = RHO * data[:, t, 0] + np.sqrt(1.0 - RHO**2) * data[:, t, 1]
        var = var + kappa * (long_var - var_plus) * dt + xi * np.sqrt(var_plus * dt) * shock
    return out


def example(n: int):
    """(theta, z): the five inputs and the normals (n, M, 2), float32; the same on every call."""
    z = np.random.default_rng(SEED).standard_normal((n, STEPS, 2))
    return jnp.asarray(THETA, dtype=jnp.float32), jnp.asarray(z, dtype=jnp.float32)
