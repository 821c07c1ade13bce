"""A basket of correlated GBM assets: a reader's model for ``jacbench advise``, written as a
reader would (a Python loop over weekly steps in PyTorch), so the book can advise on a model with
many inputs (2a: a spot and a vol per asset) rather than GBM's one.

``value(theta, data)`` is the FUNCTION; ``example_1`` ... ``example_16`` are FACTORY(n) for
a = 1, 2, 4, 8, 16 assets; ``closed_form`` is the exact pathwise Jacobian the tests check against.
"""

from __future__ import annotations

import numpy as np
import torch

STEPS = 52  # weekly steps
MATURITY = 1.0  # years
RATE = 0.03
CORRELATION = 0.5  # between every pair of assets
SEED = 20240
ASSETS = (1, 2, 4, 8, 16)


def correlation_factor(assets: int) -> torch.Tensor:
    """L, the lower Cholesky factor of the (a, a) matrix with 1 on the diagonal and 0.5 off it."""
    corr = torch.full((assets, assets), CORRELATION, dtype=torch.float64)
    corr.fill_diagonal_(1.0)
    return torch.linalg.cholesky(corr).to(torch.float32)


def value(theta: torch.Tensor, data: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    """The basket's terminal value per path, sum_i w_i S_T^i with w_i = 1/a: shape (n,).

    theta is concat(spots, vols), shape (2a,); data is (z, L): the normals (n, M, a), paths
    first, and the Cholesky factor (a, a).
    """
    z, chol = data
    assets = chol.shape[0]
    steps = z.shape[1]
    dt = MATURITY / steps
    spots, vols = theta[:assets], theta[assets:]
    drift = (RATE - 0.5 * vols**2) * dt
    shock = vols * dt**0.5
    path = [spots.expand(z.shape[0], assets)]
    for t in range(steps):
        correlated = z[:, t, :] @ chol.T
        path.append(path[-1] * torch.exp(drift + shock * correlated))
    paths = torch.stack(path, dim=1)  # (n, M + 1, a): the whole path, as a reader keeps it
    return paths[:, -1, :].sum(dim=1) / assets


def example(n: int, assets: int) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
    """(theta, (z, L)) for a assets and n paths; the same values on every call.

    Spots are 100 + i and vols 0.15 + 0.01 i, i = 0..a-1. z is data's largest tensor (n 52 a
    entries against L's a^2): the contract splits the leaves whose leading dimension is that of
    data's largest tensor, so z splits by path and L, passed whole, never does (even when n == a).
    """
    index = torch.arange(assets, dtype=torch.float32)
    theta = torch.cat([100.0 + index, 0.15 + 0.01 * index])
    generator = torch.Generator().manual_seed(SEED + assets)
    z = torch.randn((n, STEPS, assets), generator=generator, dtype=torch.float32)
    return theta, (z, correlation_factor(assets))


def example_1(n: int):
    """FACTORY(n) of a one-asset basket: 2 inputs."""
    return example(n, 1)


def example_2(n: int):
    """FACTORY(n) of a two-asset basket: 4 inputs."""
    return example(n, 2)


def example_4(n: int):
    """FACTORY(n) of a four-asset basket: 8 inputs."""
    return example(n, 4)


def example_8(n: int):
    """FACTORY(n) of an eight-asset basket: 16 inputs."""
    return example(n, 8)


def example_16(n: int):
    """FACTORY(n) of a sixteen-asset basket: 32 inputs."""
    return example(n, 16)


def closed_form(theta: torch.Tensor, data: tuple[torch.Tensor, torch.Tensor]) -> np.ndarray:
    """The exact pathwise Jacobian dY/dtheta in float64, shape (n, 2a).

    dY/dS0_i = w_i S_T^i / S0_i and dY/dvol_i = w_i S_T^i (-vol_i T + sqrt(dt) sum_t (L z_t)_i).
    """
    z, chol = (np.asarray(x.detach().cpu(), dtype=np.float64) for x in data)
    theta = np.asarray(theta.detach().cpu(), dtype=np.float64)
    assets = chol.shape[0]
    steps = z.shape[1]
    dt = MATURITY / steps
    spots, vols = theta[:assets], theta[assets:]
    summed = z.sum(axis=1) @ chol.T  # (n, a): sum_t (L z_t)_i
    log_growth = (RATE - 0.5 * vols**2) * MATURITY + vols * np.sqrt(dt) * summed
    weighted = np.exp(log_growth) * spots / assets  # w_i S_T^i
    d_spots = weighted / spots
    d_vols = weighted * (-vols * MATURITY + np.sqrt(dt) * summed)
    return np.concatenate([d_spots, d_vols], axis=1)
