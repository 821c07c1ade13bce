"""Chapter 4's facts (report.chapters.gbm): costs against one simulation, the defaults, the
blocked strategies, the price of compilation and the accuracy."""

from pathlib import Path

import pytest

from jacbench.problems.gbm import GBMParams
from jacbench.report import dataset, margins, picks
from jacbench.report.chapters import gbm
from jacbench.report.chapters.gbm import tables
from jacbench.report.chapters.gbm.costs import FORWARD, PATHWISE
from jacbench.strategies import registry
from tests.chapters.rows import at, copy, edit

REFERENCE = Path(__file__).resolve().parents[2] / dataset.RESULTS


def _facts(df, others):
    return gbm.facts(df, picks.compute(df, margins.measure(df, others), form="array"))


def _first_ahead(cold_c, warm_c, cold_e, warm_e, limit=10**6):
    """The first call n at which n compiled calls take less than n eager ones, by counting."""
    return next(n for n in range(1, limit) if cold_c + (n - 1) * warm_c < cold_e + (n - 1) * warm_e)


def test_costs_are_each_strategy_at_its_largest_n(reference, others):
    f = _facts(reference, others)
    ok = reference[(reference["problem"] == "gbm") & (reference["target"] == "strategy")]
    ok = ok[ok["form"] == "array"]  # the chapter compares the question's form with itself
    ok = ok[(ok["status"] == "ok") & (ok["dtype"] == "float32") & (ok["allocator"] == "glibc")]
    assert len(f.costs) == len(ok.groupby(["framework", "strategy"]))
    for c in f.costs:
        row = reference.loc[at(reference, c.framework, c.name, paths=c.n)]
        assert (
            c.n == ok[(ok["framework"] == c.framework) & (ok["strategy"] == c.name)]["paths"].max()
        )
        assert c.ratio == pytest.approx(row["ratio_median"])
        assert c.beyond_inputs == pytest.approx(row["peak_over_inputs"])
    efficient = [c for c in f.costs if c.efficient and c.framework != "numpy"]
    assert {c.family for c in efficient} == {FORWARD, PATHWISE} and not any(
        c.blocked for c in efficient
    )
    assert f.efficient_most == pytest.approx(max(c.ratio for c in efficient))
    assert f.efficient_most <= gbm.SMALL
    assert all(c.n == f.in_memory_n == 1_000_000 for c in efficient)
    assert f.smallest_n == 100 and f.largest_n == 10_000_000


def test_the_defaults(reference, others):
    f = _facts(reference, others)
    assert {fw: d.name for fw, d in f.defaults.items()} == {
        fw: registry.default(fw).name for fw in ("torch", "tensorflow", "jax")
    }
    for d in f.defaults.values():
        assert d.largest_n == f.defaults_largest_n == 3_000 and d.grows
        assert d.at_question in ("memory-cap", "skipped-predicted")
    low, high = f.defaults_ratio
    assert low == min(d.ratio for d in f.defaults.values()) >= gbm.HUNDREDS
    assert high == max(d.ratio for d in f.defaults.values()) > low
    assert f.defaults_fail_at_question


def test_the_picks_costs_are_read_from_the_picks(reference, others):
    book = picks.compute(reference, margins.measure(reference, others), form="array")
    f = gbm.facts(reference, book)
    tall = [p for p in book.all if p.shape == picks.TALL]
    expected = [p.entries[n].ratio for p in tall for n in p.repeated]
    assert sorted(f.picked_ratios) == pytest.approx(sorted(expected))
    assert max(f.picked_ratios) <= gbm.SMALL
    assert f.picked_sizes == (picks.QUESTION_N, f.largest_n)


def test_blocked_strategies(reference, others):
    f = _facts(reference, others)
    assert len(f.blocked) == sum(len(registry.blocked_pairs(fw)) for fw in f.defaults)
    assert f.blocked_reach and f.blocked_under_one_array
    assert f.path_array_at_largest == GBMParams(paths=10_000_000).path_array_bytes
    assert f.blocked_most == pytest.approx(max(b.ratio for b in f.blocked)) and f.blocked_most < 2
    for b in f.blocked:
        assert b.blocks == registry.get(b.framework, b.name).variant_of
        assert b.blocks_n == f.in_memory_n and b.n_before == f.in_memory_n
        assert b.peak_before < b.peak < f.path_array_at_largest


def test_the_price_of_compilation(reference, others):
    f = _facts(reference, others)
    paired = [p for p in f.prices if p.eager is not None]
    assert {p.n for p in paired} == {picks.QUESTION_N, 1_000_000} and all(
        p.same_allocator for p in paired
    )
    for p in paired:
        row = reference.loc[at(reference, p.framework, p.compiled.name, paths=p.n)]
        # The compile measured apart (measure.compile_cost), not the first call less a warm one:
        # that difference also holds the first call's allocation and the compiler's start.
        # Less the fastest warm call of the worker that compiled again: the row's fastest, from
        # any of its workers, is no slower.
        assert p.compile_s == row["compile_s"] and p.recompile_s == row["recompile_s"]
        assert 0 <= p.compile_s <= row["recompile_s"] - row["warm_min_s"] + 1e-9
        assert p.compile_s < row["cold_s"] - row["warm_min_s"]
        assert p.first_extra_s == pytest.approx(row["cold_s"] - row["recompile_s"])
        assert not p.faster_first  # a first call that compiles never wins
        if p.overtakes is not None:
            c, e = p.compiled, p.eager
            assert p.overtakes == _first_ahead(c.cold_s, c.warm_s, e.cold_s, e.warm_s)
    at_question = f.prices_at(picks.QUESTION_N)
    # every compiled form's warm call beats its eager form's but XLA's pathwise gradient's
    tied = [p.compiled.name for p in at_question if p.eager is not None and not p.faster_warm]
    assert tied == ["pathwise-xla"]
    assert min(f.paid_from(picks.QUESTION_N, "torch")) >= gbm.LATE
    paid = f.paid_from(picks.QUESTION_N, "tensorflow")
    assert paid.count(None) == 1 and max(n for n in paid if n is not None) < gbm.LATE
    tf_pathwise = [p for p in f.prices_at(1_000_000, "tensorflow") if p.eager.name == "pathwise"]
    assert len(tf_pathwise) == 2 and all(p.warm.tied and p.overtakes is None for p in tf_pathwise)
    low, high = f.compile_span(picks.QUESTION_N)
    assert low.compile_s == min(p.compile_s for p in at_question)
    assert high.framework == "torch" and high.compile_s == max(p.compile_s for p in at_question)
    cells = dict(
        zip(tables.prices(f)["compiled"], tables.prices(f)["pays from call"], strict=False)
    )
    assert cells["jacfwd"] == "no eager variant" and cells["pathwise-xla"] == "tie"


def test_accuracy(reference, others):
    f = _facts(reference, others)
    a = f.accuracy
    ok = reference[(reference["problem"] == "gbm") & (reference["status"] == "ok")]
    ok = ok[
        (ok["target"] == "strategy")
        & (ok["dtype"] == "float32")
        & (ok["allocator"] == "glibc")
        & (ok["form"] == "array")
    ]
    ad = ok[ok["framework"].isin(["torch", "tensorflow", "jax"])]
    assert a.ad_error == pytest.approx(ad["max_rel_error"].max())
    assert a.se_paths == picks.QUESTION_N and 0 < a.se_delta < a.se_vega < 0.1
    assert (
        a.below_standard_error == pytest.approx(a.se_delta / a.ad_error)
        and a.below_standard_error > 1000
    )
    fd = f.cost("numpy", "finite-difference")
    assert fd.ratio > f.efficient_most and fd.error * 100 < a.se_delta
    assert len(tables.accuracy(f)) == len(a.anywhere) + 2


def test_the_pathwise_check_finds_a_coupling():
    check = gbm.pathwise_check(300)
    assert check.paths == 300
    assert check.gap < 1e-5 and check.vmap_error < 1e-5
    assert check.coupled_gap > 0.1


def test_a_slower_compiled_call_no_longer_pays(reference, others):
    i = at(reference, "torch", "compiled-pathwise", paths=picks.QUESTION_N)
    j = at(reference, "torch", "pathwise", paths=picks.QUESTION_N)
    eager = reference.loc[j, "warm_median_s"]
    edit(reference, i, warm_median_s=3 * eager, warm_min_s=3 * eager, warm_max_s=3 * eager)
    f = _facts(reference, others)
    (p,) = [
        p for p in f.prices_at(picks.QUESTION_N, "torch") if p.compiled.name == "compiled-pathwise"
    ]
    assert not p.faster_warm and p.overtakes is None and tables.from_call(p) == "never"
    assert None in f.paid_from(picks.QUESTION_N, "torch")


def test_edited_rows_change_the_other_facts(reference, others):
    # A default that finishes at the question's N, a dear blocked strategy, a dear pathwise
    # gradient, and a compiled form run under another malloc setting than its eager form.
    k = at(reference, "jax", "jacrev", paths=picks.QUESTION_N)
    edit(reference, k, status="ok", warm_median_s=9.0, cold_s=9.0, ratio_median=9000.0)
    edit(reference, at(reference, "jax", "blocked-jvp", paths=10_000_000), ratio_median=3.0)
    edit(reference, at(reference, "jax", "pathwise", paths=1_000_000), ratio_median=8.0)
    c = at(reference, "torch", "compiled-jvp", paths=1_000_000)
    edit(reference, c, malloc_env=None)
    f = _facts(reference, others)
    assert not f.defaults_fail_at_question and f.defaults["jax"].largest_n == picks.QUESTION_N
    assert f.blocked_most == pytest.approx(3.0) and f.efficient_most == pytest.approx(8.0)
    pair = [p for p in f.prices_at(1_000_000, "torch") if p.compiled.name == "compiled-jvp"]
    assert not pair[0].same_allocator


def test_a_blocked_strategy_that_stops_early(reference, others):
    copy_of = at(reference, "torch", "pathwise", paths=1_000_000)
    reference = copy(reference, copy_of, paths=10_000_000)  # the whole array run at 10^7 too
    f = _facts(reference, others)
    assert f.in_memory_n == 10_000_000 and not f.blocked_reach


def test_the_small_fixture_says_what_is_missing(small):
    f = gbm.facts(small, picks.compute(small, form="array"))
    assert f.largest_n == 100_000 and f.in_memory_n == 100_000
    assert not f.blocked_reach and not f.blocked_under_one_array and f.blocked_most is None
    assert all(b.n is None and b.ratio is None for b in f.blocked)
    assert f.defaults["torch"].ratio is None and f.defaults_ratio == (
        pytest.approx(f.defaults["tensorflow"].ratio),
        pytest.approx(f.defaults["jax"].ratio),
    )
    assert not f.defaults_fail_at_question  # no default was run at the question's N
    assert f.top_priced_n is None or f.top_priced_n <= 100_000
    for table in (tables.costs(f), tables.blocked(f), tables.prices(f), tables.accuracy(f)):
        assert len(table.columns) >= 3
    assert set(tables.blocked(f)["largest N"]) == {"–"}
