"""Chapter 2 (forward and reverse mode): the teaching example's error, and each framework's
forward mode against its vectorized reverse mode, on the committed fixture and edited copies."""

import math

import pandas as pd
import pytest

from jacbench.report import formats
from jacbench.report.legacy import modes

# The notebook's pairs: each framework's forward strategy and its vectorized reverse one.
PAIRS = {
    "torch": ("jacfwd", "jacrev"),
    "tensorflow": ("forward-accumulator", "tape-jacobian-pfor"),
    "jax": ("jacfwd", "jacrev"),
}


def mask(df, framework, strategy, paths=1000, allocator="glibc", dtype="float32"):
    """The fixture's GBM strategy rows of one case, picked with plain pandas."""
    return (
        (df["problem"] == "gbm") & (df["target"] == "strategy") & (df["framework"] == framework)
        & (df["strategy"] == strategy) & (df["paths"] == paths) & (df["allocator"] == allocator)
        & (df["dtype"] == dtype)
    ).fillna(False)  # fmt: skip


def warm(df, framework, strategy, paths=1000):
    (value,) = df.loc[mask(df, framework, strategy, paths), "warm_median_s"]
    return float(value)


def row_of(cmp, framework):
    (r,) = cmp[cmp["framework"] == framework].itertuples()
    return r


def test_relative_error_is_the_largest_over_the_elements():
    assert modes.relative_error([1.1, 2.0], [1.0, 2.0]) == pytest.approx(0.1)
    assert modes.relative_error([-2.2, 3.0], [-2.0, 2.0]) == pytest.approx(0.5)
    assert modes.relative_error([1.0, 2.0], [1.0, 2.0]) == 0.0


def test_each_pair_reads_both_rows_at_the_size(small):
    cmp = modes.forward_against_reverse(small, PAIRS, 1000)
    assert list(cmp["framework"]) == ["torch", "tensorflow", "jax"]
    for fw, (fwd, rev) in PAIRS.items():
        r = row_of(cmp, fw)
        assert (r.forward, r.reverse) == (fwd, rev)
        assert r.forward_s == warm(small, fw, fwd) and r.reverse_s == warm(small, fw, rev)
        assert math.isclose(r.ratio, warm(small, fw, rev) / warm(small, fw, fwd))
        (peak,) = small.loc[mask(small, fw, rev), "peak_over_inputs"]
        assert r.reverse_peak == peak
    # In the fixture, reverse mode costs 203× forward mode in PyTorch (0.856 s over 4.2 ms).
    assert row_of(cmp, "torch").ratio == pytest.approx(0.856163 / 0.004221, rel=1e-3)
    assert modes.against_half_n(row_of(cmp, "torch").ratio, 1000) == "0.41× N/2"


def test_a_size_where_none_of_the_pair_ran_is_not_measured(small):
    cmp = modes.forward_against_reverse(small, PAIRS, 10_000)
    assert len(cmp) == 3
    assert (
        cmp[["forward_s", "reverse_s", "forward_peak", "reverse_peak", "ratio"]].isna().all().all()
    )
    assert modes.against_half_n(row_of(cmp, "torch").ratio, 10_000) == formats.NOT_MEASURED


def test_a_pair_of_which_only_one_ran_has_no_ratio(small):
    edited = small[~mask(small, "jax", "jacrev")]
    r = row_of(modes.forward_against_reverse(edited, PAIRS, 1000), "jax")
    assert r.forward_s == warm(small, "jax", "jacfwd")
    assert math.isnan(r.reverse_s) and math.isnan(r.reverse_peak) and math.isnan(r.ratio)
    # The other frameworks are unchanged.
    assert not math.isnan(row_of(modes.forward_against_reverse(edited, PAIRS, 1000), "torch").ratio)


@pytest.mark.parametrize("status", ["memory-cap", "timeout", "skipped-predicted"])
def test_a_failed_row_is_no_measurement(small, status):
    small.loc[mask(small, "torch", "jacrev"), "status"] = status
    r = row_of(modes.forward_against_reverse(small, PAIRS, 1000), "torch")
    assert r.forward_s == warm(small, "torch", "jacfwd")
    assert math.isnan(r.reverse_s) and math.isnan(r.ratio)


def test_a_faster_reverse_mode_changes_the_ratio(small):
    before = row_of(modes.forward_against_reverse(small, PAIRS, 1000), "tensorflow").ratio
    fwd = warm(small, "tensorflow", "forward-accumulator")
    # A tie: reverse mode as fast as forward mode, 1× where N/2 = 500 was counted.
    small.loc[mask(small, "tensorflow", "tape-jacobian-pfor"), "warm_median_s"] = fwd
    r = row_of(modes.forward_against_reverse(small, PAIRS, 1000), "tensorflow")
    assert before > 10 and r.ratio == 1.0
    assert modes.against_half_n(r.ratio, 1000) == "0.00× N/2"
    assert modes.against_half_n(r.ratio, 2) == "1.00× N/2"


def test_only_the_base_conditions_are_compared(small):
    # A glibc-mmap row of the same case (faster) is not the row the chapter compares.
    extra = small[mask(small, "torch", "jacrev")].assign(allocator="glibc-mmap",
                                                          warm_median_s=0.001)  # fmt: skip
    r = row_of(modes.forward_against_reverse(pd.concat([small, extra]), PAIRS, 1000), "torch")
    assert r.reverse_s == warm(small, "torch", "jacrev")


def test_against_expected_is_the_measured_over_the_expected():
    assert modes.against_expected(250.0, 500) == "0.50×"
    assert modes.against_expected(1000.0, 500) == "2.00×"
    assert modes.against_expected(None, 500) == formats.NOT_MEASURED
    assert modes.against_expected(float("nan"), 500) == formats.NOT_MEASURED
    assert modes.against_expected(3.0, 0) == formats.NOT_MEASURED


def test_against_half_n_and_half():
    assert modes.against_half_n(113.0, 1000) == "0.23× N/2"
    assert modes.against_half_n(None, 1000) == formats.NOT_MEASURED
    assert modes.half(1000) == "500"
    assert modes.half(10_000) == "5,000"
    assert modes.half(1001) == "500.5"
    assert modes.half(3) == "1.5"


def test_tensorflow_graph_forward_sets_reverse_against_the_traced_forward_pass(small):
    args = ("forward-accumulator", "forward-accumulator-function", "tape-jacobian-pfor")
    said = modes.tensorflow_graph_forward(small, 1000, *args)
    graph = warm(small, "tensorflow", "forward-accumulator-function")
    ratio = warm(small, "tensorflow", "tape-jacobian-pfor") / graph
    assert formats.time(graph) in said and formats.times(ratio, digits=0) in said
    assert formats.time(warm(small, "tensorflow", "forward-accumulator")) in said
    assert modes.against_half_n(ratio, 1000) in said and "runs eagerly" in said


def test_tensorflow_graph_forward_without_the_traced_pass_says_so(small):
    edited = small[~mask(small, "tensorflow", "forward-accumulator-function")]
    args = ("forward-accumulator", "forward-accumulator-function", "tape-jacobian-pfor")
    assert "was not measured" in modes.tensorflow_graph_forward(edited, 1000, *args)
    assert "was not measured" in modes.tensorflow_graph_forward(small, 10_000, *args)
