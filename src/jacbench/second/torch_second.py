"""Second-order methods in PyTorch, as builders: build_NAME(case) -> no-argument callable."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from jacbench.problems import moments
from jacbench.problems.gbm import GBMCase
from jacbench.problems.moments import MomentsCase
from jacbench.strategies import devices, torch_gbm
from jacbench.strategies.torch_moments import f


def _outputs():
    return [lambda x, k=k: f(x)[k] for k in range(3)]


def _on_device(case, array: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(array).to(devices.torch_device(case.device))


def _stack(case) -> Callable[[list[torch.Tensor]], np.ndarray | torch.Tensor]:
    """The three outputs' results stacked: in numpy on the CPU, as every CPU row was measured;
    on a GPU in one tensor left there (strategies.devices)."""
    if devices.keeps_results(case.device):
        return lambda rows: torch.stack(rows).detach()
    return lambda rows: np.stack([r.numpy() for r in rows])


def build_functional_hessian(case: MomentsCase) -> Callable[[], np.ndarray]:
    x, stack = _on_device(case, case.x), _stack(case)
    hessian = torch.autograd.functional.hessian
    return lambda: stack([hessian(g, x) for g in _outputs()])


def build_func_hessian(case: MomentsCase) -> Callable[[], np.ndarray]:
    x, out = _on_device(case, case.x), devices.torch_output(case.device)
    hessian = torch.func.hessian(f)
    return lambda: out(hessian(x))


def _hvp(x: torch.Tensor, v: torch.Tensor, stack) -> np.ndarray:
    # Forward over reverse: the directional derivative of the gradient, never forming H.
    return stack([torch.func.jvp(torch.func.grad(g), (x,), (v,))[1] for g in _outputs()])


def build_hvp(case: MomentsCase) -> Callable[[], np.ndarray]:
    x, v = _on_device(case, case.x), _on_device(case, moments.direction(case))
    stack = _stack(case)
    return lambda: _hvp(x, v, stack)


def build_diagonal(case: MomentsCase) -> Callable[[], np.ndarray]:
    x, stack = _on_device(case, case.x), _stack(case)
    ones = torch.ones_like(x)
    return lambda: _hvp(x, ones, stack)


def build_greeks(case: GBMCase) -> Callable[[], np.ndarray]:
    x = torch_gbm._Inputs(case)

    def total(spot, vol):
        return x.f(spot, vol).sum()

    def pathwise(spot, vol):
        return torch.func.grad(total, argnums=(0, 1))(spot, vol)

    def run() -> np.ndarray:
        spot, vol = x.spot.expand(x.n).clone(), x.vol.expand(x.n).clone()
        zero, one = torch.zeros_like(spot), torch.ones_like(vol)
        # Path i depends only on copy i: the jvp in vol of the pathwise gradient is, per path,
        # (d2 S / dS0 dsigma, d2 S / dsigma2).
        _, (d_spot_vol, d_vol_vol) = torch.func.jvp(pathwise, (spot, vol), (zero, one))
        if devices.keeps_results(case.device):
            return torch.stack([d_spot_vol, d_vol_vol], dim=1)
        return np.stack([d_spot_vol.numpy(), d_vol_vol.numpy()], axis=1)

    return run
