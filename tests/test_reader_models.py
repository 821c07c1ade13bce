"""The reader's models of problems/basket.py (PyTorch) and problems/heston.py (JAX): their
factories keep the contract and their Jacobians are right."""

import numpy as np
import pytest

from jacbench.problems import basket, heston

PATHS = 300


def _relative(got: np.ndarray, want: np.ndarray) -> float:
    """The largest error over the largest entry, column by column (a Greek of one input can be
    near 0 on some paths, where an entry-wise relative error means nothing)."""
    scale = np.max(np.abs(want), axis=0)
    return float(np.max(np.max(np.abs(got - want), axis=0) / scale))


# --- basket (PyTorch) ---


@pytest.mark.parametrize("assets", [1, 2, 4])
def test_basket_jacobian_matches_closed_form(assets):
    import torch

    theta, data = basket.example(PATHS, assets)
    jac = torch.func.jacrev(basket.value)(theta, data)
    assert jac.dtype == torch.float32 and jac.shape == (PATHS, 2 * assets)
    assert _relative(jac.numpy().astype(np.float64), basket.closed_form(theta, data)) < 1e-4


@pytest.mark.parametrize("assets", basket.ASSETS)
def test_basket_factories_keep_the_contract(assets):
    import torch

    factory = getattr(basket, f"example_{assets}")
    theta, (z, chol) = factory(7)
    assert theta.shape == (2 * assets,) and theta.dtype == torch.float32
    assert z.shape == (7, basket.STEPS, assets) and chol.shape == (assets, assets)
    y = basket.value(theta, (z, chol))
    assert y.shape == (7,) and bool(torch.isfinite(y).all())
    again, (z2, chol2) = factory(7)
    assert torch.equal(theta, again) and torch.equal(z, z2) and torch.equal(chol, chol2)


def test_basket_of_one_is_gbm():
    """With one asset L = [[1]]: S_T = S0 exp((r - vol^2/2) T + vol sqrt(dt) sum z)."""
    theta, (z, chol) = basket.example_1(5)
    assert float(chol) == 1.0
    s0, vol = float(theta[0]), float(theta[1])
    drift = (basket.RATE - 0.5 * vol**2) * basket.MATURITY
    want = s0 * np.exp(
        drift + vol * np.sqrt(1 / basket.STEPS) * z.double().numpy().sum(axis=(1, 2))
    )
    np.testing.assert_allclose(basket.value(theta, (z, chol)).numpy(), want, rtol=1e-5)


# --- Heston (JAX) ---

HESTON_PATHS = 40
# Paths whose variance comes within this of 0 at some step are left out of the path-by-path
# finite-difference check: max(v, 0) has a kink there, a step across it breaks the FD, and just
# above it sqrt(v)'s curvature swamps the FD's truncation error. Most paths (3 in 4 here) go below
# 0 at some step, but few come within 1e-4 of it, so the check keeps most paths, truncated ones
# among them.
KINK_MARGIN = 1e-4
# The FD's relative step: below eps^(1/3) ~ 6e-6, so that the curvature of sqrt(v) at small v
# (a path's v comes down to KINK_MARGIN) adds little; its rounding error, eps / step ~ 2e-10,
# stays far under the tolerance.
FD_STEP = 1e-6


@pytest.fixture(scope="module")
def heston_jacobians():
    """The jacfwd Jacobian in float32 and in float64, the FD one in float64, the variance paths."""
    import jax

    theta, z = heston.example(HESTON_PATHS)
    jac32 = np.asarray(jax.jacfwd(heston.value)(theta, z), dtype=np.float64)
    with jax.enable_x64(True):
        import jax.numpy as jnp

        # The same float32 normals and inputs, computed in float64.
        theta64, z64 = jnp.asarray(theta, jnp.float64), jnp.asarray(z, jnp.float64)
        jac64 = np.asarray(jax.jacfwd(heston.value)(theta64, z64))
        fd = np.empty_like(jac64)
        for j in range(theta64.shape[0]):
            h = FD_STEP * abs(float(theta64[j]))
            step = jnp.zeros_like(theta64).at[j].set(h)
            up, down = heston.value(theta64 + step, z64), heston.value(theta64 - step, z64)
            fd[:, j] = (np.asarray(up) - np.asarray(down)) / (2 * h)
        assert jnp.asarray(heston.value(theta64, z64)).dtype == jnp.float64
    variance = heston.variance_paths(np.asarray(theta), np.asarray(z))
    return jac32, jac64, fd, variance


def test_heston_jacobian_matches_finite_differences(heston_jacobians):
    # Path by path, on the paths that keep KINK_MARGIN away from v = 0 at every step (chosen over
    # the mean over paths, which would hide a wrong derivative on one path among many).
    _, jac64, fd, variance = heston_jacobians
    smooth = np.min(np.abs(variance), axis=1) > KINK_MARGIN
    assert smooth.sum() >= HESTON_PATHS // 2, "too few paths away from v = 0 to check"
    assert (variance[smooth] < 0).any(), "no checked path is truncated: max(v, 0) is not tested"
    assert _relative(jac64[smooth], fd[smooth]) < 1e-5


def test_heston_float32_jacobian_matches_float64(heston_jacobians):
    jac32, jac64, _, _ = heston_jacobians
    assert np.isfinite(jac32).all(), "NaN derivatives: sqrt at v = 0 on a truncated path"
    assert _relative(jac32, jac64) < 1e-4


def test_heston_factory_keeps_the_contract():
    theta, z = heston.example(6)
    assert theta.shape == (5,) and str(theta.dtype) == "float32"
    assert z.shape == (6, heston.STEPS, 2) and str(z.dtype) == "float32"
    y = heston.value(theta, z)
    assert y.shape == (6,) and str(y.dtype) == "float32" and np.isfinite(np.asarray(y)).all()
    again, z2 = heston.example(6)
    assert np.array_equal(theta, again) and np.array_equal(z, z2)
