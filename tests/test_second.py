"""Second-order methods against the closed forms: Hessians of the moments problem, per-path
second-order Greeks of the GBM simulation. Parametrized over the second-order registry."""

import numpy as np
import pytest

from jacbench.errors import UsageError
from jacbench.problems import gbm, moments
from jacbench.second import registry

X = moments.make_case(moments.MomentsParams(inputs=40, dtype="float64")).x
V = np.random.default_rng(5).standard_normal(40)


def _of(kind):
    return [m for m in registry.METHODS if m.kind == kind]


@pytest.mark.parametrize("method", _of("dense"), ids=lambda m: m.key)
def test_dense_hessian_is_the_diagonal_matrix(method):
    h = method.load()(X)
    assert h.shape == (3, 40, 40)
    expected = np.stack([np.diag(d) for d in moments.hessian_diagonal(X)])
    np.testing.assert_allclose(h, expected, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("method", _of("hvp"), ids=lambda m: m.key)
def test_hessian_vector_product(method):
    np.testing.assert_allclose(method.load()(X, V), moments.hvp_closed_form(X, V), rtol=1e-12)


@pytest.mark.parametrize("method", _of("diagonal"), ids=lambda m: m.key)
def test_exact_diagonal(method):
    np.testing.assert_allclose(method.load()(X), moments.hessian_diagonal(X), rtol=1e-12)


@pytest.mark.parametrize("dtype,tol", [("float64", 1e-10), ("float32", 1e-4)])
@pytest.mark.parametrize("method", _of("greeks"), ids=lambda m: m.key)
def test_per_path_second_order_greeks(method, dtype, tol):
    case = gbm.make_case(gbm.GBMParams(paths=1000, dtype=dtype))
    greeks = method.load()(case)
    assert greeks.shape == (1000, 2)
    reference = gbm.hessian_closed_form(case)[:, 1:]
    assert gbm.relative_error(greeks, reference) < tol


def test_every_framework_has_dense_hvp_and_greeks():
    for fw in ("torch", "tensorflow", "jax"):
        kinds = {m.kind for m in registry.METHODS if m.framework == fw}
        assert {"dense", "hvp", "greeks"} <= kinds, fw


def test_unknown_method_lists_the_valid_ones():
    with pytest.raises(UsageError, match="jax/hvp"):
        registry.get("jax", "newton")
