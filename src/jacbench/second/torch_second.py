"""Second-order methods in PyTorch."""

from __future__ import annotations

import numpy as np
import torch

from jacbench.problems.gbm import GBMCase
from jacbench.strategies import torch_gbm
from jacbench.strategies.torch_moments import f


def _outputs():
    return [lambda x, k=k: f(x)[k] for k in range(3)]


def functional_hessian(x: np.ndarray) -> np.ndarray:
    xt = torch.from_numpy(x)
    return np.stack([torch.autograd.functional.hessian(g, xt).numpy() for g in _outputs()])


def func_hessian(x: np.ndarray) -> np.ndarray:
    return torch.func.hessian(f)(torch.from_numpy(x)).numpy()


def hvp(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    xt, vt = torch.from_numpy(x), torch.from_numpy(v)
    # Forward over reverse: the directional derivative of the gradient, never forming H.
    return np.stack(
        [torch.func.jvp(torch.func.grad(g), (xt,), (vt,))[1].numpy() for g in _outputs()]
    )


def diagonal(x: np.ndarray) -> np.ndarray:
    return hvp(x, np.ones_like(x))


def greeks(case: GBMCase) -> np.ndarray:
    x = torch_gbm._Inputs(case)

    def total(spot, vol):
        return x.f(spot, vol).sum()

    def pathwise(spot, vol):
        return torch.func.grad(total, argnums=(0, 1))(spot, vol)

    spot, vol = x.spot.expand(x.n).clone(), x.vol.expand(x.n).clone()
    zero, one = torch.zeros_like(spot), torch.ones_like(vol)
    # Path i depends only on copy i: the jvp in vol of the pathwise gradient is, per path,
    # (d2 S / dS0 dsigma, d2 S / dsigma2).
    _, (d_spot_vol, d_vol_vol) = torch.func.jvp(pathwise, (spot, vol), (zero, one))
    return np.stack([d_spot_vol.numpy(), d_vol_vol.numpy()], axis=1)
