"""TensorFlow strategies for the GBM Jacobian."""

from __future__ import annotations

import os
from collections.abc import Callable

# TensorFlow logs to stderr on import; keep a reader's output clean unless asked otherwise.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from jacbench.problems.gbm import GBMCase  # noqa: E402
from jacbench.strategies import blocked  # noqa: E402
from jacbench.strategies.registry import JacobianResult  # noqa: E402


def simulate(spot, vol, z, t, drift):
    """S_T from normals z (M, N) on grid t (M+1,). spot and vol are scalars or per-path (N,)."""
    return simulate_path(spot, vol, z, t, drift)[-1]


def _brownian(z, t):
    """W on the grid, (M+1, N), from normals z (M, N)."""
    dt = t[1:] - t[:-1]
    return tf.cumsum(tf.concat([tf.zeros_like(z[:1]), tf.sqrt(dt)[:, None] * z], axis=0), axis=0)


def simulate_path(spot, vol, z, t, drift):
    """The whole path S, (M+1, N): what the question keeps. XLA given only S_T to return
    reduces the cumulative sum instead of building it; returned, the path has to be built."""
    return spot * tf.exp((drift - 0.5 * vol**2) * t[:, None] + vol * _brownian(z, t))


def hand_fused(spot, vol, z, t, drift):
    """The floor a Jacobian can reach: S_T and both derivatives written by hand,
    dS_T/dS0 = S_T / S0 and dS_T/dsigma = S_T (W_T - sigma T), in one pass, no AD. Like a
    Jacobian it returns S_T and the two columns, not the path: compiled, the compiler keeps
    what it needs of the path and no more, as it does for a Jacobian."""
    w = _brownian(z, t)
    path = spot * tf.exp((drift - 0.5 * vol**2) * t[:, None] + vol * w)
    s_t = path[-1]
    return s_t, s_t / spot, s_t * (w[-1] - vol * t[-1])


def brownian_terminal(z, t):
    """W_T alone from normals z (M, N) on grid t (M+1,): the last row of simulate's W, summed
    without keeping the rows before it."""
    return tf.reduce_sum(tf.sqrt(t[1:] - t[:-1])[:, None] * z, axis=0)


def simulate_terminal(spot, vol, w_t, maturity, drift):
    """S_T from W_T (N,) with no path: reverse mode's cotangent of one output is N values."""
    return spot * tf.exp((drift - 0.5 * vol**2) * maturity + vol * w_t)


class _Inputs:
    def __init__(self, case: GBMCase):
        p = case.params
        self.dtype = tf.as_dtype(p.dtype)
        self.z = tf.constant(case.normals)
        self.t = tf.constant(case.t)
        self.drift = tf.constant(p.drift, dtype=self.dtype)
        self.spot = tf.constant(p.spot, dtype=self.dtype)
        self.vol = tf.constant(p.vol, dtype=self.dtype)
        self.n = p.paths
        self.chunk_size = p.chunk_size

    def f(self, spot, vol):
        return simulate(spot, vol, self.z, self.t, self.drift)

    @property
    def data(self):
        return self.z, self.t, self.drift


def _result(d_spot, d_vol, terminal) -> JacobianResult:
    j = np.stack([np.asarray(d_spot).reshape(-1), np.asarray(d_vol).reshape(-1)], axis=1)
    return JacobianResult(j, np.asarray(terminal))


def _wrap(fn, execution: str):
    """Run fn eagerly, as a graph (tf.function) or through XLA (jit_compile=True)."""
    if execution == "eager":
        return fn
    if execution == "function":
        return tf.function(fn)
    if execution == "xla":
        return tf.function(fn, jit_compile=True)
    raise ValueError(f"unknown TensorFlow execution {execution!r}")


def build_simulation(case: GBMCase, execution: str = "eager") -> Callable[[], np.ndarray]:
    if execution == "blocked-function":
        return _blocked(case, simulate, blocked.simulation_runner)
    x = _Inputs(case)
    sim = _wrap(simulate, execution)
    return lambda: sim(x.spot, x.vol, *x.data).numpy()


def build_simulation_path(case: GBMCase, execution: str = "eager") -> Callable[[], np.ndarray]:
    """The simulation returning the whole path (strategies.registry.simulation), eagerly, as a
    graph or through XLA, where returning the path keeps the compiler from dropping it."""
    x = _Inputs(case)
    sim = _wrap(simulate_path, execution)
    return lambda: sim(x.spot, x.vol, *x.data)[-1].numpy()


def build_hand_fused(case: GBMCase) -> Callable[[], JacobianResult]:
    """hand_fused through XLA."""
    x = _Inputs(case)
    fused = _wrap(hand_fused, "xla")

    def run() -> JacobianResult:
        s_t, d_spot, d_vol = fused(x.spot, x.vol, *x.data)
        return _result(d_spot, d_vol, s_t)

    return run


def build_question(case: GBMCase) -> Callable[[], JacobianResult]:
    """The question's TensorFlow program, kept as written (float32, its own normals).

    It never takes the cumulative sum of the increments: W is the increments themselves, so
    S_T depends only on the last normal and the process is not GBM. Kept for fidelity; the
    like-for-like strategies use the corrected simulation.
    """
    p = case.params

    # The question's function as posted, names and layout included.
    # fmt: off
    def sim_gbm(N, t, spot, drift, vol, seed=None):
        M = tf.constant(t.shape[0])
        dt = tf.math.subtract(t[1:], t[:-1])

        Z = tf.random.normal(mean=0.0, stddev=1.0, shape=(M - 1, N), seed=seed)

        W = tf.concat([
            tf.zeros(shape=(1, N)), tf.sqrt(dt)[:, None] * Z
        ], axis=0)

        S = spot * tf.exp(((drift - 0.5 * vol ** 2) * t)[:, None] + vol * W)
        return S[-1,]
    # fmt: on

    def run() -> JacobianResult:
        seed = p.seed
        n = tf.constant(p.paths)
        t = tf.linspace(tf.constant(0.0), tf.constant(p.maturity), p.steps + 1)
        spot = tf.constant(p.spot, dtype=tf.float32)
        drift = tf.constant(p.drift, dtype=tf.float32)
        vol = tf.constant(p.vol, dtype=tf.float32)
        with tf.GradientTape() as tape:
            tape.watch([spot, vol])
            s = sim_gbm(n, t, spot, drift, vol, seed)
        d_spot, d_vol = tape.jacobian(s, [spot, vol])
        return _result(d_spot, d_vol, s)

    return run


def _tape_jacobian(case: GBMCase, persistent: bool = False, **kw) -> Callable[[], JacobianResult]:
    x = _Inputs(case)

    def run() -> JacobianResult:
        with tf.GradientTape(persistent=persistent) as tape:
            tape.watch([x.spot, x.vol])
            s = x.f(x.spot, x.vol)
        d_spot, d_vol = tape.jacobian(s, [x.spot, x.vol], **kw)
        return _result(d_spot, d_vol, s)

    return run


def build_tape_jacobian_pfor(case: GBMCase):
    return _tape_jacobian(case)


def build_tape_jacobian_terminal(case: GBMCase) -> Callable[[], JacobianResult]:
    """GradientTape.jacobian (pfor) of S_T computed from W_T, eagerly as
    build_tape_jacobian_pfor: each of the N backward passes is N-sized, not (M+1) x N."""
    x = _Inputs(case)

    def run() -> JacobianResult:
        # W_T does not depend on spot or vol: computed before the tape records.
        w_t = brownian_terminal(x.z, x.t)
        with tf.GradientTape() as tape:
            tape.watch([x.spot, x.vol])
            s = simulate_terminal(x.spot, x.vol, w_t, x.t[-1], x.drift)
        d_spot, d_vol = tape.jacobian(s, [x.spot, x.vol])
        return _result(d_spot, d_vol, s)

    return run


def build_tape_jacobian_pfor_chunked(case: GBMCase):
    # In chunks, pfor runs a while loop that takes the gradient once per chunk: with a
    # non-persistent tape TF 2.21 fails ("None values not supported").
    return _tape_jacobian(case, persistent=True, parallel_iterations=case.params.chunk_size)


def build_tape_jacobian_loop(case: GBMCase):
    # Without pfor, jacobian calls tape.gradient once per output: the tape must persist.
    return _tape_jacobian(case, persistent=True, experimental_use_pfor=False)


def _forward(spot, vol, z, t, drift):
    one, zero = tf.ones_like(spot), tf.zeros_like(spot)
    jvps = []
    for tangents in ([one, zero], [zero, one]):
        with tf.autodiff.ForwardAccumulator(primals=[spot, vol], tangents=tangents) as acc:
            s = simulate(spot, vol, z, t, drift)
        jvps.append(acc.jvp(s))
    return s, jvps[0], jvps[1]


def _build_forward(case: GBMCase, execution: str) -> Callable[[], JacobianResult]:
    x = _Inputs(case)
    fwd = _wrap(_forward, execution)

    def run() -> JacobianResult:
        s, d_spot, d_vol = fwd(x.spot, x.vol, *x.data)
        return _result(d_spot, d_vol, s)

    return run


def build_forward_accumulator(case: GBMCase):
    return _build_forward(case, "eager")


def build_forward_accumulator_function(case: GBMCase):
    return _build_forward(case, "function")


def build_forward_accumulator_xla(case: GBMCase):
    return _build_forward(case, "xla")


def _pathwise(spot, vol, z, t, drift):
    n = tf.shape(z)[1]
    # One copy of each parameter per path: the gradient of sum(S_T) with respect to copy i
    # is exactly row i of the Jacobian, because path i depends only on copy i.
    spot_p, vol_p = tf.fill([n], spot), tf.fill([n], vol)
    with tf.GradientTape() as tape:
        tape.watch([spot_p, vol_p])
        s = simulate(spot_p, vol_p, z, t, drift)
        total = tf.reduce_sum(s)
    d_spot, d_vol = tape.gradient(total, [spot_p, vol_p])
    return s, d_spot, d_vol


def _build_pathwise(case: GBMCase, execution: str) -> Callable[[], JacobianResult]:
    x = _Inputs(case)
    grad = _wrap(_pathwise, execution)

    def run() -> JacobianResult:
        s, d_spot, d_vol = grad(x.spot, x.vol, *x.data)
        return _result(d_spot, d_vol, s)

    return run


def build_pathwise(case: GBMCase):
    return _build_pathwise(case, "eager")


def build_pathwise_function(case: GBMCase):
    return _build_pathwise(case, "function")


def build_pathwise_xla(case: GBMCase):
    return _build_pathwise(case, "xla")


# --- path-blocked (see strategies.blocked): one block of paths at a time ---------------------


def _blocked(case: GBMCase, fn, runner, block_size: int | None = None):
    """fn(spot, vol, z, t, drift) as one tf.function traced once for (M, any number of paths),
    called on each block."""
    p = case.params
    dtype = tf.as_dtype(p.dtype)
    spot, vol, drift = (tf.constant(v, dtype=dtype) for v in (p.spot, p.vol, p.drift))
    t = tf.constant(case.t)
    scalar = tf.TensorSpec([], dtype)
    graph = tf.function(
        fn,
        input_signature=[scalar, scalar, tf.TensorSpec([p.steps, None], dtype),
                         tf.TensorSpec([p.steps + 1], dtype), scalar],
    )  # fmt: skip

    def step(z):
        out = graph(spot, vol, tf.constant(z), t, drift)
        return tuple(a.numpy() for a in (out if isinstance(out, tuple | list) else (out,)))

    return runner(case, step, block_size)


def build_blocked_forward_function(case: GBMCase, block_size: int | None = None):
    """The ForwardAccumulator passes of build_forward_accumulator_function, in one tf.function
    called on one block of paths at a time."""
    return _blocked(case, _forward, blocked.jacobian_runner, block_size)


def build_blocked_pathwise_function(case: GBMCase, block_size: int | None = None):
    """The pathwise gradient of build_pathwise_function, in one tf.function called on one
    block of paths at a time."""
    return _blocked(case, _pathwise, blocked.jacobian_runner, block_size)
