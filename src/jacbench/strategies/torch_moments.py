"""PyTorch strategies for the moments problem's wide 3 x n Jacobian (the second question)."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch.autograd.functional import jacobian

from jacbench.problems.moments import MomentsCase
from jacbench.strategies import devices
from jacbench.strategies.registry import JacobianResult


def f(x: torch.Tensor) -> torch.Tensor:
    """(sum X^2, sum X^3, sum X^4) over the last axis, as in the question."""
    return torch.stack((x.pow(2).sum(-1), x.pow(3).sum(-1), x.pow(4).sum(-1)), -1)


def _result(j: torch.Tensor, value: torch.Tensor, out) -> JacobianResult:
    return JacobianResult(out(j), out(value))


def _x(case: MomentsCase) -> tuple[torch.Tensor, Callable]:
    """X on the case's device, and how a call hands back a tensor (strategies.devices)."""
    x = torch.from_numpy(case.x).to(devices.torch_device(case.device))
    return x, devices.torch_output(case.device)


def _grad_loop(case: MomentsCase, create_graph: bool) -> Callable[[], JacobianResult]:
    x0, out = _x(case)
    # Solution 1 as the question ran it on a GPU: each row copied into J = torch.zeros(3, n),
    # a CPU tensor, and each copy waits for the kernels queued before it. (On the CPU the rows
    # are stacked, as every CPU row was measured.)
    into_host = create_graph and devices.keeps_results(case.device)

    def run() -> JacobianResult:
        x = x0.clone().requires_grad_()
        y = f(x)
        # The question's solution 1. create_graph=True also records the backward pass so that
        # it could be differentiated again: unneeded for a first-order Jacobian, and it costs.
        if into_host:
            J = torch.zeros(3, x.shape[-1], dtype=x.dtype)  # on the CPU, as the question's
            for i in range(3):
                J[i] = torch.autograd.grad(y[i], x, retain_graph=True, create_graph=True)[0]
            return _result(J, y, out)
        rows = [torch.autograd.grad(y[i], x, retain_graph=True, create_graph=create_graph)[0]
                for i in range(3)]  # fmt: skip
        return _result(torch.stack(rows), y, out)

    return run


def build_grad_loop(case: MomentsCase):
    return _grad_loop(case, create_graph=False)


def build_grad_loop_create_graph(case: MomentsCase):
    return _grad_loop(case, create_graph=True)


def build_batched_backward(case: MomentsCase) -> Callable[[], JacobianResult]:
    x0, out = _x(case)

    def run() -> JacobianResult:
        # The question's solution 2: three copies of X, one backward with the identity picks
        # output i of copy i, so the gradient of copy i is row i of the Jacobian.
        xb = x0.repeat(3, 1).requires_grad_()
        f(xb).backward(torch.eye(3, dtype=x0.dtype, device=x0.device))
        return _result(xb.grad, f(x0), out)

    return run


def build_analytic(case: MomentsCase) -> Callable[[], JacobianResult]:
    x, out = _x(case)

    def run() -> JacobianResult:
        # The hand-written derivative of the question's third answer (its "solution 3",
        # torch.stack((2*X, 3*X.pow(2), 4*X.pow(3)), 1) for its X of shape (1, n)): no autodiff.
        return _result(torch.stack((2 * x, 3 * x.pow(2), 4 * x.pow(3)), 0), f(x), out)

    return run


def _functional(case: MomentsCase, **kw) -> Callable[[], JacobianResult]:
    x0, out = _x(case)
    return lambda: _result(jacobian(f, x0, **kw), f(x0), out)


def build_functional_loop(case: MomentsCase):
    return _functional(case)


def build_functional_vectorized(case: MomentsCase):
    return _functional(case, vectorize=True)


def build_jacrev(case: MomentsCase):
    x0, out = _x(case)
    jac = torch.func.jacrev(f)
    return lambda: _result(jac(x0), f(x0), out)


def build_jacfwd(case: MomentsCase):
    x0, out = _x(case)
    jac = torch.func.jacfwd(f)
    return lambda: _result(jac(x0), f(x0), out)


def build_vmap_jacrev(case: MomentsCase):
    x0, out = _x(case)
    # One (3, n) Jacobian per row of X (B, n), vectorized over rows: the per-sample Jacobian.
    jac = torch.func.vmap(torch.func.jacrev(f))
    return lambda: _result(jac(x0), f(x0), out)
