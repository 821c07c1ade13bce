"""One GBM step written once, run with plain numbers, dual numbers or a tape."""

from __future__ import annotations

import numpy as np


def step(spot, vol, z, dt: float, drift: float, exp):
    """S_dt = S0 exp((mu - sigma^2/2) dt + sigma sqrt(dt) Z) for any number type with exp."""
    return spot * exp((vol**2) * (-0.5 * dt) + drift * dt + vol * (np.sqrt(dt) * z))


def closed_form(spot: float, vol: float, z: np.ndarray, dt: float, drift: float):
    """(S_dt, dS/dS0, dS/dsigma) of one step."""
    s = spot * np.exp((drift - 0.5 * vol**2) * dt + vol * np.sqrt(dt) * z)
    return s, s / spot, s * (np.sqrt(dt) * z - vol * dt)
