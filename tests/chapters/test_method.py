"""The method chapter's facts (report.chapters.method), checked numerically: on the reference
dataset and its other sessions, on the 51-row fixture, and on rows edited so the answer changes.
Each expected value is worked out again from the rows."""

from pathlib import Path

import pandas as pd
import pytest

from jacbench.constants import FRAMEWORKS, GIB
from jacbench.report import data, dataset, margins, queries
from jacbench.report.chapters import method
from jacbench.report.chapters.method import tables

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / dataset.RESULTS


@pytest.fixture(scope="module")
def loaded():
    """The rows, and the other sessions' by which ("second", "third")."""
    return data.load(RESULTS), dataset.sessions(dataset.Dataset(RESULTS))


def _facts(df, others):
    """The facts as the notebook computes them: margins measured against the other sessions."""
    return method.facts(df, margins.measure(df, list(others.values())), others)


@pytest.fixture
def reference(loaded):
    df, others = loaded
    return df.copy(), others


@pytest.fixture(scope="module")
def f(loaded):
    return _facts(*loaded)


def _row(df, **conditions):
    (index,) = queries.where(df, **conditions).index
    return index


def test_settings_are_the_harness_and_what_it_did_to_the_rows(f, loaded):
    df, _ = loaded
    s = f.settings
    assert s.mem_cap == 8 * GIB == df["mem_cap"].mode().iloc[0]
    assert s.skipped == (df["status"] == "skipped-predicted").sum() > 0
    assert s.capped == (df["status"] == "memory-cap").sum() > 0
    assert s.workers == 3 and s.worker_sizes == (100_000, 1_000_000)
    few = df[(df["status"] == "ok") & (df["warm_n"] < s.min_calls)]
    assert len(few) and (few["warm_median_s"] >= s.long_call_s).all() and s.few_calls_long
    assert s.floor_s == margins.FLOOR_S


def test_a_case_with_few_warm_calls_but_quick_ones_breaks_the_rule(reference):
    df, others = reference
    i = _row(df, framework="jax", strategy="jvp", paths=1000, target="strategy")
    df.loc[i, "warm_n"] = 1
    assert not _facts(df, others).settings.few_calls_long


def test_the_widest_spread_between_workers_is_worked_out_again(f, loaded):
    df, _ = loaded
    widest = 0.0
    for _, row in queries.gbm(df, "simulation", status="ok").iterrows():
        medians = [float(x) for x in str(row["warm_by_process"]).split(";") if x != "<NA>"]
        if len(medians) > 1:
            widest = max(widest, max(medians) / min(medians))
    assert f.spread.factor == pytest.approx(widest, rel=1e-3)
    assert f.spread.factor > f.margins.ratio[f.spread.framework]


def test_the_sessions_are_the_dataset_and_the_two_it_was_measured_again_in(f, loaded):
    df, others = loaded
    files = [s.file for s in f.sessions]
    assert files == ["book/reference/standard.csv", "book/reference/efficient.csv",
                     "book/reference/ratios.csv"]  # fmt: skip
    assert [s.which for s in f.sessions] == ["reference", "second", "third"]
    assert [s.rows for s in f.sessions] == [len(df), *(len(o) for o in others.values())]
    keys = [*margins.SAME_CASE, "paths"]
    for s, other in zip(f.sessions[1:], others.values(), strict=True):
        both = queries.gbm(df, status="ok")[keys].merge(queries.gbm(other, status="ok")[keys])
        assert s.matched == len(both) > 0
    assert f.sessions[1].sizes == (1_000_000,)
    assert f.sessions[2].sizes == (10_000, 100_000, 1_000_000)
    assert f.sessions[2].processor == f.sessions[0].processor and f.same_processor
    assert sum(f.matched.values()) == sum(s.matched for s in f.sessions[1:])


def test_the_margins_are_the_books_rule_and_order_as_the_page_says(f, loaded):
    assert f.margins == dataset.margins(dataset.Dataset(RESULTS))  # every page's margins
    for fw in FRAMEWORKS:  # ratios side by side move least (both sides share the machine)
        assert min(f.margins.cold[fw], f.margins.warm[fw]) >= f.margins.ratio[fw] > 1
    # First calls moved most in TensorFlow, warm medians in PyTorch and JAX (whose quotients at
    # the questions' sizes, calls of a few milliseconds, moved furthest).
    assert f.margins.cold["tensorflow"] > f.margins.warm["tensorflow"]
    assert all(f.margins.warm[fw] > f.margins.cold[fw] for fw in ("torch", "jax"))
    shown = tables.margins(f)
    assert len(shown) == len(FRAMEWORKS) and list(shown["cases compared"]) == [
        f"{f.matched[fw]:,}" for fw in FRAMEWORKS
    ]


def test_one_malloc_setting_per_framework_and_size_until_a_row_differs(f, reference):
    assert f.one_setting
    df, others = reference
    i = _row(
        df, framework="torch", strategy="compiled-pathwise", paths=1_000_000, allocator="glibc"
    )
    df.loc[i, "malloc_env"] = pd.NA
    assert not _facts(df, others).one_setting


def test_the_allocators_of_pytorchs_loop(f, loaded):
    df, _ = loaded
    a = f.allocators
    assert (a.loop, a.compared_n, a.top_n, a.mmap_threshold) == (
        "functional-loop",
        3000,
        10_000,
        65536,
    )
    peaks = {
        alloc: queries.one(
            queries.gbm(df, framework="torch", allocator=alloc), strategy=a.loop, paths=3000
        )["peak_over_inputs"]
        for alloc in ("glibc", "glibc-mmap", "jemalloc")
    }
    expected = peaks["glibc"] / max(peaks["glibc-mmap"], peaks["jemalloc"])
    assert a.glibc_over_others == pytest.approx(expected) and expected > 10
    assert a.faster("glibc", "glibc-mmap", 3000) and a.jemalloc_no_slower
    assert a.stopped("glibc", 10_000) and a.faster("jemalloc", "glibc-mmap", 10_000)
    assert not a.faster("glibc", "glibc-mmap", 10_000)  # not compared there
    assert len(tables.allocators(f)) == len(a.runs) == 18


def test_jemalloc_is_slower_once_its_time_is_tripled(reference):
    df, others = reference
    glibc = _row(df, framework="torch", strategy="functional-loop", paths=3000, allocator="glibc")
    jem = _row(df, framework="torch", strategy="functional-loop", paths=3000, allocator="jemalloc")
    df.loc[jem, ["warm_median_s", "warm_min_s"]] = 3 * df.loc[glibc, "warm_median_s"]
    assert not _facts(df, others).allocators.jemalloc_no_slower


def test_the_experiment_reads_what_glibc_kept(f, reference):
    e = f.experiment
    g = e.loop["glibc"]
    assert g.paths == 3000 and g.kept >= 0.5 * g.beyond_inputs > g.in_use and e.kept_most
    assert e.unchanged("glibc-arena1") and e.unchanged("glibc-trim")
    df, others = reference
    i = _row(
        df, framework="torch", strategy="functional-loop", paths=3000, allocator="glibc-arena1"
    )
    df.loc[i, "peak_over_inputs"] = df.loc[i, "peak_over_inputs"] * 3
    j = _row(df, framework="torch", strategy="functional-loop", paths=3000, allocator="glibc")
    df.loc[j, "warm_heap_free_kept"] = 0.0
    edited = _facts(df, others).experiment
    assert not edited.unchanged("glibc-arena1") and not edited.kept_most


def test_page_faults_and_what_mappings_cost(f, loaded):
    df, _ = loaded
    fa = f.faults
    assert fa.fixed_sizes == (100_000, 1_000_000)
    assert fa.path_array[1_000_000] == 53 * 1_000_000 * 4 > fa.mmap_threshold
    assert fa.path_array[100_000] < fa.mmap_threshold
    costs = []
    for m in fa.mapped:
        if m.faults[0] - m.faults[1] > 1000:
            costs.append((m.warm_s[0] - m.warm_s[1]) / (m.faults[0] - m.faults[1]))
    # PyTorch's eager and compiled pathwise, jvp and the two simulations
    assert len(costs) == 5 and fa.fault_s == pytest.approx(sorted(costs)[2])
    assert 1e-7 < fa.fault_s < 1e-5
    assert fa.faster_unmapped and fa.ratios_held and fa.most_memory > 1
    heap = queries.gbm(df, ("strategy", "simulation"), allocator="glibc-heap", status="ok")
    assert len(fa.mapped) == len(heap) == len(tables.mapped(f))


def test_a_ratio_that_moved_with_the_mappings_breaks_the_claim(reference):
    df, others = reference
    i = _row(df, framework="torch", strategy="jvp", paths=1_000_000, allocator="glibc-heap")
    df.loc[i, "ratio_median"] = df.loc[i, "ratio_median"] * 3  # beyond every margin
    assert not _facts(df, others).faults.ratios_held


def test_ynnpack_rows_show_page_faults(f, loaded, reference):
    y = f.ynn
    assert y.n == 1_000_000 and y.off_faster and y.float32_slower
    top = next(r for r in y.rows if (r.dtype, r.paths) == ("float32", 1_000_000))
    assert y.slowdown == pytest.approx(top.warm_s[0] / top.warm_s[1]) and y.slowdown > 10
    assert y.fault_ratio == pytest.approx(top.faults[0] / top.faults[1]) and y.fault_ratio > 10
    expected = (top.warm_s[0] - top.warm_s[1]) / (top.faults[0] - top.faults[1])
    assert y.extra_fault_s == pytest.approx(expected)
    assert 0.5 <= y.extra_fault_s / f.faults.fault_s <= 2
    row = queries.one(
        loaded[0],
        framework="jax",
        strategy="second:per-path-second",
        paths=1_000_000,
        dtype="float32",
    )
    expected = row["warm_faults"] * 4096 / row["peak"]
    assert y.touched_over_peak == pytest.approx(expected) and expected > 10
    df, others = reference
    i = _row(
        df,
        framework="jax",
        strategy="second:per-path-second-no-ynn",
        paths=1_000_000,
        dtype="float32",
    )
    df.loc[i, ["warm_median_s", "warm_min_s"]] = 100.0
    assert not _facts(df, others).ynn.off_faster


def test_the_small_fixture_measures_little_and_says_so(small):
    f = method.facts(small)
    assert len(f.sessions) == 1 and f.sessions[0].which == "this"
    assert not f.margins.measured and set(f.margins.ratio.values()) == {margins.UNMEASURED}
    assert f.spread is None and f.experiment is None and f.ynn is None
    assert f.allocators.compared_n is None and f.allocators.glibc_over_others is None
    assert not f.allocators.jemalloc_no_slower and f.faults.fault_s is None
    assert not f.faults.faster_unmapped and not f.faults.ratios_held
    for table in (
        tables.settings,
        tables.sessions,
        tables.margins,
        tables.experiment,
        tables.mapped,
        tables.ynn,
    ):
        assert isinstance(table(f), pd.DataFrame)
    assert len(tables.machine(small.attrs["meta"])) == len(tables.MACHINE)
