"""The question's PyTorch program on a GPU (torch_gbm.build_question on a device other than
the CPU), in a module of its own so that build_question reads as posted."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch.autograd.functional import jacobian

from jacbench.problems.gbm import GBMCase
from jacbench.strategies import devices
from jacbench.strategies.registry import JacobianResult


def question_on_device(case: GBMCase) -> Callable[[], JacobianResult]:
    """build_question's program on a GPU: as posted but for device=device on the tensors it
    makes, and a generator of the device (torch.manual_seed returns the CPU's, which cannot draw
    there), seeded the same way on every call. Kept apart so that build_question reads as posted.
    """
    p = case.params
    n, m, seed = p.paths, p.steps, p.seed
    device, out = devices.torch_device(case.device), devices.torch_output(case.device)
    generator = torch.Generator(device)

    # fmt: off
    def sim_gbm(N, t, spot, drift, vol, seed=None):
        M = int(t.shape[0])
        dt = torch.diff(t)

        Z = torch.normal(mean=0.0, std=1.0, size=(M - 1, N), generator=generator.manual_seed(seed),
                         device=device)

        W = torch.concatenate([
            torch.zeros(size=(1, N), device=device), torch.sqrt(dt)[:, None] * Z
        ]).cumsum(axis=0)

        S = spot * torch.exp(((drift - 0.5 * vol ** 2) * t)[:, None] + vol * W)
        return S[-1,]
    # fmt: on

    def run() -> JacobianResult:
        spot = torch.tensor(p.spot, requires_grad=True, device=device)
        drift = torch.tensor(p.drift, device=device)
        vol = torch.tensor(p.vol, requires_grad=True, device=device)
        t = torch.linspace(0.0, p.maturity, m + 1, device=device)

        def gbm_wrapper(spot, vol):
            return sim_gbm(n, t, spot, drift, vol, seed)

        j = jacobian(func=gbm_wrapper, inputs=(spot, vol))
        with torch.no_grad():
            terminal = gbm_wrapper(spot, vol)
        jac = torch.stack([j[0].reshape(-1), j[1].reshape(-1)], dim=1)
        return JacobianResult(out(jac), out(terminal))

    return run
