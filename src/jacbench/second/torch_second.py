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
    return [lambda x, k=k: f(x)[k] for k in range(3)]  # one function per output


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


def hvp_forward_over_reverse(x: torch.Tensor, v: torch.Tensor, fn=f) -> torch.Tensor:
    """H_k v for the three outputs at once, (3, n): forward mode pushes v through the reverse
    Jacobian of the vector function (three cotangents, vmapped). H is never formed."""
    return torch.func.jvp(torch.func.jacrev(fn), (x,), (v,))[1]


def hvp_reverse_over_reverse(x: torch.Tensor, v: torch.Tensor, fn=f) -> torch.Tensor:
    """H_k v as the reverse Jacobian of J(x) v, (3, n): a reverse pass over a reverse pass."""
    return torch.func.jacrev(lambda x: torch.func.jacrev(fn)(x) @ v)(x)


def build_hvp_forward_over_reverse(case: MomentsCase) -> Callable[[], np.ndarray]:
    x, v = _on_device(case, case.x), _on_device(case, moments.direction(case))
    out = devices.torch_output(case.device)
    return lambda: out(hvp_forward_over_reverse(x, v))


def build_hvp_reverse_over_reverse(case: MomentsCase) -> Callable[[], np.ndarray]:
    x, v = _on_device(case, case.x), _on_device(case, moments.direction(case))
    out = devices.torch_output(case.device)
    return lambda: out(hvp_reverse_over_reverse(x, v))


# Unit vectors pushed at a time by diagonal-hvps: (CHUNK, 3, n) products held at once.
CHUNK = 64


def diagonal_by_products(x: torch.Tensor, fn=f) -> torch.Tensor:
    """diag(H_k), (3, n), exactly for any f: the n products H_k e_i, CHUNK at a time under vmap,
    keeping entry i of each. Never more than CHUNK columns of H at once; n products in all."""
    n = x.shape[-1]
    product = torch.func.vmap(lambda e: hvp_forward_over_reverse(x, e, fn))
    found = []
    for start in range(0, n, CHUNK):
        idx = torch.arange(start, min(start + CHUNK, n), device=x.device)
        basis = torch.nn.functional.one_hot(idx, n).to(x.dtype)
        found.append(product(basis)[torch.arange(len(idx)), :, idx].T)  # (3, chunk)
    return torch.cat(found, dim=1)


def hutchinson(x: torch.Tensor, probes: torch.Tensor, fn=f) -> torch.Tensor:
    """Hutchinson's estimate of diag(H_k), (3, n): the mean of v * (H_k v) over the probes,
    one product at a time (the memory of one product)."""
    total = 0
    for v in probes:
        total = total + v * hvp_forward_over_reverse(x, v, fn)
    return total / len(probes)


def build_diagonal_hvps(case: MomentsCase) -> Callable[[], np.ndarray]:
    x, out = _on_device(case, case.x), devices.torch_output(case.device)
    return lambda: out(diagonal_by_products(x))


def build_diagonal_hutchinson(case: MomentsCase) -> Callable[[], np.ndarray]:
    x, out = _on_device(case, case.x), devices.torch_output(case.device)
    probes = _on_device(case, moments.probes(case))
    return lambda: out(hutchinson(x, probes))


def build_per_path_second(case: GBMCase) -> Callable[[], np.ndarray]:
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
