import jax
import jax.numpy as jnp

n = 100_000
x = jnp.full((n,), 2.00094)


def f(x):
    return jnp.stack([jnp.sum(x**2), jnp.sum(x**3), jnp.sum(x**4)])


# [answer]
# Reverse mode, one backward pass per output: three give the 3 x n Jacobian.
jacobian = jax.jit(jax.jacrev(f))(x)

# Hessian-vector products, forward over reverse: the three H_k v in one call, never the
# n x n Hessian (jvp pushes v through the reverse-mode Jacobian of f). Each output sums
# terms in one x_i, so each H_k is diagonal and H_k times ones is its whole diagonal.
v = jnp.ones(n)  # any direction gives H_k v; ones give the three Hessians
hvp_of = jax.jit(lambda x, v: jax.jvp(jax.jacrev(f), (x,), (v,))[1])  # compiled once
hvp = hvp_of(x, v)
# [/answer]

assert jnp.allclose(jacobian, jnp.stack([2 * x, 3 * x**2, 4 * x**3]), rtol=1e-5)
assert jnp.allclose(hvp, jnp.stack([2 + 0 * x, 6 * x, 12 * x**2]), rtol=1e-5)
print("JAX: the 3 x n Jacobian and the three Hessians match the closed form")
