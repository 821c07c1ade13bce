"""PyTorch strategies for the GBM Jacobian."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from torch.autograd.functional import jacobian

from jacbench.problems.gbm import GBMCase
from jacbench.strategies import blocked, devices
from jacbench.strategies.registry import JacobianResult


def simulate(spot, vol, z, t, drift):
    """S_T from normals z (M, N) on grid t (M+1,). spot and vol are scalars or per-path (N,)."""
    return simulate_path(spot, vol, z, t, drift)[-1]


def _brownian(z, t):
    """W on the grid, (M+1, N), from normals z (M, N)."""
    return torch.cat([torch.zeros_like(z[:1]), torch.sqrt(torch.diff(t))[:, None] * z]).cumsum(0)


def simulate_path(spot, vol, z, t, drift):
    """The whole path S, (M+1, N): what the question keeps. A compiler given only S_T to return
    reduces the cumulative sum instead of building it; returned, the path has to be built."""
    return spot * torch.exp((drift - 0.5 * vol**2) * t[:, None] + vol * _brownian(z, t))


def hand_fused(spot, vol, z, t, drift):
    """The floor a Jacobian can reach: S_T and both derivatives written by hand,
    dS_T/dS0 = S_T / S0 and dS_T/dsigma = S_T (W_T - sigma T), in one pass, no AD. Like a
    Jacobian it returns S_T and the two columns, not the path: compiled, the compiler keeps
    what it needs of the path and no more, as it does for a Jacobian."""
    w = _brownian(z, t)
    path = spot * torch.exp((drift - 0.5 * vol**2) * t[:, None] + vol * w)
    s_t = path[-1]
    return s_t, s_t / spot, s_t * (w[-1] - vol * t[-1])


def brownian_terminal(z, t):
    """W_T alone from normals z (M, N) on grid t (M+1,): the last row of simulate's W, summed
    without keeping the rows before it."""
    return (torch.sqrt(torch.diff(t))[:, None] * z).sum(dim=0)


def simulate_terminal(spot, vol, w_t, maturity, drift):
    """S_T from W_T (N,) with no path: reverse mode's cotangent of one output is N values."""
    return spot * torch.exp((drift - 0.5 * vol**2) * maturity + vol * w_t)


class _Inputs:
    """The case's arrays as tensors on its device; spot and vol as 0-d leaves."""

    def __init__(self, case: GBMCase):
        p = case.params
        self.dtype = getattr(torch, p.dtype)
        self.device = devices.torch_device(case.device)
        self.z = torch.from_numpy(case.normals).to(self.device)
        self.t = torch.from_numpy(case.t).to(self.device)
        self.drift = torch.tensor(p.drift, dtype=self.dtype, device=self.device)
        self.spot = torch.tensor(p.spot, dtype=self.dtype, device=self.device)
        self.vol = torch.tensor(p.vol, dtype=self.dtype, device=self.device)
        self.n = p.paths
        self.chunk_size = p.chunk_size
        self.out = devices.torch_output(case.device)

    def f(self, spot, vol):
        return simulate(spot, vol, self.z, self.t, self.drift)

    def leaves(self):
        return self.spot.clone().requires_grad_(), self.vol.clone().requires_grad_()


def _result(d_spot, d_vol, terminal, out) -> JacobianResult:
    j = torch.stack([d_spot.reshape(-1), d_vol.reshape(-1)], dim=1)
    return JacobianResult(out(j), out(terminal))


def build_simulation(case: GBMCase, execution: str = "eager") -> Callable[[], np.ndarray]:
    if execution == "blocked-eager":
        return _blocked_simulation(case)
    x = _Inputs(case)
    f = x.f
    if execution == "inductor":
        f = torch.compile(f, dynamic=False)

    def run():
        with torch.no_grad():
            return x.out(f(x.spot, x.vol))

    return run


def build_simulation_path(case: GBMCase, execution: str = "eager") -> Callable[[], np.ndarray]:
    """The simulation returning the whole path (strategies.registry.simulation): eager, or
    under torch.compile, where returning the path keeps the compiler from dropping it."""
    x = _Inputs(case)

    def f(spot, vol):
        return simulate_path(spot, vol, x.z, x.t, x.drift)

    if execution == "inductor":
        f = torch.compile(f, dynamic=False)

    def run():
        with torch.no_grad():
            return x.out(f(x.spot, x.vol)[-1])

    return run


def build_hand_fused(case: GBMCase) -> Callable[[], JacobianResult]:
    """hand_fused under torch.compile."""
    x = _Inputs(case)
    fused = torch.compile(lambda spot, vol: hand_fused(spot, vol, x.z, x.t, x.drift),
                          dynamic=False)  # fmt: skip

    def run() -> JacobianResult:
        with torch.no_grad():
            s_t, d_spot, d_vol = fused(x.spot, x.vol)
        return _result(d_spot, d_vol, s_t, x.out)

    return run


def build_question(case: GBMCase) -> Callable[[], JacobianResult]:
    """The question's PyTorch program, kept as written (float32, its own normals)."""
    if case.device != "cpu":  # the same program, its tensors made on the GPU
        from jacbench.strategies.torch_question import question_on_device

        return question_on_device(case)
    p = case.params
    n, m, seed = p.paths, p.steps, p.seed

    # The question's function as posted, names and layout included.
    # fmt: off
    def sim_gbm(N, t, spot, drift, vol, seed=None):
        M = int(t.shape[0])
        dt = torch.diff(t)

        Z = torch.normal(mean=0.0, std=1.0, size=(M - 1, N), generator=torch.manual_seed(seed))

        W = torch.concatenate([
            torch.zeros(size=(1, N)), torch.sqrt(dt)[:, None] * Z
        ]).cumsum(axis=0)

        S = spot * torch.exp(((drift - 0.5 * vol ** 2) * t)[:, None] + vol * W)
        return S[-1,]
    # fmt: on

    def run() -> JacobianResult:
        spot = torch.tensor(p.spot, requires_grad=True)
        drift = torch.tensor(p.drift)
        vol = torch.tensor(p.vol, requires_grad=True)
        t = torch.linspace(0.0, p.maturity, m + 1)

        def gbm_wrapper(spot, vol):
            return sim_gbm(n, t, spot, drift, vol, seed)

        j = jacobian(func=gbm_wrapper, inputs=(spot, vol))
        with torch.no_grad():
            terminal = gbm_wrapper(spot, vol)
        return _result(j[0], j[1], terminal, devices.torch_output("cpu"))

    return run


def _functional(case: GBMCase, **kw) -> Callable[[], JacobianResult]:
    x = _Inputs(case)

    def run() -> JacobianResult:
        d_spot, d_vol = jacobian(x.f, (x.spot, x.vol), **kw)
        with torch.no_grad():
            terminal = x.f(x.spot, x.vol)
        return _result(d_spot, d_vol, terminal, x.out)

    return run


def build_functional_loop(case: GBMCase):
    return _functional(case)


def build_functional_vectorized(case: GBMCase):
    return _functional(case, vectorize=True)


def build_functional_forward(case: GBMCase):
    return _functional(case, vectorize=True, strategy="forward-mode")


def build_grad_loop(case: GBMCase) -> Callable[[], JacobianResult]:
    x = _Inputs(case)

    def run() -> JacobianResult:
        spot, vol = x.leaves()
        s = x.f(spot, vol)
        rows = [torch.autograd.grad(s[i], (spot, vol), retain_graph=True) for i in range(x.n)]
        d_spot = torch.stack([r[0] for r in rows])
        d_vol = torch.stack([r[1] for r in rows])
        return _result(d_spot, d_vol, s, x.out)

    return run


def build_batched_backward(case: GBMCase) -> Callable[[], JacobianResult]:
    x = _Inputs(case)

    def run() -> JacobianResult:
        spot, vol = x.leaves()
        s = x.f(spot, vol)
        eye = torch.eye(x.n, dtype=x.dtype, device=x.device)
        d_spot, d_vol = torch.autograd.grad(s, (spot, vol), grad_outputs=eye, is_grads_batched=True)
        return _result(d_spot, d_vol, s, x.out)

    return run


def _func_transform(case: GBMCase, transform, **kw) -> Callable[[], JacobianResult]:
    x = _Inputs(case)
    jac = transform(x.f, argnums=(0, 1), **kw)

    def run() -> JacobianResult:
        d_spot, d_vol = jac(x.spot, x.vol)
        with torch.no_grad():
            terminal = x.f(x.spot, x.vol)
        return _result(d_spot, d_vol, terminal, x.out)

    return run


def build_jacrev(case: GBMCase):
    return _func_transform(case, torch.func.jacrev)


def build_jacrev_terminal(case: GBMCase) -> Callable[[], JacobianResult]:
    """torch.func.jacrev of S_T computed from W_T: the same vmap over N VJPs as build_jacrev,
    each through an N-sized graph instead of the (M+1) x N one that s[-1] scatters into."""
    x = _Inputs(case)

    def run() -> JacobianResult:
        # W_T does not depend on spot or vol: computed outside the differentiated function.
        w_t = brownian_terminal(x.z, x.t)
        f = lambda spot, vol: simulate_terminal(spot, vol, w_t, x.t[-1], x.drift)  # noqa: E731
        d_spot, d_vol = torch.func.jacrev(f, argnums=(0, 1))(x.spot, x.vol)
        with torch.no_grad():
            terminal = f(x.spot, x.vol)
        return _result(d_spot, d_vol, terminal, x.out)

    return run


def build_jacrev_chunked(case: GBMCase):
    return _func_transform(case, torch.func.jacrev, chunk_size=case.params.chunk_size)


def build_jacfwd(case: GBMCase):
    return _func_transform(case, torch.func.jacfwd)


def _two_jvps(f, spot, vol):
    one, zero = torch.ones_like(spot), torch.zeros_like(spot)
    terminal, d_spot = torch.func.jvp(f, (spot, vol), (one, zero))
    _, d_vol = torch.func.jvp(f, (spot, vol), (zero, one))
    return terminal, d_spot, d_vol


def build_jvp(case: GBMCase) -> Callable[[], JacobianResult]:
    x = _Inputs(case)

    def run() -> JacobianResult:
        terminal, d_spot, d_vol = _two_jvps(x.f, x.spot, x.vol)
        return _result(d_spot, d_vol, terminal, x.out)

    return run


def _pathwise(f, spot, vol, n):
    # One copy of each parameter per path: path i depends only on copy i, so the gradient
    # of sum(S_T) with respect to copy i is exactly row i of the Jacobian.
    spot = spot.expand(n).clone().requires_grad_()
    vol = vol.expand(n).clone().requires_grad_()
    terminal = f(spot, vol)
    d_spot, d_vol = torch.autograd.grad(terminal.sum(), (spot, vol))
    return terminal, d_spot, d_vol


def build_pathwise(case: GBMCase) -> Callable[[], JacobianResult]:
    x = _Inputs(case)

    def run() -> JacobianResult:
        terminal, d_spot, d_vol = _pathwise(x.f, x.spot, x.vol, x.n)
        return _result(d_spot, d_vol, terminal, x.out)

    return run


def build_compiled_jvp(case: GBMCase) -> Callable[[], JacobianResult]:
    x = _Inputs(case)
    compiled = torch.compile(lambda spot, vol: _two_jvps(x.f, spot, vol), dynamic=False)

    def run() -> JacobianResult:
        terminal, d_spot, d_vol = compiled(x.spot, x.vol)
        return _result(d_spot, d_vol, terminal, x.out)

    return run


def build_compiled_pathwise(case: GBMCase) -> Callable[[], JacobianResult]:
    x = _Inputs(case)

    def total(spot, vol):
        s = x.f(spot, vol)
        return s.sum(), s

    def pathwise(spot, vol):
        # Per-path copies as in build_pathwise, written with torch.func.grad so that
        # torch.compile can trace the forward and backward passes into one fused graph.
        grad = torch.func.grad(total, argnums=(0, 1), has_aux=True)
        (d_spot, d_vol), s = grad(spot.expand(x.n), vol.expand(x.n))
        return s, d_spot, d_vol

    compiled = torch.compile(pathwise, dynamic=False)

    def run() -> JacobianResult:
        s, d_spot, d_vol = compiled(x.spot, x.vol)
        return _result(d_spot, d_vol, s, x.out)

    return run


# --- path-blocked (see strategies.blocked): one block of paths at a time ---------------------


def _scalars(case: GBMCase):
    """spot, vol, t, drift as tensors on the case's device: a blocked strategy's inputs, the
    normals excepted; and the device."""
    p = case.params
    dtype, device = getattr(torch, p.dtype), devices.torch_device(case.device)
    return (
        torch.tensor(p.spot, dtype=dtype, device=device),
        torch.tensor(p.vol, dtype=dtype, device=device),
        torch.from_numpy(case.t).to(device),
        torch.tensor(p.drift, dtype=dtype, device=device),
        device,
    )


# A block's normals are numpy's (strategies.blocked): on a GPU each block is copied there, and
# its results copied back into the (N,) host arrays, which waits for the block's work.
def _host(*tensors) -> tuple[np.ndarray, ...]:
    return tuple(t.detach().cpu().numpy() for t in tensors)


def _blocked_simulation(case: GBMCase, block_size: int | None = None):
    spot, vol, t, drift, device = _scalars(case)

    def step(z):
        with torch.no_grad():
            return _host(simulate(spot, vol, torch.from_numpy(z).to(device), t, drift))

    return blocked.simulation_runner(case, step, block_size)


def build_blocked_jvp(case: GBMCase, block_size: int | None = None):
    """The two torch.func.jvp calls of build_jvp, on one block of paths at a time."""
    spot, vol, t, drift, device = _scalars(case)

    def step(z):
        z = torch.from_numpy(z).to(device)
        return _host(*_two_jvps(lambda a, b: simulate(a, b, z, t, drift), spot, vol))

    return blocked.jacobian_runner(case, step, block_size)


def build_blocked_pathwise(case: GBMCase, block_size: int | None = None):
    """The pathwise gradient of build_pathwise, on one block of paths at a time."""
    spot, vol, t, drift, device = _scalars(case)

    def step(z):
        z = torch.from_numpy(z).to(device)
        f = lambda a, b: simulate(a, b, z, t, drift)  # noqa: E731
        return _host(*_pathwise(f, spot, vol, z.shape[1]))

    return blocked.jacobian_runner(case, step, block_size)
