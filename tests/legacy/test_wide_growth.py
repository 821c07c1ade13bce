"""How the wide chapter's times grow with n (report.legacy.wide_growth): slopes between
consecutive sizes, read against the arithmetic, with the page faults that come with growth
beyond it."""

import pandas as pd
import pytest

from jacbench.report import formats
from jacbench.report.legacy import wide_growth as wg


def _rows(times: dict) -> pd.DataFrame:
    """{(framework, strategy): [(n, warm seconds or None for a failure, faults), ...]}."""
    return pd.DataFrame(
        [{"framework": fw, "strategy": name, "inputs": n, "warm_median_s": t,
          "warm_faults": faults, "status": "ok" if t is not None else "memory-cap"}
         for (fw, name), points in times.items() for n, t, faults in points],
        columns=["framework", "strategy", "inputs", "warm_median_s", "warm_faults", "status"],
    )  # fmt: skip


# Dense Hessians: one flat from 300 to 1,000 (a fixed cost), one quadratic, one that faults and
# grows as n^3 from 1,000 to 3,000; a failure at 10,000 is not a size.
DENSE = {
    ("tensorflow", "nested-tapes"): [(300, 0.2, 700), (1000, 0.2 * 1000**0.1 / 300**0.1, 5000),
                                     (3000, 0.4, 6000)],
    ("torch", "func-hessian"): [(300, 0.009, 0), (1000, 0.1, 0), (3000, 0.9, 0)],
    ("jax", "hessian"): [(300, 0.001, 0), (1000, 0.01, 0), (3000, 0.27, 26_000),
                         (10_000, None, None)],
}  # fmt: skip


def test_slopes_are_read_between_consecutive_sizes_that_ran():
    slopes = wg.span_slopes(_rows(DENSE))
    assert len(slopes) == 6  # two spans for each of three methods
    at = slopes.set_index(["framework", "lo"])["slope"]
    assert at[("tensorflow", 300)] == pytest.approx(0.1)
    assert at[("torch", 1000)] == pytest.approx(2.0)
    assert at[("jax", 1000)] == pytest.approx(3.0)
    last = wg.span_slopes(_rows(DENSE), last_only=True)
    assert set(zip(last["lo"], last["hi"], strict=True)) == {(1000, 3000)}
    assert wg.span_slopes(_rows({})).empty


def test_the_growth_is_said_span_by_span_against_the_arithmetic():
    said = wg.growth(wg.span_slopes(_rows(DENSE)), 2, "the dense Hessians")
    assert said.startswith(
        "In arithmetic the dense Hessians grow as n², a log-log slope of 2; measured, they have "
        "log-log slopes of 0.10 to 2.00 from n = 300 to 1,000 and of 0.52 to 3.00 from 1,000 to "
        "3,000. "
    )
    # Below 2 somewhere (one flat: a cost per call), above 2 somewhere, with every method's
    # faults at 3,000 against those at 1,000 (not all above them: both ranges said).
    assert said.endswith(
        "Where a slope is below 2, something besides the arithmetic takes much of the time: "
        "TensorFlow's nested-tapes barely grows from n = 300 to 1,000, as a fixed cost per call "
        "would. Where a slope is above 2, the time grows faster than n² and the excess is not "
        "arithmetic. At n = 3,000 a warm call of each takes 0 to 26,000 page faults; at 1,000, "
        "0 to 5,000."
    )


def test_a_dense_method_growing_as_n_is_read_as_a_cost_per_input():
    per_input = {("torch", "second:functional-hessian"): [(300, 0.12, 0), (1000, 0.42, 6),
                                                         (3000, 1.47, 28_000)]}  # fmt: skip
    said = wg.growth(wg.span_slopes(_rows(per_input)), 2, "the dense Hessians")
    assert said.endswith(
        "PyTorch's functional-hessian grows as n throughout, as a fixed cost per input would "
        "(400 µs to 490 µs per input)."
    )
    # Where the arithmetic itself grows as n, growing as n is not below it.
    assert wg.below_said(wg.span_slopes(_rows(per_input)), 1) == ""


def test_growth_like_the_arithmetic_says_nothing_more():
    linear = {("jax", "hvp"): [(1000, 0.001, 0), (10_000, 0.0105, 0)]}
    assert wg.growth(wg.span_slopes(_rows(linear)), 1, "the products") == (
        "In arithmetic the products grow as n, a log-log slope of 1; measured, they have a "
        "log-log slope of 1.02 from n = 1,000 to 10,000."
    )
    assert wg.growth(wg.span_slopes(_rows({})), 1, "the products").endswith(
        "none ran at two sizes here, so their growth is not measured."
    )


def test_faults_are_given_for_every_method_at_the_largest_n():
    # One method grows as n^2 where the arithmetic is linear, the other like the arithmetic:
    # the faults of both at 10^7 are said, above any at 10^6.
    steep = {("torch", "hvp"): [(10**6, 0.01, 500), (10**7, 1.0, 50_000)],
             ("jax", "hvp"): [(10**6, 0.01, 400), (10**7, 0.1, 40_000)]}  # fmt: skip
    slopes = wg.span_slopes(_rows(steep))
    assert wg.faults_said(slopes) == (
        "At n = 10,000,000 a warm call of each takes 40,000 to 50,000 page faults, more than any "
        "took at 1,000,000 (at most 500)."
    )
    assert wg.against_arithmetic(slopes, 1).startswith(
        "Where a slope is above 1, the time grows faster than n and the excess is not "
        "arithmetic. At n = 10,000,000"
    )
    # Without faults counted, nothing about them.
    assert wg.faults_said(slopes.assign(lo_faults=float("nan"))) == ""
    # Growing like the arithmetic everywhere: no reading, so no faults either.
    flat = {("jax", "hvp"): [(10**6, 0.01, 400), (10**7, 0.1, 40_000)]}
    assert wg.against_arithmetic(wg.span_slopes(_rows(flat)), 1) == ""


def test_the_sizes_a_kind_ran_at():
    assert wg.sizes_said(_rows(DENSE)) == "300 to 3,000"  # the failure at 10,000 is not one
    assert wg.sizes_said(_rows({})) == formats.NOT_MEASURED
