"""PyTorch strategies for the simulation written as a loop over the time steps.

The loop carries y = log(S / S0), as strategies.jax_steps says, as a Python loop: run eagerly it
launches a few kernels per step; under torch.compile (steps-inductor) dynamo unrolls it and
inductor fuses the 52 steps into one kernel that reads each path's normals once. Every builder
takes torch_gbm's inputs and returns what its builders return, so a step-form row is timed as a
whole-array one.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
import torch
from torch.utils.checkpoint import checkpoint

from jacbench.problems.gbm import GBMCase
from jacbench.strategies import blocked
from jacbench.strategies.registry import JacobianResult
from jacbench.strategies.torch_gbm import _Inputs, _result, _scalars, _two_jvps, simulate_path

# Steps a segment spans: a checkpointed one's backward pass keeps the state at each segment's
# start and recomputes the steps inside it; a segmented loop compiles one kernel a segment.
SEGMENT = 13

# Inductor fuses at most max_fusion_size nodes into one kernel (64 by default): the GBM's 52
# steps and their tangents fit, the Asian payoff's running mean does not, and its loop then
# wrote about 60 arrays of N values, a path's worth (2.4 GiB at N = 10^7). A forward loop is
# compiled with room for every step's nodes in one kernel.
FUSION_NODES = 1024


def compile_loop(fn):
    """fn under torch.compile, its loop's steps fused into one kernel (FUSION_NODES)."""
    return torch.compile(fn, dynamic=False, options={"max_fusion_size": FUSION_NODES})


class Payoff:
    """The loop's state, step and output for a case's problem, as strategies.jax_steps.Payoff
    (S_T, or the Asian call's payoff); spot enters only finish."""

    def __init__(self, problem: str, steps: int, strike: float):
        self.asian = problem == "asian"
        self.steps = steps
        self.strike = strike

    def start(self, like) -> tuple:
        zero = torch.zeros_like(like)
        return (zero, zero.clone()) if self.asian else (zero,)

    def step(self, state: tuple, vol, zk, dtk, sqk, drift) -> tuple:
        y = state[0] + (drift - 0.5 * vol * vol) * dtk + vol * sqk * zk
        return (y, state[1] + torch.exp(y) / self.steps) if self.asian else (y,)

    def finish(self, spot, state: tuple):
        if self.asian:
            return torch.clamp(spot * state[1] - self.strike, min=0)
        return spot * torch.exp(state[0])


class _Loop:
    """The case's tensors and the loop over its steps: torch_gbm's inputs, dt and sqrt(dt)."""

    def __init__(self, case: GBMCase):
        self.x = _Inputs(case)
        self.payoff = Payoff(case.problem, case.params.steps, float(case.params.spot))
        self.dt = torch.diff(self.x.t)
        self.sq = torch.sqrt(self.dt)

    def states(self, vol, start: tuple, k0: int = 0, k1: int | None = None) -> tuple:
        """The state after steps k0 .. k1 - 1 from start."""
        x = self.x
        for k in range(k0, self.payoff.steps if k1 is None else k1):
            start = self.payoff.step(start, vol, x.z[k], self.dt[k], self.sq[k], x.drift)
        return start

    def f(self, spot, vol):
        """The output (N,): the whole loop, then finish."""
        return self.payoff.finish(spot, self.states(vol, self.payoff.start(self.x.z[0])))

    def carried(self, spot, vol):
        """carried over the case's normals."""
        row = lambda k: (self.x.z[k], self.dt[k], self.sq[k])  # noqa: E731
        start = self.payoff.start(self.x.z[0])
        return carried(self.payoff, spot, vol, row, start, self.x.drift)


def carried(payoff: Payoff, spot, vol, row, start: tuple, drift):
    """Forward mode carried along the steps: the state's tangent with respect to vol beside the
    state, one torch.func.jvp of each step (spot's tangent is zero in the loop: it enters only
    finish); row(k) gives (z_k, dt_k, sqrt(dt_k))."""
    state, tangent = start, tuple(torch.zeros_like(a) for a in start)
    one = torch.ones_like(vol)
    for k in range(payoff.steps):
        zk, dtk, sqk = row(k)
        step = lambda st, v: payoff.step(st, v, zk, dtk, sqk, drift)  # noqa: E731, B023
        state, tangent = torch.func.jvp(step, (state, vol), (tangent, one))
    return carried_finish(payoff, spot, state, tangent)


def _compiled(fn, compiled: bool, fused: bool = True):
    """fn compiled (a forward loop fused, compile_loop; a reverse one as torch.compile
    leaves it) or as it is."""
    if not compiled:
        return fn
    return compile_loop(fn) if fused else torch.compile(fn, dynamic=False)


def _build(
    case: GBMCase, body, compiled: bool, stacked: bool = False, fused: bool = True
) -> Callable:
    """body(loop, spot, vol) -> (out, d_spot, d_vol), compiled or eager, as a JacobianResult;
    stacked: body returns (out, J) with J the (N, 2) Jacobian, written by the compiled call."""
    loop = _Loop(case)
    fn = _compiled(functools.partial(body, loop), compiled, fused)
    out = loop.x.out

    def run():
        if stacked:
            s, j = fn(loop.x.spot, loop.x.vol)
            return JacobianResult(out(j), out(s))
        s, d_spot, d_vol = fn(loop.x.spot, loop.x.vol)
        return _result(d_spot, d_vol, s, out)

    return run


def build_simulation(case: GBMCase, execution: str = "steps-eager") -> Callable[[], np.ndarray]:
    """The step-form simulation: steps-eager, steps-inductor (the loop under torch.compile),
    drawn-inductor (the normals drawn inside, a block of paths a call) or draws-inductor (the
    same draws, summed: drawing alone)."""
    if execution in ("drawn-inductor", "draws-inductor"):
        return _drawn(case, "draws" if execution == "draws-inductor" else "simulation")
    loop = _Loop(case)
    f = _compiled(loop.f, execution == "steps-inductor")

    def run():
        with torch.no_grad():
            return loop.x.out(f(loop.x.spot, loop.x.vol))

    return run


def _carry(loop: _Loop, spot, vol):
    return stacked(*loop.carried(spot, vol))


def stacked(out, d_spot, d_vol) -> tuple:
    """(out, J): the carried loops' two columns written as the (N, 2) Jacobian inside their
    call, so that a compiled one writes J directly, and the outputs take three arrays of N
    values where the columns and their stacked copy took five."""
    return out, torch.stack([d_spot.reshape(-1), d_vol.reshape(-1)], dim=1)


def build_steps_carry(case: GBMCase):
    return _build(case, _carry, compiled=False, stacked=True)


def build_steps_compiled_carry(case: GBMCase):
    return _build(case, _carry, compiled=True, stacked=True)


def build_steps_segmented_carry(case: GBMCase):
    """The carried tangent of steps-compiled-carry, compiled one segment of SEGMENT steps at a
    time: four kernels at M = 52, each reading its segment's rows of normals and the state,
    where one kernel for all 52 steps reads 52 rows at once, every path's 52 numbers side by
    side in memory 4N bytes apart."""
    loop = _Loop(case)
    payoff, drift = loop.payoff, loop.x.drift

    def segment(state, tangent, vol, zs, dts, sqs):
        one = torch.ones_like(vol)
        for k in range(zs.shape[0]):
            step = lambda st, v: payoff.step(st, v, zs[k], dts[k], sqs[k], drift)  # noqa: E731, B023
            state, tangent = torch.func.jvp(step, (state, vol), (tangent, one))
        return state, tangent

    compiled = compile_loop(segment)
    finish = compile_loop(lambda *a: stacked(*carried_finish(payoff, *a)))
    x = loop.x

    def run():
        state = payoff.start(x.z[0])
        tangent = tuple(torch.zeros_like(a) for a in state)
        for k0 in range(0, payoff.steps, SEGMENT):
            k1 = min(k0 + SEGMENT, payoff.steps)
            state, tangent = compiled(state, tangent, x.vol, x.z[k0:k1], loop.dt[k0:k1],
                                      loop.sq[k0:k1])  # fmt: skip
        s, j = finish(x.spot, state, tangent)
        return JacobianResult(x.out(j), x.out(s))

    return run


def build_steps_compiled_jvp(case: GBMCase):
    return _build(case, lambda loop, spot, vol: _two_jvps(loop.f, spot, vol), compiled=True)


def build_steps_compiled_jacfwd(case: GBMCase):
    def body(loop, spot, vol):
        d_spot, d_vol = torch.func.jacfwd(loop.f, argnums=(0, 1))(spot, vol)
        return loop.f(spot, vol), d_spot, d_vol

    return _build(case, body, compiled=True)


def _pathwise(loop: _Loop, spot, vol):
    """The pathwise gradient through the loop: torch.func.grad of sum(S_T) over per-path
    copies (path i depends on copy i alone, so the gradient is the Jacobian's rows)."""

    def total(sp, vp):
        s = loop.payoff.finish(sp, loop.states(vp, loop.payoff.start(loop.x.z[0])))
        return s.sum(), s

    n = loop.x.n
    grad = torch.func.grad(total, argnums=(0, 1), has_aux=True)
    (d_spot, d_vol), s = grad(spot.expand(n).clone(), vol.expand(n).clone())
    return s, d_spot, d_vol


def build_steps_pathwise(case: GBMCase):
    return _build(case, _pathwise, compiled=False)


def build_steps_compiled_pathwise(case: GBMCase):
    return _build(case, _pathwise, compiled=True, fused=False)


def build_steps_compiled_checkpoint(case: GBMCase):
    """The loop with torch.utils.checkpoint around each SEGMENT steps, compiled; the gradient
    of sum(S_T) over per-path copies taken by torch.autograd.grad of its output (torch.func
    does not take checkpoints' saved-tensor hooks), AOTAutograd compiling the backward pass."""
    loop = _Loop(case)
    payoff, n = loop.payoff, loop.x.n

    def forward(sp, vp):
        state = payoff.start(loop.x.z[0])
        for k0 in range(0, payoff.steps, SEGMENT):
            k1 = min(k0 + SEGMENT, payoff.steps)
            state = checkpoint(loop.states, vp, state, k0, k1, use_reentrant=False)
        return payoff.finish(sp, state)

    compiled = torch.compile(forward, dynamic=False)

    def run():
        sp = loop.x.spot.expand(n).clone().requires_grad_()
        vp = loop.x.vol.expand(n).clone().requires_grad_()
        s = compiled(sp, vp)
        d_spot, d_vol = torch.autograd.grad(s.sum(), (sp, vp))
        return _result(d_spot, d_vol, s.detach(), loop.x.out)

    return run


# --- the Asian payoff in the whole-array form: the path built, its dates averaged -----------


def build_compiled_jvp(case: GBMCase):
    """torch_gbm's two torch.func.jvp calls compiled, on the Asian payoff of the whole path
    (the asian problem's whole-array form)."""

    def body(loop: _Loop, spot, vol):
        x = loop.x

        def asian(a, b):
            mean = simulate_path(a, b, x.z, x.t, x.drift)[1:].mean(0)
            return torch.clamp(mean - loop.payoff.strike, min=0)

        return _two_jvps(asian, spot, vol)

    return _build(case, body, compiled=True)


# --- the normals drawn inside the loop (catalog.DRAWN), a block of paths a call -----------


def _drawn(case: GBMCase, what: str):
    """A call over blocks of paths whose normals are drawn one step at a time inside the loop,
    by torch.randn with a generator seeded with the case's seed, the block's index and the
    step's: a step's numbers depend on those three alone, as a counter-based generator's do
    (torch's CPU generator is a Mersenne twister, which has no counter to key). Each step's
    update (and its tangent's) is one compiled call on the block. "jacobian" (the carried
    tangent), "simulation" or "draws" (the normals alone, summed over the steps).

    torch.randn inside the compiled loop would be drawn by inductor's own Philox generator,
    which is counter-based, but three times slower than the generator's on this CPU (20 ns
    a normal against 6 ns): at N = 10^8 that is 104 s of every call."""
    p = case.params
    size = min(blocked.DRAWN_BLOCK, p.paths)
    spot, vol, t, drift, device = _scalars(case)
    dt = torch.diff(t)
    sq = torch.sqrt(dt)
    payoff = Payoff(case.problem, p.steps, float(p.spot))
    generator = torch.Generator(device=device)
    one = torch.ones_like(vol)

    def carry_step(state, tangent, vol, zk, dtk, sqk):
        step = lambda st, v: payoff.step(st, v, zk, dtk, sqk, drift)  # noqa: E731
        return torch.func.jvp(step, (state, vol), (tangent, one))

    def sim_step(state, vol, zk, dtk, sqk):
        if what == "draws":
            return (state[0] + zk,)
        return payoff.step(state, vol, zk, dtk, sqk, drift)

    compiled = torch.compile(carry_step if what == "jacobian" else sim_step, dynamic=False)
    finish = torch.compile(lambda s, st, tg: carried_finish(payoff, s, st, tg), dynamic=False)

    def normals(b: int, k: int):
        generator.manual_seed((p.seed * 1_000_003 + b) * 1_009 + k)
        return torch.randn(size, generator=generator, dtype=spot.dtype, device=device)

    def step(b: int):
        state = payoff.start(torch.zeros(size, dtype=spot.dtype, device=device))
        tangent = tuple(torch.zeros_like(a) for a in state)
        for k in range(p.steps):
            zk = normals(b, k)
            if what == "jacobian":
                state, tangent = compiled(state, tangent, vol, zk, dt[k], sq[k])
            else:
                state = compiled(state, vol, zk, dt[k], sq[k])
        if what == "jacobian":
            out = finish(spot, state, tangent)
        else:
            out = (state[0] if what == "draws" else payoff.finish(spot, state),)
        return tuple(a.detach().cpu().numpy() for a in out)

    return blocked.drawn_runner(case, step, jacobian=what == "jacobian")


def carried_finish(payoff: Payoff, spot, state: tuple, tangent: tuple):
    """The output and its two derivatives from the carried state and its vol tangent."""
    one = torch.ones_like(spot)
    out, d_spot = torch.func.jvp(lambda s: payoff.finish(s, state), (spot,), (one,))
    _, d_vol = torch.func.jvp(lambda st: payoff.finish(spot, st), (state,), (tangent,))
    return out, d_spot, d_vol


def build_drawn_carry(case: GBMCase):
    return _drawn(case, "jacobian")
