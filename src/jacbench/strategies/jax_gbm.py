"""JAX strategies for the GBM Jacobian, all under jit.

The normals are passed to every jitted function as an argument. A jit that closes over them
makes them a compile-time constant, and XLA then constant-folds the whole simulation (48 s of
compilation at N=100,000 on the reference machine).
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from jacbench.problems.gbm import GBMCase
from jacbench.strategies import blocked, devices
from jacbench.strategies.registry import JacobianResult

# XLA's option that turns off the fusions it hands to YNNPACK, a library of CPU kernels (empty:
# none): the book's rows with it set show what those fusions cost (09-method, YNNPACK).
NO_YNN_FUSION = {"xla_cpu_experimental_ynn_fusion_type": ""}
# float64 cases need x64; float32 inputs stay float32 because every input is typed explicitly.
jax.config.update("jax_enable_x64", True)


def simulate(spot, vol, z, t, drift):
    """S_T from normals z (M, N) on grid t (M+1,). spot and vol are scalars or per-path (N,)."""
    return simulate_path(spot, vol, z, t, drift)[-1]


def _brownian(z, t):
    """W on the grid, (M+1, N), from normals z (M, N)."""
    return jnp.concatenate([jnp.zeros_like(z[:1]), jnp.sqrt(jnp.diff(t))[:, None] * z]).cumsum(0)


def simulate_path(spot, vol, z, t, drift):
    """The whole path S, (M+1, N): what the question keeps. XLA given only S_T to return
    reduces the cumulative sum instead of building it; returned, the path has to be built."""
    return spot * jnp.exp((drift - 0.5 * vol**2) * t[:, None] + vol * _brownian(z, t))


def hand_fused(spot, vol, z, t, drift):
    """The floor a Jacobian can reach: S_T and both derivatives written by hand,
    dS_T/dS0 = S_T / S0 and dS_T/dsigma = S_T (W_T - sigma T), in one pass, no AD. Like a
    Jacobian it returns S_T and the two columns, not the path: compiled, the compiler keeps
    what it needs of the path and no more, as it does for a Jacobian."""
    w = _brownian(z, t)
    path = spot * jnp.exp((drift - 0.5 * vol**2) * t[:, None] + vol * w)
    s_t = path[-1]
    return s_t, s_t / spot, s_t * (w[-1] - vol * t[-1])


def brownian_terminal(z, t):
    """W_T alone from normals z (M, N) on grid t (M+1,): the last row of simulate's W, summed
    without keeping the rows before it."""
    return (jnp.sqrt(jnp.diff(t))[:, None] * z).sum(axis=0)


def simulate_terminal(spot, vol, w_t, maturity, drift):
    """S_T from W_T (N,) with no path: reverse mode's cotangent of one output is N values."""
    return spot * jnp.exp((drift - 0.5 * vol**2) * maturity + vol * w_t)


def _args(case: GBMCase) -> tuple:
    """spot, vol, z, t, drift on the case's device: the jitted functions run there."""
    p = case.params
    return tuple(
        devices.jax_put(a, case.device)
        for a in (case.scalar(p.spot), case.scalar(p.vol), case.normals, case.t,
                  case.scalar(p.drift))
    )  # fmt: skip


def _runner(case: GBMCase, fn, stacked: bool = False, **options) -> Callable[[], JacobianResult]:
    """jit fn(spot, vol, z, t, drift) -> (S_T, d_spot, d_vol), with jax.jit's options. On the
    CPU the numpy conversion blocks and the columns are stacked in numpy, or, stacked, in the
    jit (see strategies.torch_steps.stacked); on a GPU they are stacked in the jit and the
    result is left there (strategies.devices)."""
    args = _args(case)
    if devices.keeps_results(case.device):
        jitted_j = jax.jit(lambda *a: _stacked(*fn(*a)), **options)
        return lambda: JacobianResult(*jitted_j(*args))
    if stacked:
        jitted_j = jax.jit(lambda *a: _stacked(*fn(*a)), **options)
        return lambda: JacobianResult(*(np.asarray(a) for a in jitted_j(*args)))
    jitted = jax.jit(fn, **options)

    def run() -> JacobianResult:
        s, d_spot, d_vol = jitted(*args)
        j = np.stack([np.asarray(d_spot).reshape(-1), np.asarray(d_vol).reshape(-1)], axis=1)
        return JacobianResult(j, np.asarray(s))

    return run


def _stacked(s, d_spot, d_vol):
    return jnp.stack([d_spot.reshape(-1), d_vol.reshape(-1)], axis=1), s


def build_simulation(case: GBMCase, execution: str = "jit") -> Callable[[], np.ndarray]:
    if execution == "blocked-jit":
        return _blocked(case, simulate, blocked.simulation_runner)
    args = _args(case)
    jitted = jax.jit(simulate)
    if devices.keeps_results(case.device):
        return lambda: jitted(*args)
    return lambda: np.asarray(jitted(*args))


def build_simulation_path(case: GBMCase, execution: str = "jit") -> Callable[[], np.ndarray]:
    """The jitted simulation returning the whole path (strategies.registry.simulation):
    returned, the path has to be built; S_T is read from it outside the jit."""
    args = _args(case)
    jitted = jax.jit(simulate_path)
    if devices.keeps_results(case.device):
        return lambda: jitted(*args)[-1]
    return lambda: np.asarray(jitted(*args)[-1])


def build_hand_fused(case: GBMCase) -> Callable[[], JacobianResult]:
    """hand_fused under jit, run as every JAX Jacobian is (_runner)."""
    return _runner(case, hand_fused)


def build_jacrev(case: GBMCase):
    def fn(spot, vol, z, t, drift):
        d_spot, d_vol = jax.jacrev(simulate, argnums=(0, 1))(spot, vol, z, t, drift)
        return simulate(spot, vol, z, t, drift), d_spot, d_vol

    return _runner(case, fn)


def build_jacrev_terminal(case: GBMCase):
    """jax.jacrev of S_T computed from W_T: the vmap over N VJPs of build_jacrev, each through
    an N-sized graph instead of the (M+1) x N one that s[-1] scatters into."""

    def fn(spot, vol, z, t, drift):
        # W_T does not depend on spot or vol: computed in the jit, outside the jacrev.
        w_t = brownian_terminal(z, t)
        d_spot, d_vol = jax.jacrev(simulate_terminal, argnums=(0, 1))(spot, vol, w_t, t[-1], drift)
        return simulate_terminal(spot, vol, w_t, t[-1], drift), d_spot, d_vol

    return _runner(case, fn)


def _vjp_rows(batch_size: int | None):
    def fn(spot, vol, z, t, drift):
        s, vjp = jax.vjp(lambda a, b: simulate(a, b, z, t, drift), spot, vol)

        def row(i):
            return vjp(jnp.zeros_like(s).at[i].set(1))

        d_spot, d_vol = jax.lax.map(row, jnp.arange(s.shape[0]), batch_size=batch_size)
        return s, d_spot, d_vol

    return fn


def build_jacrev_chunked(case: GBMCase):
    return _runner(case, _vjp_rows(case.params.chunk_size))


def build_vjp_loop(case: GBMCase):
    return _runner(case, _vjp_rows(None))


def build_jacfwd(case: GBMCase):
    def fn(spot, vol, z, t, drift):
        d_spot, d_vol = jax.jacfwd(simulate, argnums=(0, 1))(spot, vol, z, t, drift)
        return simulate(spot, vol, z, t, drift), d_spot, d_vol

    return _runner(case, fn)


def _jvp(spot, vol, z, t, drift):
    f = lambda a, b: simulate(a, b, z, t, drift)  # noqa: E731
    one, zero = jnp.ones_like(spot), jnp.zeros_like(spot)
    s, d_spot = jax.jvp(f, (spot, vol), (one, zero))
    _, d_vol = jax.jvp(f, (spot, vol), (zero, one))
    return s, d_spot, d_vol


def build_jvp(case: GBMCase):
    return _runner(case, _jvp)


def _pathwise(spot, vol, z, t, drift):
    n = z.shape[1]

    # Per-path copies: d sum(S_T) / d copy_i is row i of the Jacobian.
    def total(sp, vp):
        s = simulate(sp, vp, z, t, drift)
        return s.sum(), s

    (d_spot, d_vol), s = jax.grad(total, argnums=(0, 1), has_aux=True)(
        jnp.full((n,), spot), jnp.full((n,), vol)
    )
    return s, d_spot, d_vol


def build_pathwise(case: GBMCase):
    return _runner(case, _pathwise)


def build_pathwise_no_ynn(case: GBMCase):
    """build_pathwise compiled with XLA's YNNPACK fusion turned off (NO_YNN_FUSION)."""
    return _runner(case, _pathwise, compiler_options=NO_YNN_FUSION)


# --- path-blocked (see strategies.blocked): one block of paths at a time ---------------------
#
# The block's function is jitted once: every block, the last one zero-padded, has the shape
# (M, B). The normals come from numpy (the case's, or the stream's), so the loop over blocks
# is Python's, not a jax.lax.map inside the jit: a jitted loop would have to draw them with
# jax.random, and the paths would then differ from every other framework's.


def _blocked(case: GBMCase, fn, runner, block_size: int | None = None):
    p = case.params
    spot, vol, drift = (devices.jax_put(case.scalar(v), case.device)
                        for v in (p.spot, p.vol, p.drift))  # fmt: skip
    t = devices.jax_put(case.t, case.device)
    jitted = jax.jit(fn)

    # On a GPU each block's numpy normals are copied there and its results copied back into
    # the (N,) host arrays, which waits for the block's work.
    def step(z):
        out = jitted(spot, vol, devices.jax_put(z, case.device), t, drift)
        return tuple(np.asarray(a) for a in (out if isinstance(out, tuple) else (out,)))

    return runner(case, step, block_size, pad=True)


def build_blocked_jvp(case: GBMCase, block_size: int | None = None):
    """The two jax.jvp calls of build_jvp, jitted, on one block of paths at a time."""
    return _blocked(case, _jvp, blocked.jacobian_runner, block_size)


def build_blocked_pathwise(case: GBMCase, block_size: int | None = None):
    """The pathwise gradient of build_pathwise, jitted, on one block of paths at a time."""
    return _blocked(case, _pathwise, blocked.jacobian_runner, block_size)
