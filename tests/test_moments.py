"""The moments problem's closed forms against bumping and against each other."""

import numpy as np
import pytest

from jacbench.errors import UsageError
from jacbench.problems import moments


def test_jacobian_closed_form_matches_central_differences():
    x = moments.make_case(moments.MomentsParams(inputs=50, dtype="float64")).x
    h = 1e-6
    fd = np.empty((3, 50))
    for i in range(50):
        e = np.zeros(50)
        e[i] = h
        fd[:, i] = (moments.evaluate(x + e) - moments.evaluate(x - e)) / (2 * h)
    np.testing.assert_allclose(moments.jacobian_closed_form(x), fd, rtol=1e-7)


def test_hessian_diagonal_matches_bumped_jacobian_and_is_all_of_it():
    x = moments.make_case(moments.MomentsParams(inputs=20, dtype="float64")).x
    h = 1e-6
    for i in (0, 7, 19):
        e = np.zeros(20)
        e[i] = h
        column = (moments.jacobian_closed_form(x + e) - moments.jacobian_closed_form(x - e)) / (
            2 * h
        )
        # Only entry i of column i is nonzero: the function is separable.
        np.testing.assert_allclose(column[:, i], moments.hessian_diagonal(x)[:, i], rtol=1e-6)
        assert np.max(np.abs(np.delete(column, i, axis=1))) < 1e-6


def test_hvp_is_the_diagonal_times_v():
    x = moments.make_case(moments.MomentsParams(inputs=10, dtype="float64")).x
    v = np.arange(10.0)
    dense = [np.diag(d) for d in moments.hessian_diagonal(x)]
    np.testing.assert_allclose(moments.hvp_closed_form(x, v), [h @ v for h in dense], rtol=1e-14)


def test_batched_case_has_per_row_jacobians():
    case = moments.make_case(moments.MomentsParams(inputs=8, batch=4, dtype="float64"))
    assert case.x.shape == (4, 8)
    j = moments.jacobian_closed_form(case.x)
    assert j.shape == (4, 3, 8)
    np.testing.assert_allclose(j[2], moments.jacobian_closed_form(case.x[2]))
    assert moments.evaluate(case.x).shape == (4, 3)


def test_dense_hessian_at_the_question_size_is_tens_of_gigabytes():
    assert moments.dense_hessian_bytes(100_000, "float32", outputs=1) == 4 * 10**10


@pytest.mark.parametrize("change", [{"inputs": 0}, {"batch": -1}, {"dtype": "int8"}])
def test_bad_parameters(change):
    with pytest.raises(UsageError):
        moments.make_case(moments.MomentsParams(**change))


def test_the_dense_check_reads_row_blocks_and_finds_any_wrong_entry(monkeypatch):
    monkeypatch.setattr(moments, "CHECK_ROWS", 7)  # several blocks, the last one short
    x = 2.0 + 0.1 * np.random.default_rng(0).standard_normal(30)
    exact = moments.dense_hessian(x)
    assert moments.dense_hessian_error(exact, x) == 0.0
    whole = moments.relative_error  # the whole-array measure it replaces
    for k, i, j in [(0, 0, 0), (1, 29, 3), (2, 15, 15), (2, 8, 22)]:
        wrong = exact.copy()
        wrong[k, i, j] += 0.5
        assert moments.dense_hessian_error(wrong, x) == pytest.approx(whole(wrong, exact, axis=0))
        assert moments.dense_hessian_error(wrong, x) > 1e-3
    with pytest.raises(ValueError, match="does not match"):
        moments.dense_hessian_error(exact[:, :10], x)
