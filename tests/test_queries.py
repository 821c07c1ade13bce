"""The results loader and the queries the chapters share, on the committed 51-row fixture
(49 rows of a real quick sweep: ok cases, one killed at its memory cap, cases skipped on the
model's prediction, and TensorFlow at N = 10,000 with no ok row; 2 written by hand for the
picks: a jemalloc and a float64 row faster than every float32 glibc one)."""

import copy
import csv
import math
import pickle

import pandas as pd
import pytest

from jacbench.constants import STATUSES
from jacbench.errors import UsageError
from jacbench.measure import store
from jacbench.measure.dataset import Dataset
from jacbench.report import data, formats, queries


@pytest.fixture(scope="module")
def df(small_results):
    return data.load(small_results)


def test_derived_frames_share_the_metadata_and_none_can_change_it(df):
    meta = df.attrs["meta"]
    derived = df[df["framework"] == "torch"].groupby("strategy").head(1)
    assert derived.attrs["meta"] is meta  # shared through pandas' deep copy of attrs
    assert copy.deepcopy(df).attrs["meta"] is meta
    again = pickle.loads(pickle.dumps(df))
    assert again.attrs["meta"] == meta and again.attrs["meta"] is not meta
    for change in (lambda m: m.__setitem__("cores", 1), lambda m: m.update(cores=1),
                   lambda m: m.pop("cores"), lambda m: m.__ior__({"cores": 1})):  # fmt: skip
        with pytest.raises(TypeError, match="read-only"):
            change(meta)
    assert meta == Dataset(df.attrs["path"]).metadata


def test_every_column_has_its_declared_type(df):
    assert list(df.columns[: len(store.COLUMNS)]) == store.COLUMNS
    assert len(df) == 51
    assert isinstance(df["status"].dtype, pd.CategoricalDtype)
    assert list(df["status"].cat.categories) == list(STATUSES)
    assert str(df["paths"].dtype) == "Int64" and str(df["warm_median_s"].dtype) == "float64"
    assert str(df["hwm_reset"].dtype) == "boolean"
    assert df.attrs["meta"]["cores"] and df.attrs["path"].endswith("results-small.csv")
    # The derived peaks: the larger phase peak, and that over the memory before the first call.
    # PyTorch's jvp peaked in its warm calls (325,771,264 bytes; 235,769,856 before the first
    # call), JAX's jacrev in its first (1,129,508,864 bytes; 199,233,536 before).
    jvp = queries.one(df, framework="torch", strategy="jvp", paths=1000)
    assert (jvp["peak"], jvp["peak_over_inputs"]) == (325_771_264, 90_001_408)
    jacrev = queries.one(df, framework="jax", strategy="jacrev", paths=1000)
    assert (jacrev["peak"], jacrev["peak_over_inputs"]) == (1_129_508_864, 930_275_328)
    # A case that never ran has no peak.
    skipped = queries.one(df, framework="tensorflow", strategy="question", paths=10_000)
    assert pd.isna(skipped["peak"]) and pd.isna(skipped["peak_over_inputs"])


def test_one_baseline_across_strategies_and_the_overhead_mark(df):
    def at(framework, strategy, paths=1000):
        return queries.one(df, framework=framework, strategy=strategy, paths=paths)

    # PyTorch at N = 1,000: its fastest simulation given the same normals is the eager one,
    # 0.175 ms (inductor's is 0.250 ms), whatever the strategy's own execution mode.
    jvp, compiled = at("torch", "jvp"), at("torch", "compiled-pathwise")
    assert jvp["fastest_simulation_s"] == compiled["fastest_simulation_s"]
    assert jvp["fastest_simulation_s"] == pytest.approx(0.000175, rel=0.01)
    assert jvp["ratio_to_fastest_simulation"] == pytest.approx(0.004301 / 0.000175, rel=0.01)
    # Simulations and the second question's rows have no such ratio.
    assert pd.isna(at("torch", "simulation:eager")["ratio_to_fastest_simulation"])
    assert df[df["problem"] != "gbm"]["ratio_to_fastest_simulation"].isna().all()
    # A warm call under a millisecond is marked; 4.3 ms is not; a row with no time is neither.
    assert compiled["overhead_bound"] and not jvp["overhead_bound"]
    assert df[df["warm_median_s"].isna()]["overhead_bound"].isna().all()


def test_a_blocked_simulation_is_no_baseline_for_whole_array_strategies(df):
    # A blocked simulation (which draws its own normals) faster than every other: not taken.
    df = df.copy()
    extra = df[(df["framework"] == "torch") & (df["strategy"] == "simulation:eager")].copy()
    extra["strategy"], extra["key"], extra["warm_median_s"] = "simulation:blocked-eager", "x", 1e-9
    rows = pd.concat([df[list(store.COLUMNS)], extra[list(store.COLUMNS)]])
    out = data._fastest_simulation(rows.reset_index(drop=True))
    jvp = queries.where(out, framework="torch", strategy="jvp", paths=1000, allocator="glibc")
    assert jvp["fastest_simulation_s"].tolist() == pytest.approx([0.000175], rel=0.01)
    # Under jemalloc no simulation was measured: no baseline, rather than glibc's.
    jemalloc = queries.where(out, framework="torch", strategy="jvp", allocator="jemalloc")
    assert len(jemalloc) == 1 and jemalloc["fastest_simulation_s"].isna().all()


def test_a_file_that_is_not_a_results_file_is_refused(tmp_path):
    foreign = tmp_path / "other.csv"
    foreign.write_text("a,b\n1,2\n")
    with pytest.raises(UsageError, match="not a jacbench results file"):
        data.load(foreign)
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    assert data.load(empty).empty and "status" in data.load(empty).columns


def test_records_hold_none_for_empty_cells(df):
    rec = data.records(queries.where(df, framework="torch", strategy="question", paths=10_000))
    assert len(rec) == 1 and rec[0]["status"] == "memory-cap"
    assert rec[0]["warm_median_s"] is None and rec[0]["mem_cap"] == 4 * 2**30


def test_best_is_the_fastest_ok_strategy_a_recommendation_may_pick(df):
    # PyTorch at N = 1,000 under float32 and glibc: compiled-pathwise (0.338 ms) ahead of
    # pathwise (0.413 ms); the question's program took 351 ms.
    best = queries.best(df, "torch", 1000)
    assert best["strategy"] == "compiled-pathwise"
    assert best["warm_median_s"] == pytest.approx(0.00033777, rel=1e-5)
    # Made the fastest, the question's program is still left out, unless asked for.
    quick = df.copy()
    quick.loc[(quick["strategy"] == "question") & (quick["framework"] == "torch"),
              "warm_median_s"] = 1e-9  # fmt: skip
    assert queries.best(quick, "torch", 1000)["strategy"] == "compiled-pathwise"
    assert queries.best(quick, "torch", 1000, candidates_only=False)["strategy"] == "question"
    assert not queries.gbm(df).strategy.str.startswith("simulation:").any()


def test_best_reads_float32_under_glibc_only(df):
    """The fixture's hand-written rows at N = 1,000: PyTorch's jvp under jemalloc (0.1 ms) and
    its jacfwd in float64 (0.2 ms), both faster than compiled-pathwise, the fastest under the
    base conditions (0.338 ms): neither is the pick."""
    assert len(queries.where(df, framework="torch", paths=1000, allocator="jemalloc")) == 1
    assert len(queries.where(df, framework="torch", paths=1000, dtype="float64")) == 1
    best = queries.best(df, "torch", 1000)
    assert best["strategy"] == "compiled-pathwise"
    assert (best["dtype"], best["allocator"]) == ("float32", "glibc")
    assert best["warm_median_s"] == pytest.approx(0.000338, rel=1e-3)
    # Asked for those conditions, the same query picks them.
    under = queries.fastest(queries.gbm(df, framework="torch", paths=1000, allocator="jemalloc"))
    assert under["strategy"] == "jvp" and under["warm_median_s"] == 0.0001
    wide = queries.fastest(queries.gbm(df, framework="torch", paths=1000, dtype="float64"))
    assert wide["strategy"] == "jacfwd" and wide["warm_median_s"] == 0.0002


def test_a_tie_goes_to_the_first_strategy_by_name_whatever_the_rows_order(df):
    # JAX's pathwise at N = 10,000 (9.885 ms) with a jvp row beside it taking the same time:
    # jvp, the first by name, in either order of the rows.
    pathwise = df[(df["framework"] == "jax") & (df["strategy"] == "pathwise")
                  & (df["paths"] == 10_000)]  # fmt: skip
    tied = pd.concat([df, pathwise.assign(strategy="jvp", key="tie")], ignore_index=True)
    assert queries.best(df, "jax", 10_000)["strategy"] == "pathwise"
    assert queries.best(tied, "jax", 10_000)["strategy"] == "jvp"
    reordered = tied.iloc[::-1].reset_index(drop=True)
    assert reordered.iloc[0]["strategy"] == "jvp"
    assert queries.best(reordered, "jax", 10_000)["strategy"] == "jvp"
    # A hair faster, pathwise is the pick again.
    tied.loc[tied.index.isin(pathwise.index), "warm_median_s"] *= 0.999
    assert queries.best(tied, "jax", 10_000)["strategy"] == "pathwise"


@pytest.mark.parametrize(
    ("framework", "strategy", "kind"),
    [
        ("torch", "jvp", "forward mode"),
        ("torch", "jacrev", "reverse mode"),
        ("jax", "jacfwd", "forward mode"),
        ("jax", "vjp-loop", "reverse mode"),
        ("tensorflow", "tape-jacobian-pfor", "reverse mode"),
        ("tensorflow", "forward-accumulator", "forward mode"),
        ("jax", "second:hessian", "dense"),
        ("torch", "second:functional-hessian", "dense"),
        ("jax", "second:hvp-forward-over-reverse", "hvp"),
        ("jax", "second:diagonal-hutchinson", "diagonal"),
        ("torch", "second:per-path-second", "greeks"),
    ],
)
def test_kind_of_names_the_mode_or_the_second_order_kind(framework, strategy, kind):
    row = pd.Series({"framework": framework, "strategy": strategy})
    assert queries.kind_of(row) == kind


def test_the_second_order_rows_carry_their_kind(df):
    rows = queries.second_order(df, "moments", framework="jax")
    kinds = dict(zip(rows["strategy"], rows["kind"], strict=False))
    assert kinds == {"second:hessian": "dense", "second:hvp-forward-over-reverse": "hvp",
                     "second:diagonal-hutchinson": "diagonal"}  # fmt: skip
    hvp = queries.second_order(df, "moments", "hvp")
    assert set(hvp["strategy"]) == {"second:hvp-forward-over-reverse"}


def test_a_framework_with_no_ok_row_has_no_best(df):
    tf = queries.gbm(df, framework="tensorflow", paths=10_000)
    assert len(tf) == 1 and tf.iloc[0]["status"] == "skipped-predicted"
    assert queries.best(df, "tensorflow", 10_000) is None
    assert queries.best(df, "numpy", 123) is None


def test_failed_and_skipped_cases_read_as_what_stopped_them(df):
    capped = queries.one(df, framework="torch", strategy="question", paths=10_000)
    skipped = queries.one(df, framework="tensorflow", strategy="question", paths=10_000)
    assert formats.outcome(capped) == "memory cap (4.0 GiB)"
    # Its model predicted 68,602,331,840 bytes: 63.9 GiB.
    assert formats.outcome(skipped) == "skipped (needs 63.9 GiB)"
    assert queries.ratio(capped) is None and formats.ratio_with_spread(capped) == "–"
    assert formats.outcome(None) == formats.NOT_MEASURED


def test_a_ratio_is_to_the_simulation_of_the_same_execution_mode(df):
    for fw in ("torch", "tensorflow", "jax", "numpy"):
        row = queries.best(df, fw, 1000)
        sim = queries.simulation_of(df, row)
        assert sim is not None and sim["paths"] == row["paths"] and sim["framework"] == fw
        execution = sim["strategy"].removeprefix("simulation:")
        assert queries.simulation(df, fw, execution, 1000)["key"] == sim["key"]
        r = queries.ratio(row)
        assert r == row["ratio_median"] and row["ratio_lo"] <= r <= row["ratio_hi"]
        text = formats.ratio_with_spread(row)
        assert text.startswith(f"{r:.2f}× [")


def test_the_largest_size_where_all_named_strategies_ran(df):
    assert queries.largest_common(df, "torch", ["jvp"]) == 100_000
    assert queries.largest_common(df, "torch", ["jvp", "pathwise"]) == 10_000
    assert queries.largest_common(df, "torch", ["jvp", "no-such-strategy"]) is None
    assert queries.largest_ok(df, "torch", "jvp")["paths"] == 100_000


def test_wide_and_second_order_rows(df):
    hessians = queries.second_order(df, "moments", framework="jax")
    assert set(hessians["status"]) == {"ok", "skipped-predicted"}
    assert (hessians["target"] == "second").all()
    assert (queries.wide(df, framework="jax")["problem"] == "moments").all()
    row = hessians.iloc[0]
    assert queries.short_name(row) == row["strategy"].removeprefix("second:")


def test_loglog_slope_recovers_a_power_law():
    xs = [1e3, 1e4, 1e5]
    assert math.isclose(queries.loglog_slope(xs, [x**2 for x in xs]), 2.0)
    assert math.isclose(queries.loglog_slope(xs, [3 * x**0.5 for x in xs]), 0.5)
    assert queries.loglog_slope([1e3], [1.0]) is None
    assert queries.loglog_slope([1e3, 1e4], [1.0, None]) is None


def test_formats():
    assert formats.time(3.2e-4) == "320 µs" and formats.time(0.0125) == "12.5 ms"
    assert formats.time(3.214) == "3.21 s" and formats.time(float("nan")) == "–"
    # A duration reads as time() below a minute, in minutes and seconds from one.
    assert formats.duration(59.994) == "59.99 s" and formats.duration(66.11) == "1 min 6 s"
    assert formats.duration(250) == "4 min 10 s" and formats.duration(None) == "–"
    assert formats.size(1.6 * 2**30) == "1.6 GiB" and formats.size(None) == "–"
    assert formats.count(10_000) == "10,000" and formats.times(2.06) == "2.1×"


def test_a_span_in_words():
    assert formats.span([0.6, 0.47, 0.65], lambda x: f"{x:.0%}") == "47% to 65%"
    assert formats.span([0.6012, 0.6049], lambda x: f"{x:.0%}") == "60%"  # print the same


def test_glued_text_reads_back_exactly_as_written(monkeypatch):
    """{glue:text} literal_evals the glued plain text: only a quoted str survives as written."""
    from IPython.core.formatters import PlainTextFormatter
    from myst_nb.core.variables import format_plain_text

    from jacbench.report import show

    glued = {}
    monkeypatch.setattr("myst_nb.glue", lambda key, value, display: glued.update({key: value}))
    for written in ("10,000", "1,234", "0.0e+00", "2.1×", "jvp"):
        show.text("k", written)
        plain = PlainTextFormatter()(glued["k"])
        assert format_plain_text(plain, "") == written


def test_a_file_from_before_some_columns_existed_reads_and_is_upgraded_on_append(
    small_results, tmp_path
):
    # The fixture without the paired calls' times (columns added later), in the same order.
    older = [c for c in store.COLUMNS if not c.startswith("pair_")]
    rows = store.read_rows(small_results)
    path = tmp_path / "older.csv"
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=older, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    assert store.older(older) and not store.older(older[::-1])
    df = data.load(path)
    assert len(df) == len(rows) and df["pair_target_median_s"].isna().all()
    assert store.read_rows(path)[0]["pair_target_median_s"] == ""
    store.append_row(path, rows[0] | {"key": "new", "pair_target_median_s": 0.5})
    assert store._header(path) == store.COLUMNS  # rewritten with every column, rows kept
    again = data.load(path)
    assert len(again) == len(rows) + 1 and again["pair_target_median_s"].tolist()[-1] == 0.5
    assert again.iloc[0]["strategy"] == rows[0]["strategy"]
    # Shuffled columns are another version's file, not an older one of this.
    with open(path, "w") as f:
        f.write(",".join(older[::-1]) + "\n")
    with pytest.raises(UsageError, match="another version"):
        data.load(path)


def test_the_simulations_that_measure_drawing_are_left_out_of_the_figures(df):
    # A drawing simulation's row beside the fixture's: gone from what the figures read, while
    # every other row stays.
    extra = df[(df["framework"] == "torch") & (df["strategy"] == "simulation:eager")].copy()
    extra["strategy"] = "simulation:blocked-draws"
    rows = pd.concat([df, extra], ignore_index=True)
    kept = queries.without_draws(rows)
    assert len(kept) == len(df) and "simulation:blocked-draws" not in set(kept["strategy"])
    tf = df[df["framework"] == "tensorflow"].head(1).assign(strategy="simulation:xla-draws")
    assert queries.without_draws(tf).empty
