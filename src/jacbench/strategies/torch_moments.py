"""PyTorch strategies for the moments problem's wide 3 x n Jacobian (the second question)."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch.autograd.functional import jacobian

from jacbench.problems.moments import MomentsCase
from jacbench.strategies.registry import JacobianResult


def f(x: torch.Tensor) -> torch.Tensor:
    """(sum X^2, sum X^3, sum X^4) over the last axis, as in the question."""
    return torch.stack((x.pow(2).sum(-1), x.pow(3).sum(-1), x.pow(4).sum(-1)), -1)


def _result(j: torch.Tensor, value: torch.Tensor) -> JacobianResult:
    return JacobianResult(j.detach().numpy(), value.detach().numpy())


def _x(case: MomentsCase) -> torch.Tensor:
    return torch.from_numpy(case.x)


def _grad_loop(case: MomentsCase, create_graph: bool) -> Callable[[], JacobianResult]:
    x0 = _x(case)

    def run() -> JacobianResult:
        x = x0.clone().requires_grad_()
        y = f(x)
        # The question's solution 1. create_graph=True also records the backward pass so that
        # it could be differentiated again: unneeded for a first-order Jacobian, and it costs.
        rows = [torch.autograd.grad(y[i], x, retain_graph=True, create_graph=create_graph)[0]
                for i in range(3)]  # fmt: skip
        return _result(torch.stack(rows), y)

    return run


def build_grad_loop(case: MomentsCase):
    return _grad_loop(case, create_graph=False)


def build_grad_loop_create_graph(case: MomentsCase):
    return _grad_loop(case, create_graph=True)


def build_batched_backward(case: MomentsCase) -> Callable[[], JacobianResult]:
    x0 = _x(case)

    def run() -> JacobianResult:
        # The question's solution 2: three copies of X, one backward with the identity picks
        # output i of copy i, so the gradient of copy i is row i of the Jacobian.
        xb = x0.repeat(3, 1).requires_grad_()
        f(xb).backward(torch.eye(3, dtype=x0.dtype))
        return _result(xb.grad, f(x0))

    return run


def _functional(case: MomentsCase, **kw) -> Callable[[], JacobianResult]:
    x0 = _x(case)
    return lambda: _result(jacobian(f, x0, **kw), f(x0))


def build_functional_loop(case: MomentsCase):
    return _functional(case)


def build_functional_vectorized(case: MomentsCase):
    return _functional(case, vectorize=True)


def build_jacrev(case: MomentsCase):
    x0 = _x(case)
    jac = torch.func.jacrev(f)
    return lambda: _result(jac(x0), f(x0))


def build_jacfwd(case: MomentsCase):
    x0 = _x(case)
    jac = torch.func.jacfwd(f)
    return lambda: _result(jac(x0), f(x0))


def build_vmap_jacrev(case: MomentsCase):
    x0 = _x(case)
    # One (3, n) Jacobian per row of X (B, n), vectorized over rows: the per-sample Jacobian.
    jac = torch.func.vmap(torch.func.jacrev(f))
    return lambda: _result(jac(x0), f(x0))
