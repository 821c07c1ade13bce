"""The teaching forward and reverse modes against the closed form and the frameworks."""

import numpy as np
import pytest

from jacbench.teaching import dual, tape
from jacbench.teaching.gbm_step import closed_form, step

SPOT, VOL, DT, DRIFT = 100.0, 0.2, 1 / 52, 0.03
Z = np.random.default_rng(3).standard_normal(7)


def _f(exp):
    return lambda s, v: step(s, v, Z, DT, DRIFT, exp)


def test_dual_numbers_give_both_jacobian_columns():
    s, d_spot, d_vol = closed_form(SPOT, VOL, Z, DT, DRIFT)
    value, t1 = dual.jvp(_f(dual.exp), (SPOT, VOL), (1.0, 0.0))
    _, t2 = dual.jvp(_f(dual.exp), (SPOT, VOL), (0.0, 1.0))
    np.testing.assert_allclose(value, s, rtol=1e-14)
    np.testing.assert_allclose(t1, d_spot, rtol=1e-13)
    np.testing.assert_allclose(t2, d_vol, rtol=1e-12)


def test_tape_gives_jacobian_rows():
    s, d_spot, d_vol = closed_form(SPOT, VOL, Z, DT, DRIFT)
    for i in range(len(Z)):
        e = np.zeros(len(Z))
        e[i] = 1.0
        value, (g_spot, g_vol), _ = tape.vjp(_f(tape.exp), (SPOT, VOL), e)
        np.testing.assert_allclose(value, s, rtol=1e-14)
        assert g_spot == pytest.approx(d_spot[i], rel=1e-13)
        assert g_vol == pytest.approx(d_vol[i], rel=1e-12)


def test_tape_pathwise_gives_every_row_in_one_sweep():
    s, d_spot, d_vol = closed_form(SPOT, VOL, Z, DT, DRIFT)
    n = len(Z)
    _, (g_spot, g_vol), _ = tape.vjp(_f(tape.exp), (np.full(n, SPOT), np.full(n, VOL)), np.ones(n))
    np.testing.assert_allclose(g_spot, d_spot, rtol=1e-13)
    np.testing.assert_allclose(g_vol, d_vol, rtol=1e-12)


def _paths(z):
    return lambda s, v: step(s, v, z, DT, DRIFT, tape.exp)


def test_tape_storage_grows_with_the_paths():
    sizes = []
    for n in (10, 100):
        _, _, t = tape.vjp(_paths(np.ones(n)), (SPOT, VOL), np.ones(n))
        sizes.append(t.stored_bytes())
    assert sizes[1] > 5 * sizes[0]


def test_agrees_with_torch_and_jax():
    import jax
    import torch

    jax.config.update("jax_enable_x64", True)
    z_t = torch.from_numpy(Z)
    f_t = lambda s, v: step(s, v, z_t, DT, DRIFT, torch.exp)  # noqa: E731
    one, zero = torch.tensor(1.0, dtype=torch.float64), torch.tensor(0.0, dtype=torch.float64)
    sp, vo = torch.tensor(SPOT, dtype=torch.float64), torch.tensor(VOL, dtype=torch.float64)
    _, t_vol = torch.func.jvp(f_t, (sp, vo), (zero, one))
    _, t_dual = dual.jvp(_f(dual.exp), (SPOT, VOL), (0.0, 1.0))
    np.testing.assert_allclose(t_dual, t_vol.numpy(), rtol=1e-12)

    import jax.numpy as jnp

    f_j = lambda s, v: step(s, v, jnp.asarray(Z), DT, DRIFT, jnp.exp).sum()  # noqa: E731
    g = jax.grad(f_j, argnums=(0, 1))(SPOT, VOL)
    _, (g_spot, g_vol), _ = tape.vjp(_f(tape.exp), (SPOT, VOL), np.ones(len(Z)))
    assert float(g[0]) == pytest.approx(float(g_spot), rel=1e-12)
    assert float(g[1]) == pytest.approx(float(g_vol), rel=1e-12)
