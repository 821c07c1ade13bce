"""JAX's generic records: the Jacobian (order 1) or Hessian (order 2) of any f(theta, data).

Every compiled record jits once at module level and passes data to the jitted function as an
argument: a jit that closes over arrays makes them constants, and XLA constant-folds them. The
per-row records find the rows inside the jit, from shapes, which are static there.
"""

from __future__ import annotations

from jacbench.strategies.generic.record import Generic

_VJP_LOOP = '''\
import functools

import jax
import jax.numpy as jnp


@jax.jit
def _compiled(theta, data):
    """One forward pass, then a compiled loop of one pullback per output."""
    y, pullback = jax.vjp(lambda t: f(t, data), theta)

    def row(i, jac):
        unit = jnp.zeros(y.size, y.dtype).at[i].set(1).reshape(y.shape)
        return jac.at[i].set(pullback(unit)[0])

    jac = jnp.zeros((y.size, theta.size), theta.dtype)
    return jax.lax.fori_loop(0, y.size, row, jac)


@functools.partial(jax.jit, donate_argnums=3)  # row i written in place
def _set_row(pullback, y, i, jac):
    unit = jnp.zeros(y.size, y.dtype).at[i].set(1).reshape(y.shape)
    return jac.at[i].set(pullback(unit)[0])


def _eager(theta, data):
    """The same loop for an f jit cannot trace: the forward pass eager, in Python."""
    y, pullback = jax.vjp(lambda t: f(t, data), theta)
    jac = jnp.zeros((y.size, theta.size), theta.dtype)
    for i in range(y.size):
        jac = _set_row(pullback, y, i, jac)
    return jac


def jacobian(theta, data):
    """Reverse mode, a plain loop: one vjp, then one pullback per output."""
    try:
        return _compiled(theta, data)
    except jax.errors.ConcretizationTypeError:  # a Python branch on a traced value
        return _eager(theta, data)
'''

_JACREV = '''\
import jax


@jax.jit
def jacobian(theta, data):
    """Reverse mode: jax.jacrev, one pullback per output, vectorized and compiled."""
    return jax.jacrev(f)(theta, data).reshape(-1, theta.size)
'''

_JACFWD = '''\
import jax


@jax.jit
def jacobian(theta, data):
    """Forward mode: jax.jacfwd, one tangent per input, vectorized and compiled."""
    return jax.jacfwd(f)(theta, data).reshape(-1, theta.size)
'''

# The rows, shared by the two per-row records: which leaves of data are split by row.
_ROWS = '''\
import jax
import jax.numpy as jnp


def _split(data):
    """True for each leaf of data split by row: led by the largest array's rows."""
    arrays = [x for x in jax.tree_util.tree_leaves(data) if jnp.ndim(x) >= 1]
    rows = jnp.shape(max(arrays, key=jnp.size))[0]
    return jax.tree_util.tree_map(
        lambda x: jnp.ndim(x) >= 1 and jnp.shape(x)[0] == rows, data
    )


def _row_grad(theta, row, split):
    """The gradient of one row's single output, the row given as a batch of one."""
    batch = jax.tree_util.tree_map(lambda s, x: x[None] if s else x, split, row)
    return jax.grad(lambda t: f(t, batch).reshape(()))(theta)
'''

_PER_ROW = (
    _ROWS
    + '''

@jax.jit
def jacobian(theta, data):
    """Pathwise: jax.grad of each row's output, vmapped over the rows and compiled."""
    split = _split(data)
    in_axes = jax.tree_util.tree_map(lambda s: 0 if s else None, split)
    return jax.vmap(lambda row: _row_grad(theta, row, split), in_axes=(in_axes,))(data)
'''
)

_PER_ROW_MAP = (
    _ROWS
    + '''

BATCH_SIZE = 1024  # rows vmapped at a time: memory bounded by one batch


@jax.jit
def jacobian(theta, data):
    """Pathwise: jax.grad of each row's output, jax.lax.map over batches of rows."""
    split = _split(data)
    rows = jax.tree_util.tree_map(lambda s, x: x if s else None, split, data)

    def one(row):
        whole = jax.tree_util.tree_map(lambda s, x, r: r if s else x, split, data, row)
        return _row_grad(theta, whole, split)

    return jax.lax.map(one, rows, batch_size=BATCH_SIZE)
'''
)

# Order 2: f returns one value (any shape of one element); jacobian returns its Hessian.
_HESSIAN_LOOP = '''\
import functools

import jax
import jax.numpy as jnp


def _grad(theta, data):
    return jax.grad(lambda t: f(t, data).reshape(()))(theta)


# One gradient pass, eager, keeping its pullback, applied (compiled once) per input.
def _forward(theta, data):
    return jax.vjp(lambda t: _grad(t, data), theta)


@functools.partial(jax.jit, donate_argnums=2)  # row i written in place
def _set_row(pullback, i, hess):
    unit = jnp.zeros(hess.shape[1], hess.dtype).at[i].set(1)
    return hess.at[i].set(pullback(unit)[0])


def jacobian(theta, data):
    """Reverse over reverse, a plain loop: one vjp of the gradient per Hessian row."""
    _, pullback = _forward(theta, data)
    hess = jnp.zeros((theta.size, theta.size), theta.dtype)
    for i in range(theta.size):
        hess = _set_row(pullback, i, hess)
    return hess
'''

_FORWARD_OVER_REVERSE = '''\
import jax


@jax.jit
def jacobian(theta, data):
    """Forward over reverse: jax.jacfwd of jax.grad, as jax.hessian does, compiled."""
    grad = jax.grad(lambda t, data: f(t, data).reshape(()))
    return jax.jacfwd(grad)(theta, data)
'''

_REVERSE_OVER_REVERSE = '''\
import jax


@jax.jit
def jacobian(theta, data):
    """Reverse over reverse: jax.jacrev of jax.grad, compiled."""
    grad = jax.grad(lambda t, data: f(t, data).reshape(()))
    return jax.jacrev(grad)(theta, data)
'''

_HVP_VMAP = '''\
import jax
import jax.numpy as jnp


def _hvp(theta, data, v):
    """One Hessian-vector product: forward mode (jvp) over the gradient."""
    grad = jax.grad(lambda t: f(t, data).reshape(()))
    return jax.jvp(grad, (theta,), (v,))[1]


@jax.jit
def jacobian(theta, data):
    """Forward over reverse: one jvp of jax.grad per unit vector, vmapped, compiled."""
    eye = jnp.eye(theta.size, dtype=theta.dtype)
    return jax.vmap(_hvp, in_axes=(None, None, 0), out_axes=1)(theta, data, eye)
'''


RECORDS: tuple[Generic, ...] = (
    Generic(
        framework="jax",
        name="vjp-loop",
        mode="reverse",
        call="jax.vjp(f, theta)[1](u) for each unit u, in jax.lax.fori_loop",
        description="The plain reverse loop: one jax.vjp, then one pullback per output, in a "
        "compiled loop (eager, in Python, where jit cannot trace f).",
        code=_VJP_LOOP,
        reference=True,
    ),
    Generic(
        framework="jax",
        name="jacrev",
        mode="reverse",
        call="jax.jit(jax.jacrev(f))(theta, data)",
        description="Reverse mode vectorized over the outputs by jax.jacrev, compiled.",
        code=_JACREV,
        compiled=True,
    ),
    Generic(
        framework="jax",
        name="jacfwd",
        answer="forward",
        mode="forward",
        call="jax.jit(jax.jacfwd(f))(theta, data)",
        description="Forward mode vectorized over the inputs by jax.jacfwd, compiled.",
        code=_JACFWD,
        compiled=True,
    ),
    Generic(
        framework="jax",
        name="per-row",
        answer="pathwise",
        mode="pathwise",
        call="jax.jit(jax.vmap(jax.grad(f_row), in_axes=(None, 0)))(theta, data)",
        description="One gradient per row's output, vmapped over the rows and compiled.",
        code=_PER_ROW,
        per_row=True,
        compiled=True,
    ),
    Generic(
        framework="jax",
        name="per-row-map",
        mode="pathwise",
        call="jax.lax.map(lambda row: jax.grad(f_row)(theta, row), data, batch_size=1024)",
        description="One gradient per row's output, jax.lax.map over batches of rows, compiled.",
        code=_PER_ROW_MAP,
        per_row=True,
        compiled=True,
    ),
    Generic(
        framework="jax",
        name="hessian-loop",
        mode="reverse",
        call="jax.vjp(jax.grad(f), theta)[1](e) for each unit e",
        description="The plain loop: one reverse-over-reverse Hessian row per input.",
        code=_HESSIAN_LOOP,
        order=2,
        reference=True,
    ),
    Generic(
        framework="jax",
        name="forward-over-reverse",
        mode="forward",
        call="jax.jit(jax.jacfwd(jax.grad(f)))(theta, data)",
        description="Forward mode over the gradient, as jax.hessian does, compiled.",
        code=_FORWARD_OVER_REVERSE,
        compiled=True,
        order=2,
    ),
    Generic(
        framework="jax",
        name="reverse-over-reverse",
        mode="reverse",
        call="jax.jit(jax.jacrev(jax.grad(f)))(theta, data)",
        description="Reverse mode over the gradient, compiled.",
        code=_REVERSE_OVER_REVERSE,
        compiled=True,
        order=2,
    ),
    Generic(
        framework="jax",
        name="hvp-vmap",
        mode="forward",
        call="jax.jit(jax.vmap(lambda v: jax.jvp(jax.grad(f), (theta,), (v,))[1]))(eye)",
        description="One forward-over-reverse Hessian-vector product per column, vmapped.",
        code=_HVP_VMAP,
        compiled=True,
        order=2,
    ),
)
