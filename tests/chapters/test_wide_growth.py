"""How the wide chapter's times grow with n (report.chapters.wide_growth): slopes between
consecutive sizes, read against the arithmetic, with the page faults that come with growth
beyond it."""

import pandas as pd
import pytest

from jacbench.report.chapters import wide_growth as wg


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
        "In arithmetic the dense Hessians grow as n^2; measured, as n^0.10 to n^2.00 from "
        "n = 300 to 1,000 and n^0.52 to n^3.00 from 1,000 to 3,000; "
    )
    # Slower than n^2 somewhere (a fixed cost), faster somewhere, with the faults of the one
    # that grew faster: 26,000 at 3,000 against none at 1,000.
    assert said.endswith(
        "where they grow more slowly than the arithmetic, a cost per call that does not grow "
        "with n still counts; where faster, the excess is not arithmetic, and comes with page "
        "faults: a warm call of those at n = 3,000 takes 26,000 page faults, at 1,000 at most 0."
    )


def test_growth_like_the_arithmetic_says_nothing_more():
    linear = {("jax", "hvp"): [(1000, 0.001, 0), (10_000, 0.0105, 0)]}
    assert wg.growth(wg.span_slopes(_rows(linear)), 1, "the products") == (
        "In arithmetic the products grow as n; measured, as n^1.02 from n = 1,000 to 10,000."
    )
    assert wg.growth(wg.span_slopes(_rows({})), 1, "the products").endswith(
        "none ran at two sizes here, so their growth is not measured."
    )


def test_faults_are_named_only_where_every_steeper_method_faults_far_more():
    # Growing as n^2 where the arithmetic is linear, without a jump in faults: not named.
    steep = {("torch", "hvp"): [(10**6, 0.01, 500), (10**7, 1.0, 2000)]}
    slopes = wg.span_slopes(_rows(steep))
    assert wg.faults_said(slopes, 1) == ""
    assert wg.against_arithmetic(slopes, 1) == (
        "where they grow faster than the arithmetic, the excess is not arithmetic"
    )
    # With 100 times the faults: named.
    steep = {("torch", "hvp"): [(10**6, 0.01, 500), (10**7, 1.0, 50_000)]}
    assert wg.faults_said(wg.span_slopes(_rows(steep)), 1) == (
        "a warm call of those at n = 10,000,000 takes 50,000 page faults, at 1,000,000 at most 500"
    )
    # A method that grows like its arithmetic is not among those read.
    both = {**steep, ("jax", "hvp"): [(10**6, 0.01, 40_000), (10**7, 0.1, 40_000)]}
    assert "50,000 page faults, at 1,000,000 at most 500" in wg.faults_said(
        wg.span_slopes(_rows(both)), 1
    )
