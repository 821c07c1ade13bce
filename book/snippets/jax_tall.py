import jax
import jax.numpy as jnp
import numpy as np

N, M, T = 10_000, 52, 1.0  # paths, steps, years
z = jnp.asarray(np.random.default_rng(1234).standard_normal((M, N)).astype("f4"))
t = jnp.linspace(0.0, T, M + 1)


def simulate(spot, vol, z, drift=0.03):
    """S_T of every path. The normals come in as an argument: closed over, jit
    would fold the whole simulation into constants."""
    dw = jnp.sqrt(jnp.diff(t))[:, None] * z
    w = jnp.concatenate([jnp.zeros((1, N)), dw]).cumsum(axis=0)
    return (spot * jnp.exp((drift - 0.5 * vol**2) * t[:, None] + vol * w))[-1]


# [answer]
# Forward mode: one Jacobian-vector product per input, compiled once by jit.
jacobian = jax.jit(jax.jacfwd(simulate, argnums=(0, 1)))
d_spot, d_vol = jacobian(100.0, 0.2, z)  # two columns of N values
# [/answer]

s_t = simulate(100.0, 0.2, z)
w_t = (jnp.sqrt(jnp.diff(t))[:, None] * z).sum(axis=0)
assert jnp.allclose(d_spot, s_t / 100.0, rtol=1e-4)
assert jnp.allclose(d_vol, s_t * (w_t - 0.2 * T), rtol=1e-4, atol=1e-2)
print("JAX: the N x 2 Jacobian matches the closed form")
