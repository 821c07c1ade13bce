"""JAX strategies for the simulation written as a loop over the time steps, all under jit.

The loop carries y = log(S / S0): y_{k+1} = y_k + (mu - sigma^2/2) dt_k + sigma sqrt(dt_k) Z_k,
and S0 multiplies exp(y) after it. Each step reads one row of the normals, so the whole loop
reads them once, and nothing of size (M+1) x N exists unless a reverse pass stores the states.
The Asian payoff carries the running average of S / S0 beside y (problems.asian).

Every function takes the arguments of strategies.jax_gbm (spot, vol, z, t, drift) and runs
through its _runner, so a step-form row is timed exactly as a whole-array one.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from jacbench.problems.gbm import GBMCase
from jacbench.strategies import blocked, devices
from jacbench.strategies.jax_gbm import _runner, simulate_path


class Payoff:
    """The loop's state, step and output for a case's problem: S_T ("gbm") or the Asian call's
    payoff ("asian"). The state is a tuple of arrays of N values; spot enters only finish."""

    def __init__(self, problem: str, steps: int, strike: float):
        self.asian = problem == "asian"
        self.steps = steps
        self.strike = strike

    def start(self, n: int, dtype) -> tuple:
        zero = jnp.zeros((n,), dtype)
        return (zero, zero) if self.asian else (zero,)

    def step(self, state: tuple, vol, zk, dtk, sqk, drift) -> tuple:
        y = state[0] + (drift - 0.5 * vol * vol) * dtk + vol * sqk * zk
        return (y, state[1] + jnp.exp(y) / self.steps) if self.asian else (y,)

    def finish(self, spot, state: tuple):
        if self.asian:
            return jnp.maximum(spot * state[1] - self.strike, 0)
        return spot * jnp.exp(state[0])


def _grid(t):
    dt = jnp.diff(t)
    return dt, jnp.sqrt(dt)


def simulate(payoff: Payoff, spot, vol, z, t, drift, loop: str = "scan"):
    """The output (N,) from normals z (M, N), written as a loop over the steps: lax.scan, or
    lax.fori_loop indexing the rows. spot and vol are scalars or per-path (N,)."""
    dt, sq = _grid(t)
    start = payoff.start(z.shape[1], z.dtype)
    if loop == "fori":
        state = jax.lax.fori_loop(
            0, z.shape[0], lambda k, st: payoff.step(st, vol, z[k], dt[k], sq[k], drift), start
        )
    else:

        def body(state, row):
            zk, dtk, sqk = row
            return payoff.step(state, vol, zk, dtk, sqk, drift), None

        state, _ = jax.lax.scan(body, start, (z, dt, sq))
    return payoff.finish(spot, state)


def carried(payoff: Payoff, spot, vol, xs, row, start: tuple, drift):
    """Forward mode carried along the steps: the state's tangent with respect to vol beside the
    state, one jax.jvp of each step (spot's tangent is zero in the loop: it enters only finish).
    The loop scans over xs; row(x) gives a step's (z_k, dt_k, sqrt(dt_k)) from its x."""
    one = jnp.ones_like(vol)

    def body(carry, x):
        state, tangent = carry
        zk, dtk, sqk = row(x)
        step = lambda st, v: payoff.step(st, v, zk, dtk, sqk, drift)  # noqa: E731
        return jax.jvp(step, (state, vol), (tangent, one)), None

    zeros = tuple(jnp.zeros_like(a) for a in start)
    (state, tangent), _ = jax.lax.scan(body, (start, zeros), xs)
    out, d_spot = jax.jvp(lambda s: payoff.finish(s, state), (spot,), (jnp.ones_like(spot),))
    _, d_vol = jax.jvp(lambda st: payoff.finish(spot, st), (state,), (tangent,))
    return out, d_spot, d_vol


def _payoff(case: GBMCase) -> Payoff:
    return Payoff(case.problem, case.params.steps, float(case.params.spot))


def build_simulation(case: GBMCase, execution: str = "steps-jit") -> Callable[[], np.ndarray]:
    """The step-form simulation of an execution: steps-jit (lax.scan), steps-jit-fori
    (fori_loop), drawn-jit (the normals drawn inside, a block of paths a call) or draws-jit
    (the same draws, summed: drawing alone)."""
    payoff = _payoff(case)
    if execution in ("drawn-jit", "draws-jit"):
        return _drawn(case, payoff, "draws" if execution == "draws-jit" else "simulation")
    loop = "fori" if execution == "steps-jit-fori" else "scan"
    args = tuple(devices.jax_put(a, case.device) for a in _arrays(case))
    jitted = jax.jit(lambda *a: simulate(payoff, *a, loop=loop))
    return lambda: np.asarray(jitted(*args))


def _arrays(case: GBMCase) -> tuple:
    p = case.params
    return (case.scalar(p.spot), case.scalar(p.vol), case.normals, case.t, case.scalar(p.drift))


def _fn(case: GBMCase, body) -> Callable:
    """body(payoff, spot, vol, z, t, drift) -> (out, d_spot, d_vol), as _runner takes it."""
    payoff = _payoff(case)
    return lambda spot, vol, z, t, drift: body(payoff, spot, vol, z, t, drift)


def _carry(payoff, spot, vol, z, t, drift):
    start = payoff.start(z.shape[1], z.dtype)
    return carried(payoff, spot, vol, (z, *_grid(t)), lambda row: row, start, drift)


def build_steps_carry(case: GBMCase):
    return _runner(case, _fn(case, _carry), stacked=True)


def _two_jvps(f, spot, vol):
    """f(spot, vol) and its two JVPs, one per input."""
    one, zero = jnp.ones_like(spot), jnp.zeros_like(spot)
    s, d_spot = jax.jvp(f, (spot, vol), (one, zero))
    _, d_vol = jax.jvp(f, (spot, vol), (zero, one))
    return s, d_spot, d_vol


def _jvps(payoff, spot, vol, z, t, drift):
    return _two_jvps(lambda a, b: simulate(payoff, a, b, z, t, drift), spot, vol)


def build_steps_jvp(case: GBMCase):
    return _runner(case, _fn(case, _jvps))


def _jacfwd(payoff, spot, vol, z, t, drift):
    f = lambda a, b: simulate(payoff, a, b, z, t, drift)  # noqa: E731
    d_spot, d_vol = jax.jacfwd(f, argnums=(0, 1))(spot, vol)
    return f(spot, vol), d_spot, d_vol


def build_steps_jacfwd(case: GBMCase):
    return _runner(case, _fn(case, _jacfwd))


def _pathwise(payoff, spot, vol, z, t, drift, checkpoint: bool = False):
    n = z.shape[1]
    dt, sq = _grid(t)

    def total(sp, vp):
        def body(state, row):
            zk, dtk, sqk = row
            return payoff.step(state, vp, zk, dtk, sqk, drift), None

        body = jax.checkpoint(body) if checkpoint else body
        state, _ = jax.lax.scan(body, payoff.start(n, z.dtype), (z, dt, sq))
        s = payoff.finish(sp, state)
        return s.sum(), s

    # Per-path copies: d sum(S_T) / d copy_i is row i of the Jacobian.
    (d_spot, d_vol), s = jax.grad(total, argnums=(0, 1), has_aux=True)(
        jnp.full((n,), spot), jnp.full((n,), vol)
    )
    return s, d_spot, d_vol


def build_steps_pathwise(case: GBMCase):
    return _runner(case, _fn(case, _pathwise))


def build_steps_checkpoint(case: GBMCase):
    return _runner(case, _fn(case, lambda *a: _pathwise(*a, checkpoint=True)))


# --- the Asian payoff in the whole-array form: the path built, its dates averaged -----------


def _asian_array(payoff: Payoff, spot, vol, z, t, drift):
    return jnp.maximum(simulate_path(spot, vol, z, t, drift)[1:].mean(0) - payoff.strike, 0)


def build_jvp(case: GBMCase):
    """The two jax.jvp calls of jax_gbm's jvp, on the Asian payoff of the whole path (the
    asian problem's whole-array form)."""

    def asian(payoff, spot, vol, z, t, drift):
        return _two_jvps(lambda a, b: _asian_array(payoff, a, b, z, t, drift), spot, vol)

    return _runner(case, _fn(case, asian))


# --- the normals drawn inside the loop (catalog.DRAWN), a block of paths a call -----------


def _drawn(case: GBMCase, payoff: Payoff, what: str):
    """A call over blocks of paths whose normals are jax.random.normal of a threefry key folded
    with the block's index and the step's: "jacobian" (the carried tangent), "simulation" or
    "draws" (the normals alone, summed over the steps)."""
    p = case.params
    size = min(blocked.DRAWN_BLOCK, p.paths)
    dtype = case.dtype
    spot, vol, t, drift = (devices.jax_put(a, case.device)
                           for a in (case.scalar(p.spot), case.scalar(p.vol), case.t,
                                     case.scalar(p.drift)))  # fmt: skip
    key = jax.random.key(p.seed)

    def block(b, spot, vol, t, drift):
        kb = jax.random.fold_in(key, b)

        def row(x):
            k, dtk, sqk = x
            return jax.random.normal(jax.random.fold_in(kb, k), (size,), dtype), dtk, sqk

        xs = (jnp.arange(p.steps), *_grid(t))
        start = payoff.start(size, dtype)
        if what == "jacobian":
            return carried(payoff, spot, vol, xs, row, start, drift)

        def body(state, x):
            zk, dtk, sqk = row(x)
            if what == "draws":
                return (state[0] + zk,), None
            return payoff.step(state, vol, zk, dtk, sqk, drift), None

        state, _ = jax.lax.scan(body, start, xs)
        return (state[0] if what == "draws" else payoff.finish(spot, state),)

    jitted = jax.jit(block)

    def step(b: int):
        return tuple(np.asarray(a) for a in jitted(b, spot, vol, t, drift))

    return blocked.drawn_runner(case, step, jacobian=what == "jacobian")


def build_drawn_carry(case: GBMCase):
    return _drawn(case, _payoff(case), "jacobian")
