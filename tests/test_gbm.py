"""The GBM problem: simulator and closed forms checked against each other and by bumping."""

from dataclasses import replace

import numpy as np
import pytest

from jacbench.errors import UsageError
from jacbench.problems import gbm


def _case(**kw) -> gbm.GBMCase:
    return gbm.make_case(gbm.GBMParams(**{"paths": 500, "steps": 12, "dtype": "float64", **kw}))


def _bump(case: gbm.GBMCase, fn, name: str, h: float):
    up = replace(case, params=replace(case.params, **{name: getattr(case.params, name) + h}))
    dn = replace(case, params=replace(case.params, **{name: getattr(case.params, name) - h}))
    return (fn(up) - fn(dn)) / (2 * h)


def test_normals_are_reproducible_and_standard():
    z1 = gbm.draw_normals(20_000, 3, seed=7)
    z2 = gbm.draw_normals(20_000, 3, seed=7)
    assert z1.shape == (3, 20_000)
    np.testing.assert_array_equal(z1, z2)
    assert not np.array_equal(z1, gbm.draw_normals(20_000, 3, seed=8))
    assert abs(z1.mean()) < 0.02 and abs(z1.std() - 1) < 0.02
    # Drawn a step at a time, the numbers are one whole draw's, rounded to the dtype.
    whole = np.random.default_rng(7).standard_normal((3, 20_000))
    np.testing.assert_array_equal(z1, whole)
    np.testing.assert_array_equal(gbm.draw_normals(20_000, 3, seed=7, dtype="float32"),
                                  whole.astype(np.float32))  # fmt: skip


def test_simulator_matches_closed_form_terminal():
    case = _case()
    np.testing.assert_allclose(gbm.simulate(case), gbm.terminal_closed_form(case), rtol=1e-13)


def test_float32_case_uses_the_same_normals_rounded():
    c64, c32 = _case(), _case(dtype="float32")
    assert c32.normals.dtype == np.float32 and c32.t.dtype == np.float32
    np.testing.assert_array_equal(c32.normals, c64.normals.astype(np.float32))
    np.testing.assert_allclose(gbm.simulate(c32), gbm.simulate(c64), rtol=1e-5)


def test_terminal_log_has_gbm_moments():
    case = _case(paths=200_000, steps=4)
    p = case.params
    log_s = np.log(gbm.terminal_closed_form(case) / p.spot)
    assert log_s.mean() == pytest.approx((p.drift - p.vol**2 / 2) * p.maturity, abs=3e-3)
    assert log_s.var() == pytest.approx(p.vol**2 * p.maturity, rel=1e-2)


@pytest.mark.parametrize("column,name,h", [(0, "spot", 1e-3), (1, "vol", 1e-6)])
def test_jacobian_closed_form_matches_bumped_simulation(column, name, h):
    case = _case()
    fd = _bump(case, gbm.simulate, name, h)
    np.testing.assert_allclose(gbm.jacobian_closed_form(case)[:, column], fd, rtol=1e-7, atol=1e-7)


@pytest.mark.parametrize(
    "column,outer,inner,h",
    [(0, "spot", 0, 1e-3), (1, "vol", 0, 1e-6), (1, "spot", 1, 1e-3), (2, "vol", 1, 1e-6)],
)
def test_second_derivatives_match_bumped_jacobian(column, outer, inner, h):
    case = _case()
    fd = _bump(case, lambda c: gbm.jacobian_closed_form(c)[:, inner], outer, h)
    np.testing.assert_allclose(gbm.hessian_closed_form(case)[:, column], fd, rtol=1e-6, atol=1e-6)


def test_jacobian_from_terminal_recovers_the_closed_form():
    case = _case()
    from_terminal = gbm.jacobian_from_terminal(case.params, gbm.terminal_closed_form(case))
    np.testing.assert_allclose(from_terminal, gbm.jacobian_closed_form(case), rtol=1e-10)


def test_relative_error_is_scaled_per_column():
    ref = np.array([[1.0, 100.0], [2.0, -200.0]])
    assert gbm.relative_error(ref, ref) == 0.0
    off = ref + np.array([[0.0, 2.0], [0.0, 0.0]])
    assert gbm.relative_error(off, ref) == pytest.approx(0.01)
    with pytest.raises(ValueError):
        gbm.relative_error(ref[:1], ref)


@pytest.mark.parametrize(
    "change,word",
    [
        ({"paths": 0}, "--paths"),
        ({"steps": 0}, "--steps"),
        ({"vol": 0.0}, "--vol"),
        ({"vol": -0.1}, "--vol"),
        ({"spot": -1.0}, "--spot"),
        ({"dtype": "float16"}, "--dtype"),
        ({"chunk_size": 0}, "--chunk-size"),
    ],
)
def test_bad_parameters_name_the_field(change, word):
    with pytest.raises(UsageError, match=word):
        gbm.make_case(gbm.GBMParams(**change))
