"""Second-order methods against the closed forms: Hessians of the moments problem, per-path
second-order Greeks of the GBM simulation. Parametrized over the second-order registry."""

import numpy as np
import pytest

from jacbench.constants import TOLERANCE
from jacbench.errors import UnsupportedConfiguration, UsageError
from jacbench.measure.targets import parse
from jacbench.problems import gbm, moments
from jacbench.second import registry

MOMENTS = {d: moments.make_case(moments.MomentsParams(inputs=40, dtype=d)) for d in moments.DTYPES}
GBM = {d: gbm.make_case(gbm.GBMParams(paths=1000, dtype=d)) for d in gbm.DTYPES}
PAIRS = [(m, d) for m in registry.METHODS for d in ("float32", "float64")]


@pytest.mark.parametrize("pair", PAIRS, ids=[f"{m.key}-{d}" for m, d in PAIRS])
def test_method_matches_the_closed_form(pair):
    method, dtype = pair
    case = (GBM if method.problem == "gbm" else MOMENTS)[dtype]
    out = method.build(case)()
    expected = method.reference(case)
    assert out.shape == expected.shape
    assert method.error(case, out) < TOLERANCE[dtype]


def test_dense_hessian_is_the_diagonal_matrix():
    case = MOMENTS["float64"]
    h = registry.get("torch", "func-hessian").build(case)()
    np.testing.assert_allclose(np.diagonal(h, axis1=1, axis2=2), moments.hessian_diagonal(case.x))
    off = h - np.stack([np.diag(np.diagonal(k)) for k in h])
    assert np.abs(off).max() == 0.0


def test_the_checks_can_fail():
    case = MOMENTS["float64"]
    method = registry.get("jax", "hvp")
    out = method.build(case)().copy()
    out[1, 7] *= 1.01
    assert method.error(case, out) > 1e-4
    greeks = registry.get("jax", "greeks")
    wrong = gbm.hessian_closed_form(GBM["float64"])[:, :2]  # the wrong columns
    assert greeks.error(GBM["float64"], wrong) > 0.1


def test_hvp_direction_is_fixed_by_the_seed():
    a, b = (moments.make_case(moments.MomentsParams(inputs=10, seed=s)) for s in (1, 1))
    np.testing.assert_array_equal(moments.direction(a), moments.direction(b))
    c = moments.make_case(moments.MomentsParams(inputs=10, seed=2))
    assert not np.array_equal(moments.direction(a), moments.direction(c))


def test_every_framework_has_dense_hvp_and_greeks():
    for fw in ("torch", "tensorflow", "jax"):
        kinds = {m.kind for m in registry.METHODS if m.framework == fw}
        assert {"dense", "hvp", "greeks"} <= kinds, fw


def test_a_method_refuses_the_other_problem():
    with pytest.raises(UnsupportedConfiguration, match="takes the gbm problem"):
        registry.get("torch", "greeks").build(MOMENTS["float32"])


def test_unknown_method_lists_the_valid_ones():
    with pytest.raises(UsageError, match="jax/hvp"):
        registry.get("jax", "newton")
    assert parse("jax", "second:hvp").record is registry.get("jax", "hvp")


def test_jax_greeks_as_installed_use_ynnpack_and_the_variant_does_not():
    # In float32 YNNPACK's reduction over the time axis stops scaling past the cache (36.6 s
    # at N = 10^6 against 4.3 s in float64); see jax_second. Both compile float32 code only.
    from jacbench.second import jax_second
    from jacbench.strategies import jax_gbm

    args = jax_gbm._args(GBM["float32"])
    assert {a.dtype for a in args} == {np.dtype("float32")}
    installed = jax_second._greeks.lower(*args).compile().as_text()
    variant = jax_second._greeks_no_ynn.lower(*args).compile().as_text()
    assert "__ynn_fusion" in installed and "__ynn_fusion" not in variant
    assert "f64[" not in installed and "f64[" not in variant
