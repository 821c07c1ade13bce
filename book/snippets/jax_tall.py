import jax
import jax.numpy as jnp
import numpy as np

N, M, dt = 10_000, 52, 1.0 / 52  # paths, steps, years a step
z = jnp.asarray(np.random.default_rng(1234).standard_normal((M, N)).astype("f4"))


def step(y, vol, z_k, drift=0.03):
    """One time step of y = log(S / S0): each step reads one row of normals."""
    return y + (drift - 0.5 * vol**2) * dt + vol * jnp.sqrt(dt) * z_k


# [answer]
@jax.jit  # the normals come in as an argument: closed over, jit would fold them
def jacobian(spot, vol, z):
    """Forward mode carried along the steps: vol's tangent rides beside log S."""
    def body(carry, z_k):
        y, dy = carry
        return jax.jvp(lambda y, v: step(y, v, z_k), (y, vol), (dy, 1.0)), None

    (y, dy), _ = jax.lax.scan(body, (jnp.zeros(N), jnp.zeros(N)), z)
    s_t, d_vol = jax.jvp(lambda y: spot * jnp.exp(y), (y,), (dy,))
    _, d_spot = jax.jvp(lambda s: s * jnp.exp(y), (spot,), (1.0,))
    return jnp.stack([d_spot, d_vol], axis=1)  # N x 2: dS_T/dspot, dS_T/dvol
# [/answer]

w_t, T = jnp.sqrt(dt) * z.sum(axis=0), M * dt
s_t = 100.0 * jnp.exp((0.03 - 0.5 * 0.2**2) * T + 0.2 * w_t)
closed = jnp.stack([s_t / 100.0, s_t * (w_t - 0.2 * T)], axis=1)
assert jnp.allclose(jacobian(100.0, 0.2, z), closed, rtol=1e-4, atol=1e-2)
print("JAX: the N x 2 Jacobian matches the closed form")
