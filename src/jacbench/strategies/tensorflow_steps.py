"""TensorFlow strategies for the simulation written as a loop over the time steps.

The loop carries y = log(S / S0), as strategies.jax_steps says, in one of three constructs: a
Python loop that tf.function unrolls into the graph ("steps-xla", 52 copies of the step), a
tf.while_loop ("steps-xla-while", "steps-function"), or tf.scan ("steps-xla-scan", measured as
a simulation only). XLA (jit_compile=True) compiles the first two; "steps-function" runs the
while loop as a plain graph. Every function takes tensorflow_gbm's arguments (spot, vol, z, t,
drift) and returns what its builders return, so a step-form row is timed as a whole-array one.
"""

from __future__ import annotations

import os
from collections.abc import Callable

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from jacbench.problems.gbm import GBMCase  # noqa: E402
from jacbench.strategies import blocked  # noqa: E402
from jacbench.strategies.registry import JacobianResult  # noqa: E402
from jacbench.strategies.tensorflow_gbm import _Inputs, _result, _wrap, simulate_path  # noqa: E402

ZERO = tf.UnconnectedGradients.ZERO
# Each execution: (the loop construct, how it runs).
EXECUTIONS = {
    "steps-xla": ("unrolled", "xla"),
    "steps-xla-while": ("while", "xla"),
    "steps-xla-scan": ("scan", "xla"),
    "steps-function": ("while", "function"),
}


class Payoff:
    """The loop's state, step and output for a case's problem, as strategies.jax_steps.Payoff
    (S_T, or the Asian call's payoff); spot enters only finish."""

    def __init__(self, problem: str, steps: int, strike: float):
        self.asian = problem == "asian"
        self.steps = steps
        self.strike = strike

    def start(self, like) -> tuple:
        zero = tf.zeros_like(like)
        return (zero, zero) if self.asian else (zero,)

    def step(self, state: tuple, vol, zk, dtk, sqk, drift) -> tuple:
        y = state[0] + (drift - 0.5 * vol * vol) * dtk + vol * sqk * zk
        return (y, state[1] + tf.exp(y) / self.steps) if self.asian else (y,)

    def finish(self, spot, state: tuple):
        if self.asian:
            return tf.maximum(spot * state[1] - self.strike, 0)
        return spot * tf.exp(state[0])


def _grid(t):
    dt = t[1:] - t[:-1]
    return dt, tf.sqrt(dt)


def loop(body, state: tuple, steps: int, construct: str) -> tuple:
    """body(k, state) -> state over the steps k = 0 .. M-1, in the construct."""
    if construct == "unrolled":
        for k in range(steps):
            state = body(k, state)
        return state
    if construct == "scan":  # tf.scan stacks every step's state: the last one
        stacked = tf.scan(lambda st, k: body(k, st), tf.range(steps), initializer=state)
        return tuple(a[-1] for a in stacked)
    # XLA needs the loop's bound to compile the TensorArrays a gradient would keep.
    _, state = tf.while_loop(lambda k, st: k < steps, lambda k, st: (k + 1, body(k, st)),
                             (tf.constant(0), state), maximum_iterations=steps)  # fmt: skip
    return state


def simulate(payoff: Payoff, spot, vol, z, t, drift, construct: str = "unrolled"):
    """The output (N,) from normals z (M, N), written as a loop over the steps."""
    dt, sq = _grid(t)
    state = loop(lambda k, st: payoff.step(st, vol, z[k], dt[k], sq[k], drift),
                 payoff.start(z[0]), payoff.steps, construct)  # fmt: skip
    return payoff.finish(spot, state)


def carried(payoff: Payoff, spot, vol, row, start: tuple, drift, construct: str = "while"):
    """Forward mode carried along the steps: the state's tangent with respect to vol beside
    the state, one ForwardAccumulator of each step; row(k) gives (z_k, dt_k, sqrt(dt_k))."""
    one = tf.ones_like(vol)

    def body(k, carry):
        state, tangent = carry
        zk, dtk, sqk = row(k)
        with tf.autodiff.ForwardAccumulator([*state, vol], [*tangent, one]) as acc:
            new = payoff.step(state, vol, zk, dtk, sqk, drift)
        return new, tuple(acc.jvp(a, unconnected_gradients=ZERO) for a in new)

    zeros = tuple(tf.zeros_like(a) for a in start)
    state, tangent = loop(body, (start, zeros), payoff.steps, construct)
    with tf.autodiff.ForwardAccumulator(spot, tf.ones_like(spot)) as acc:
        out = payoff.finish(spot, state)
    with tf.autodiff.ForwardAccumulator(list(state), list(tangent)) as acc_vol:
        again = payoff.finish(spot, state)
    return out, acc.jvp(out), acc_vol.jvp(again, unconnected_gradients=ZERO)


def _payoff(case: GBMCase) -> Payoff:
    return Payoff(case.problem, case.params.steps, float(case.params.spot))


def _build(case: GBMCase, fn, execution: str, stacked: bool = False) -> Callable:
    """fn(payoff, spot, vol, z, t, drift) -> (out, d_spot, d_vol), run in the execution's way
    on the case's tensors, as a JacobianResult; stacked: the two columns written as the (N, 2)
    Jacobian inside the function (see strategies.torch_steps.stacked)."""
    x, payoff = _Inputs(case), _payoff(case)
    if stacked:
        wrapped = _wrap(lambda *a: _stacked(*fn(payoff, *a)), execution)
        return lambda: JacobianResult(*(a.numpy() for a in wrapped(x.spot, x.vol, *x.data)))
    wrapped = _wrap(lambda *a: fn(payoff, *a), execution)

    def run():
        s, d_spot, d_vol = wrapped(x.spot, x.vol, *x.data)
        return _result(d_spot, d_vol, s)

    return run


def _stacked(out, d_spot, d_vol) -> tuple:
    return tf.stack([tf.reshape(d_spot, [-1]), tf.reshape(d_vol, [-1])], axis=1), out


def build_simulation(case: GBMCase, execution: str = "steps-xla") -> Callable[[], np.ndarray]:
    """The step-form simulation of an execution (EXECUTIONS), or drawn-function (the normals drawn
    inside, a block of paths a call), or draws-function (the same draws, summed: drawing alone)."""
    payoff = _payoff(case)
    if execution in ("drawn-function", "draws-function"):
        return _drawn(case, payoff, "draws" if execution == "draws-function" else "simulation")
    construct, how = EXECUTIONS[execution]
    x = _Inputs(case)
    sim = _wrap(lambda *a: simulate(payoff, *a, construct=construct), how)
    return lambda: sim(x.spot, x.vol, *x.data).numpy()


def _carry(construct: str):
    def fn(payoff, spot, vol, z, t, drift):
        dt, sq = _grid(t)
        row = lambda k: (z[k], dt[k], sq[k])  # noqa: E731
        return carried(payoff, spot, vol, row, payoff.start(z[0]), drift, construct)

    return fn


def build_steps_carry_xla(case: GBMCase):
    return _build(case, _carry("while"), "xla", stacked=True)


def build_steps_carry_function(case: GBMCase):
    return _build(case, _carry("while"), "function", stacked=True)


def _two_accumulators(f, spot, vol):
    """f(spot, vol) and its two JVPs, one ForwardAccumulator per input."""
    one, zero = tf.ones_like(spot), tf.zeros_like(spot)
    jvps = []
    for tangents in ([one, zero], [zero, one]):
        with tf.autodiff.ForwardAccumulator(primals=[spot, vol], tangents=tangents) as acc:
            s = f(spot, vol)
        jvps.append(acc.jvp(s))
    return s, jvps[0], jvps[1]


def build_steps_forward_xla(case: GBMCase):
    def fn(payoff, spot, vol, z, t, drift):
        return _two_accumulators(lambda a, b: simulate(payoff, a, b, z, t, drift), spot, vol)

    return _build(case, fn, "xla")


def _pathwise(recompute: bool):
    def fn(payoff, spot, vol, z, t, drift):
        n = tf.shape(z)[1]
        dt, sq = _grid(t)
        # One copy of each parameter per path: d sum(S_T) / d copy i is row i of the Jacobian.
        spot_p, vol_p = tf.fill([n], spot), tf.fill([n], vol)

        def step(y, v, zk, dtk, sqk):
            return payoff.step((y,), v, zk, dtk, sqk, drift)[0]

        step = tf.recompute_grad(step) if recompute else step
        with tf.GradientTape() as tape:
            tape.watch([spot_p, vol_p])
            state = loop(lambda k, st: (step(st[0], vol_p, z[k], dt[k], sq[k]),),
                         payoff.start(z[0]), payoff.steps, "unrolled")  # fmt: skip
            s = payoff.finish(spot_p, state)
            total = tf.reduce_sum(s)
        d_spot, d_vol = tape.gradient(total, [spot_p, vol_p])
        return s, d_spot, d_vol

    return fn


def build_steps_pathwise_xla(case: GBMCase):
    return _build(case, _pathwise(False), "xla")


def build_steps_recompute_xla(case: GBMCase):
    return _build(case, _pathwise(True), "xla")


# --- the Asian payoff in the whole-array form: the path built, its dates averaged -----------


def build_forward_accumulator_xla(case: GBMCase):
    """tensorflow_gbm's ForwardAccumulator passes under XLA, on the Asian payoff of the whole
    path (the asian problem's whole-array form)."""

    def fn(payoff, spot, vol, z, t, drift):
        def asian(a, b):
            mean = tf.reduce_mean(simulate_path(a, b, z, t, drift)[1:], axis=0)
            return tf.maximum(mean - payoff.strike, 0)

        return _two_accumulators(asian, spot, vol)

    return _build(case, fn, "xla")


# --- the normals drawn inside the loop (catalog.DRAWN), a block of paths a call -----------


def _drawn(case: GBMCase, payoff: Payoff, what: str):
    """A call over blocks of paths whose normals are tf.random.stateless_normal with Philox,
    seeded with the case's seed folded with the block's index and the step's, in a
    tf.while_loop in a tf.function graph: "jacobian" (the carried tangent), "simulation" or
    "draws" (the normals alone, summed over the steps). Not under XLA: there the draws take
    twice as long (15.6 ns a normal against 7.1 on the reference machine), and at 10^8 paths
    drawing is most of the call."""
    p = case.params
    size = min(blocked.DRAWN_BLOCK, p.paths)
    dtype = tf.as_dtype(p.dtype)
    spot, vol, drift = (tf.constant(v, dtype=dtype) for v in (p.spot, p.vol, p.drift))
    t = tf.constant(case.t)
    seed = tf.constant([p.seed, 0], dtype=tf.int64)

    @tf.function
    def block(b, spot, vol, t, drift):
        dt, sq = _grid(t)
        seed_b = tf.random.experimental.stateless_fold_in(seed, b)

        def row(k):
            key = tf.random.experimental.stateless_fold_in(seed_b, k)
            z = tf.random.stateless_normal([size], seed=key, dtype=dtype, alg="philox")
            return z, dt[k], sq[k]

        start = payoff.start(tf.zeros([size], dtype))
        if what == "jacobian":
            return carried(payoff, spot, vol, row, start, drift)

        def body(k, state):
            zk, dtk, sqk = row(k)
            if what == "draws":
                return (state[0] + zk,)
            return payoff.step(state, vol, zk, dtk, sqk, drift)

        state = loop(body, start, p.steps, "while")
        return (state[0] if what == "draws" else payoff.finish(spot, state),)

    def step(b: int):
        return tuple(a.numpy() for a in block(tf.constant(b, tf.int64), spot, vol, t, drift))

    return blocked.drawn_runner(case, step, jacobian=what == "jacobian")


def build_drawn_carry_function(case: GBMCase):
    return _drawn(case, _payoff(case), "jacobian")
