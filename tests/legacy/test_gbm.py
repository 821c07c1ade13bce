"""The GBM comparison's numbers (chapter 4: chapters.gbm, compilation, accuracy, blocked) on the
51-row fixture and on rows edited from it: each expected value is worked out from the rows."""

import math

import numpy as np
import pandas as pd
import pytest

from jacbench.constants import FRAMEWORKS
from jacbench.measure import store
from jacbench.report import formats
from jacbench.report.formats import NOT_MEASURED
from jacbench.report.legacy import accuracy, allocator, blocked, compilation, method
from jacbench.report.legacy import gbm as chapter
from jacbench.strategies import memory_model, registry
from tests.legacy.rows import at, copy, edit

MIB = 2**20


def _at(df, framework, strategy, paths=None, **conditions):
    """The mask of the GBM rows of a strategy (at N where given)."""
    mask = (df["problem"] == "gbm") & (df["framework"] == framework)
    mask &= df["strategy"] == strategy
    if paths is not None:
        mask &= df["paths"] == paths
    for column, value in conditions.items():
        mask &= df[column] == value
    return mask.fillna(False).astype(bool)


def _set(df, framework, strategy, paths, **values):
    """Edit one strategy's row at N in place (it must exist)."""
    mask = _at(df, framework, strategy, paths)
    assert mask.sum() == 1, (framework, strategy, paths)
    for column, value in values.items():
        df.loc[mask, column] = value


def _drop(df, framework, strategy, paths=None):
    mask = _at(df, framework, strategy, paths)
    assert mask.any(), (framework, strategy, paths)
    return df[~mask].reset_index(drop=True)


def _row(df, framework, strategy, paths):
    return df[_at(df, framework, strategy, paths)].iloc[0]


# --- the question's programs ------------------------------------------------------------------


def test_without_the_cumulative_sum_log_st_is_sqrt_m_times_narrower():
    spread = chapter.log_terminal_spread(20_000)
    # log S_T has standard deviation sigma sqrt(T) = 0.2 for GBM; the last increment alone,
    # sigma sqrt(T / M): 0.2 / sqrt(52) = 0.0277.
    assert spread["gbm"] == pytest.approx(0.2, rel=0.03)
    assert spread["tf"] == pytest.approx(0.2 / math.sqrt(52), rel=0.03)
    assert spread["ratio"] == pytest.approx(spread["gbm"] / spread["tf"])
    assert spread["sqrt_steps"] == pytest.approx(math.sqrt(52))


def test_loop_peaks_read_every_n_and_say_what_stopped_a_failed_one(small):
    # One tape of the question's loop: 8 MiB + 11 path arrays of 53 x N float32 values.
    tape_1k, tape_10k = 8 * MIB + 11 * 53 * 1000 * 4, 8 * MIB + 11 * 53 * 10_000 * 4
    assert (round(tape_1k / MIB, 1), round(tape_10k / MIB, 1)) == (10.2, 30.2)
    peak = _row(small, "torch", "question", 1000)["peak_over_inputs"]
    assert f"{peak / MIB:.1f}" == "235.6"
    # One size ran: its peak, the prediction said with what it is made of; what stopped 10,000.
    assert allocator.loop_peaks(small) == (
        "is 235.6 MiB at N = 1,000 (the memory model's one-tape prediction, 8 MiB fixed plus 11 "
        "path arrays: 10.2 MiB); at N = 10,000 it reached the memory cap (4.0 GiB)"
    )
    index = at(small, "torch", "question", 1000)
    # A second size with a larger peak: it grows, the prediction a range over the same sizes.
    grown = copy(small, index, paths=3000, peak_over_inputs=900 * MIB)
    assert allocator.loop_peaks(grown).startswith(
        "grows from 235.6 MiB at N = 1,000 to 900.0 MiB at N = 3,000 (the memory model's "
        "one-tape prediction, 8 MiB fixed plus 11 path arrays: 10.2 MiB to 14.7 MiB); "
    )
    # A smaller peak at the larger N: not said to grow.
    shrunk = copy(small, index, paths=3000, peak_over_inputs=100 * MIB)
    assert allocator.loop_peaks(shrunk).startswith(
        "is 100.0 MiB to 235.6 MiB from N = 1,000 to 3,000 ("
    )
    # A timeout is said as such.
    timed_out = edit(small.copy(), at(small, "torch", "question", 10_000),
                     status="timeout", timeout=600.0)  # fmt: skip
    assert allocator.loop_peaks(timed_out).endswith(
        "at N = 10,000 it did not finish: timeout (600 s)"
    )
    assert allocator.loop_peaks(_drop(small, "torch", "question")) is None


# --- cost relative to one simulation ------------------------------------------------------------


def test_costs_read_each_strategy_at_its_largest_correct_n_in_the_registry_order(small):
    costs = chapter.costs(small)
    ok = small[(small["problem"] == "gbm") & (small["target"] == "strategy")]
    ok = ok[ok["status"] == "ok"]
    ran = set(zip(ok["framework"], ok["strategy"], strict=True))
    order = [(s.framework, s.name) for fw in FRAMEWORKS for s in registry.by_framework(fw)]
    assert list(zip(costs["framework"], costs["strategy"], strict=True)) == [
        k for k in order if k in ran
    ]
    by = costs.set_index(["framework", "strategy"])
    # The question's PyTorch program hit the cap at 10,000: it is read at 1,000, one size only.
    assert by.loc[("torch", "question"), "paths"] == 1000
    assert pd.isna(by.loc[("torch", "question"), "slope"])
    # PyTorch's jvp ran to 100,000: its memory against the eager simulation's there. Its time,
    # 4.30, 20.1 and 135 ms at 1,000, 10,000 and 100,000, is five times the smallest at 100,000
    # only (scaling.time_slope): no slope. At 30 ms, 10,000 counts and the fit starts there.
    jvp = by.loc[("torch", "jvp")]
    assert jvp["paths"] == 100_000 and jvp["ratio_median"] == pytest.approx(5.498958, rel=1e-6)
    assert jvp["memory_ratio"] == pytest.approx(490479616 / 176668672)
    assert pd.isna(jvp["slope"]) and pd.isna(jvp["slope_from"])
    df = edit(small.copy(), at(small, "torch", "jvp", 10_000), warm_median_s=0.03)
    jvp = chapter.costs(df).set_index(["framework", "strategy"]).loc[("torch", "jvp")]
    assert jvp["slope"] == pytest.approx(np.log10(0.135236 / 0.03), rel=1e-4)
    assert jvp["slope_from"] == 10_000
    own, _ = chapter.costs_tables(df)
    cells = own[(own["strategy"] == "jvp") & (own["framework"] == "PyTorch")]
    cells = cells["slope in N [from N]"]
    assert cells.tolist() == [f"{jvp['slope']:.2f} [10,000]"]
    assert by.loc[("numpy", "analytic"), "memory_ratio"] == pytest.approx(724992 / 765952)


def test_costs_follow_the_rows(small):
    # jvp timed out at 100,000: it is read at 10,000, where its call is under five times that
    # at 1,000 (20.1 ms against 4.30 ms): no slope.
    df = small.copy()
    _set(df, "torch", "jvp", 100_000, status="timeout")
    jvp = chapter.costs(df).set_index(["framework", "strategy"]).loc[("torch", "jvp")]
    assert jvp["paths"] == 10_000 and jvp["ratio_median"] == pytest.approx(6.400031, rel=1e-6)
    assert pd.isna(jvp["slope"])
    # Without the simulation at 100,000 there is no memory ratio, and the cell says the peak.
    df = _drop(small, "torch", "simulation:eager", 100_000)
    jvp = chapter.costs(df).set_index(["framework", "strategy"]).loc[("torch", "jvp")]
    assert pd.isna(jvp["memory_ratio"])
    assert chapter.memory_cell(jvp["peak_over_inputs"], jvp["memory_ratio"]) == "467.8 MiB"
    # No correct row: an empty table with the columns the notebook reads.
    empty = chapter.costs(small[small["status"] != "ok"])
    assert len(empty) == 0 and {"memory_ratio", "slope", "peak_over_inputs"} <= set(empty)


def test_cells_are_whole_numbers_from_ten_times_up(small):
    assert chapter.ratio_cell(_row(small, "torch", "jvp", 100_000)) == "5.5× [4.2–6.6]"
    assert chapter.ratio_cell(_row(small, "torch", "question", 1000)) == "783× [582–892]"
    assert chapter.ratio_cell(_row(small, "torch", "question", 10_000)) == "–"  # the cap
    assert chapter.memory_cell(13.6 * MIB, 1.5) == "13.6 MiB (1.5×)"
    assert chapter.memory_cell(13.6 * MIB, 9.94) == "13.6 MiB (9.9×)"
    assert chapter.memory_cell(13.6 * MIB, 10.0) == "13.6 MiB (10×)"
    assert chapter.memory_cell(13.6 * MIB, None) == chapter.memory_cell(13.6 * MIB, np.nan)


def test_the_answer_states_the_range_of_its_ratios_over_every_n(small):
    picked = [("torch", "pathwise"), ("jax", "jacfwd")]
    rows = small[small["ratio_median"].notna() & (small["problem"] == "gbm")
                 & (small["dtype"] == "float32") & (small["allocator"] == "glibc")
                 & small[["framework", "strategy"]].apply(tuple, axis=1).isin(picked)]  # fmt: skip
    low, high = rows["ratio_median"].min(), rows["ratio_median"].max()
    said = chapter.ratio_range(small, picked)
    assert said == f"between {formats.times(low)} and {formats.times(high)}"
    df = small.copy()
    _set(df, "torch", "pathwise", 1000, ratio_median=9.5)  # a size where it costs more
    assert chapter.ratio_range(df, picked).endswith("and 9.5×")
    assert chapter.ratio_range(small, [("torch", "nothing")]) == "(no ratio measured)"


def test_the_loop_s_time_growth_is_read_where_it_went_furthest(small):
    df = small.copy()
    base = df.index[(df["framework"] == "torch") & (df["problem"] == "gbm")][0]

    def add(df, n, t, allocator):
        row = df.loc[[base]].copy()
        row.index = [df.index.max() + 1]
        row[["strategy", "paths", "warm_median_s", "allocator", "status", "dtype"]] = (
            "functional-loop",
            n,
            t,
            allocator,
            "ok",
            "float32",
        )
        return pd.concat([df, row])

    df = df[df["strategy"] != "functional-loop"]
    assert chapter.loop_time_growth(df) == ""
    # Both allocators reach 10,000: the faster there is read (jemalloc, not glibc-mmap).
    for n, t, which in ((3000, 0.8578, "jemalloc"), (10_000, 5.2752, "jemalloc"),
                            (3000, 5.8809, "glibc-mmap"), (10_000, 59.03, "glibc-mmap"),
                            (1000, 0.2359, "glibc"), (3000, 0.8548, "glibc")):  # fmt: skip
        df = add(df, n, t, which)
    slope = math.log(5.2752 / 0.8578) / math.log(10_000 / 3000)
    said = chapter.loop_time_growth(df)
    assert said == f"as N^{slope:.2f} from N = 3,000 to 10,000 under jemalloc"
    # Where it went furthest under one allocator only, that one.
    only = df[df["allocator"] == "glibc"]
    assert chapter.loop_time_growth(only).endswith("from N = 1,000 to 3,000 under glibc")


def test_ratios_below_one_leave_the_closed_form_out(small):
    # numpy's closed form is at 0.65×, every other ratio at 1.1× or more.
    assert _row(small, "numpy", "analytic", 1000)["ratio_median"] < 1
    assert chapter.below_one(small) == "in these results none is"
    df = small.copy()
    _set(df, "torch", "pathwise", 10_000, ratio_median=0.9)
    assert chapter.below_one(df) == "in these results one is, at N = 10,000"
    _set(df, "jax", "jvp", 1000, ratio_median=0.8)
    assert chapter.below_one(df) == "in these results 2 are, all at N ≤ 10,000"
    df["ratio_median"] = np.nan
    assert chapter.below_one(df) is None


def test_the_largest_timed_n_and_how_far_the_compiled_variants_reach(small):
    assert chapter.largest_timed_n(small) == 100_000  # PyTorch's jvp
    assert compilation.compiled_reach(small) == (
        "PyTorch's and TensorFlow's compiled strategies were timed up to N = 1,000"
    )
    # TensorFlow's compiled blocked strategies have no eager twin: they are named apart where
    # they reach further (the reference: 10^7 against 10^6).
    index = at(small, "tensorflow", "pathwise-function", 1000)
    df = copy(small, index, strategy="blocked-pathwise-function", paths=10_000)
    assert compilation.compiled_reach(df) == (
        "PyTorch's and TensorFlow's compiled strategies that have an eager counterpart were "
        "timed up to N = 1,000, and TensorFlow's blocked-pathwise-function, compiled with no "
        "eager counterpart, up to N = 10,000"
    )
    # JAX's strategies are compiled too, but it has no eager mode: they do not count.
    df = small
    for fw, name in (("torch", "compiled-pathwise"), ("tensorflow", "pathwise-function"),
                     ("tensorflow", "forward-accumulator-function")):  # fmt: skip
        df = _drop(df, fw, name)
    assert compilation.compiled_reach(df) is None
    assert chapter.largest_timed_n(df) == 100_000


def test_compiled_variants_beside_their_eager_twins(small):
    said = chapter.compiled_beside_eager(small)
    assert [(p["framework"], p["compiled"], p["eager"], p["paths"]) for p in said] == [
        ("torch", "compiled-pathwise", "pathwise", 1000),
        ("tensorflow", "forward-accumulator-function", "forward-accumulator", 1000),
        ("tensorflow", "pathwise-function", "pathwise", 1000),
    ]
    torch = said[0]
    assert torch["warm_ratio"] == pytest.approx(0.000338 / 0.000413, rel=1e-3)
    assert (torch["compiled_ratio"], torch["eager_ratio"]) == pytest.approx((1.292244, 2.348051))
    # Where the eager twin did not run at the variant's size (PyTorch's pathwise ran at 10,000
    # only), or failed there, the variant is left out.
    names = [p["compiled"] for p in chapter.compiled_beside_eager(
        _drop(small, "torch", "pathwise", 1000))]  # fmt: skip
    assert "compiled-pathwise" not in names and "pathwise-function" in names
    df = small.copy()
    _set(df, "tensorflow", "pathwise", 1000, status="timeout")
    names = [p["compiled"] for p in chapter.compiled_beside_eager(df)]
    assert names == ["compiled-pathwise", "forward-accumulator-function"]


def test_compiled_variants_and_their_eager_counterparts(small):
    df = small
    pairs = {(fw, c): e for fw in FRAMEWORKS for c, e in registry.compiled_variants(fw)}
    assert pairs["torch", "compiled-jvp"] == "jvp"
    assert pairs["torch", "compiled-pathwise"] == "pathwise"
    assert pairs["tensorflow", "pathwise-function"] == "pathwise"
    assert pairs["tensorflow", "forward-accumulator-xla"] == "forward-accumulator"
    jax = {c: e for (fw, c), e in pairs.items() if fw == "jax"}
    assert set(jax) == {s.name for s in registry.by_framework("jax", "gbm")}
    assert set(jax.values()) == {None}  # JAX runs jitted only: no eager twin to invent
    assert ("torch", "pathwise") not in pairs
    assert chapter.compiled_pairs() == [(fw, e, c) for (fw, c), e in pairs.items() if e]

    prices = {
        (p["framework"], p["strategy"], p["paths"]): p for p in compilation.compile_prices(df, 1000)
    }
    p = prices["torch", "compiled-pathwise", 1000]
    # The first call, 2.458544 s, over the fastest warm call, 0.283 ms (the fixture's row)
    assert p["compile"] == pytest.approx(2.458544 - 0.000283, rel=1e-6)
    assert p["compile_within_noise"] is False
    # Against pathwise (first call 6.490 ms, warm 0.4126 ms): the 2.452 s head start over the
    # 0.07486 ms saved a call is made up after 32,754.8 warm calls, so from call 32,756.
    assert (p["eager_cold"], p["eager_warm"]) == pytest.approx((0.0064899, 0.00041263), rel=1e-4)
    assert p["break_even"] == 32_756
    assert prices["jax", "pathwise", 1000]["eager"] is None
    assert ("jax", "pathwise", 10_000) in prices  # the largest N it ran


# --- the price of compilation -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cold_c", "warm_c", "cold_e", "warm_e", "calls"),
    [
        (0.5, 0.1, 1.0, 0.2, 1),  # cheaper from the start
        (0.5, 0.3, 1.0, 0.2, 1),  # its first call alone is already cheaper
        (1.0, 0.125, 0.5, 0.25, 6),  # 1 + 4/8 = 0.5 + 4/4: a tie at 5 calls, ahead at 6
        (2.0, 0.25, 0.5, 0.5, 8),
        (2.46, 0.00034, 0.0065, 0.00041, 35_052),
        (1.0, 0.2, 0.5, 0.2, None),  # same warm time, dearer first call: never
        (1.0, 0.3, 0.5, 0.2, None),
    ],
)
def test_break_even_on_made_up_numbers(cold_c, warm_c, cold_e, warm_e, calls):
    assert compilation.break_even(cold_c, warm_c, cold_e, warm_e) == calls
    if calls is not None:  # the definition, call by call

        def total(cold, warm, n):
            return cold + (n - 1) * warm

        assert total(cold_c, warm_c, calls) < total(cold_e, warm_e, calls)
        assert calls == 1 or total(cold_c, warm_c, calls - 1) >= total(cold_e, warm_e, calls - 1)


def _first_call_ahead(c: pd.Series, e: pd.Series) -> int:
    """The break-even call counted one call at a time."""
    c1, cw, e1, ew = (float(r[k]) for r in (c, e) for k in ("cold_s", "warm_median_s"))
    n = 1
    while c1 + (n - 1) * cw >= e1 + (n - 1) * ew:
        n += 1
    return n


def test_when_compiled_pathwise_gradients_overtake_their_eager_selves(small):
    prices = compilation.compile_prices(small, 1000)
    torch = _first_call_ahead(_row(small, "torch", "compiled-pathwise", 1000),
                              _row(small, "torch", "pathwise", 1000))  # fmt: skip
    tf = _first_call_ahead(_row(small, "tensorflow", "pathwise-function", 1000),
                           _row(small, "tensorflow", "pathwise", 1000))  # fmt: skip
    assert torch > 10_000 and tf == 9
    said = compilation.overtakes(prices, "torch", "compiled-pathwise")
    assert said == f"from call {torch:,} at N = 1,000"
    assert (
        compilation.overtakes(prices, "tensorflow", "pathwise-function")
        == "from call 9 at N = 1,000"
    )
    assert compilation.overtakes(prices, "jax", "pathwise") is None  # no eager twin
    assert compilation.overtakes(prices, "torch", "compiled-jvp") is None  # not measured
    # A first call cheaper than the eager one's: from the first call.
    df = small.copy()
    _set(df, "torch", "compiled-pathwise", 1000, cold_s=0.005)
    prices = compilation.compile_prices(df, 1000)
    assert compilation.overtakes(prices, "torch", "compiled-pathwise") == (
        "from the first call at N = 1,000"
    )


def test_compile_price_cells_and_phrases():
    price = {"eager": "pathwise", "break_even": 35_052}
    assert compilation.beats_eager(price) == "from call 35,052"
    assert compilation.break_even_cell(price) == "35,052"
    assert compilation.beats_eager(price | {"break_even": 1}) == "from the first call"
    assert compilation.beats_eager(price | {"break_even": None}) == "never"
    assert compilation.break_even_cell(price | {"break_even": None}) == "never"
    assert compilation.break_even_cell({"eager": None, "break_even": None}) == "no eager variant"
    assert compilation.time_pair(2.46, 0.0065) == "2.46\u00a0s / 6.5\u00a0ms"
    assert compilation.time_pair(2.46, None) == "2.46\u00a0s"


def test_whether_compiling_pays_follows_the_break_even_calls_size_by_size():
    def price(n, eager, calls):
        return {"paths": n, "eager": eager, "break_even": calls}

    prices = [
        price(1000, "jvp", 256),
        price(1000, "pathwise", 4498),
        price(1000, "pathwise", 7),
        price(10**6, "jvp", 1),
        price(10**6, "pathwise", 2),
        price(10**6, None, None),
    ]
    assert compilation.payback_sentence(prices) == (
        "Whether a compiled variant is worth its compile depends on N: at N = 1,000 compiled "
        "variants overtake their eager counterparts from call 7 to call 4,498; at N = 1,000,000 "
        "compiled variants overtake their eager counterparts from the first or second call."
    )
    prices = [
        price(1000, "jvp", None),
        price(1000, "pathwise", 50),
        price(10**6, "jvp", 1),
        price(10**7, "jvp", None),
    ]
    assert compilation.payback_sentence(prices) == (
        "Whether a compiled variant is worth its compile depends on N: at N = 1,000 compiled "
        "variants overtake their eager counterparts from call 50 (1 of the 2 never do); at "
        "N = 1,000,000 compiled variants overtake their eager counterparts from the first call; "
        "at N = 10,000,000 no compiled variant overtakes its eager counterpart."
    )
    assert compilation.payback_sentence([price(1000, None, None)]) == (
        "Whether compiling pays was not measured in this build."
    )


def test_the_cheapest_and_dearest_compile_at_the_comparison_size(small):
    prices = compilation.compile_prices(small, 1000)
    low, high = compilation.compile_extremes(prices, 1000)
    # From the rows: TensorFlow's pathwise-function compiles in 0.159 - 0.001 s, PyTorch's
    # compiled-pathwise in 2.459 - 0.0003 s; every other compiled row lies between.
    assert (low["framework"], low["strategy"]) == ("tensorflow", "pathwise-function")
    assert low["compile"] == pytest.approx(0.159231 - 0.000790, rel=1e-5)
    assert (high["framework"], high["strategy"]) == ("torch", "compiled-pathwise")
    assert chapter.named(low) == "TensorFlow's pathwise-function"
    assert chapter.named(None) == "–"
    assert compilation.compile_extremes(prices, 5) == (None, None)


def test_a_compile_cost_is_never_negative_and_within_noise_when_the_warm_calls_cover_it(small):
    # A first call of 20.9 s under warm calls of 20.5 to 22.2 s (the reference's JAX
    # blocked-pathwise at 10^7 printed "-1285530 µs"): 0.4 s above the fastest, within noise.
    df = small.copy()
    _set(df, "jax", "pathwise", 1000, cold_s=20.9, warm_min_s=20.5, warm_median_s=22.2,
         warm_max_s=22.2)  # fmt: skip
    p = {(q["framework"], q["strategy"], q["paths"]): q
         for q in compilation.compile_prices(df, 1000)}["jax", "pathwise", 1000]  # fmt: skip
    assert p["compile"] == pytest.approx(0.4)
    assert p["compile_within_noise"] is True
    assert compilation.compile_cell(p) == "within noise (400.0 ms)"
    # Faster than every warm call: no compile to see, and never a negative cost.
    _set(df, "jax", "pathwise", 1000, cold_s=20.0)
    p = compilation.compile_prices(df, 1000)
    faster = [q for q in p if q["strategy"] == "pathwise" and q["paths"] == 1000]
    assert [q["compile"] for q in faster] == [0]
    assert compilation.compile_cell(faster[0]) == "within noise"
    # A first call above the slowest warm call is a compile cost, printed as a time.
    _set(df, "jax", "pathwise", 1000, cold_s=25.2)
    at = {(q["framework"], q["strategy"], q["paths"]): q
          for q in compilation.compile_prices(df, 1000)}  # fmt: skip
    assert compilation.compile_cell(at["jax", "pathwise", 1000]) == "4.70 s"


def test_a_tie_in_the_cheapest_compile_goes_to_the_first_and_a_cheaper_one_wins(small):
    # A tie: the first in the registry's order (TensorFlow before JAX); then JAX's jvp cheaper.
    df = small.copy()
    _set(df, "tensorflow", "pathwise-function", 1000, cold_s=0.5, warm_min_s=0.25)
    _set(df, "jax", "jvp", 1000, cold_s=0.5, warm_min_s=0.25)
    low, _ = compilation.compile_extremes(compilation.compile_prices(df, 1000), 1000)
    assert (low["framework"], low["strategy"]) == ("tensorflow", "pathwise-function")
    _set(df, "jax", "jvp", 1000, cold_s=0.4)
    low, _ = compilation.compile_extremes(compilation.compile_prices(df, 1000), 1000)
    assert (low["framework"], low["strategy"]) == ("jax", "jvp")


# --- accuracy ---------------------------------------------------------------------------------


def test_the_largest_error_at_a_size(small):
    # numpy's finite differences have the largest error (2.4e-05); of the differentiating
    # strategies, the question's TensorFlow program (1.2e-06).
    assert accuracy.largest_error(small, 1000) == pytest.approx(2.403067e-05, rel=1e-6)
    ad = accuracy.largest_error(small, 1000, ("torch", "tensorflow", "jax"))
    assert ad == pytest.approx(1.21936e-06, rel=1e-5)
    df = small.copy()
    _set(df, "numpy", "finite-difference", 1000, status="timeout")
    assert accuracy.largest_error(df, 1000) == pytest.approx(ad)
    assert accuracy.largest_error(small, 5) is None


def _norm_cdf(x: float) -> float:
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def test_the_standard_errors_of_an_at_the_money_calls_greeks():
    # By quadrature over W_T ~ N(0, T): per path, delta 1{S_T > S0} S_T / S0 and vega
    # 1{S_T > S0} S_T (W_T - sigma T); their relative standard error over N paths.
    s0, vol, mu, t, n = 100.0, 0.2, 0.03, 1.0, 10_000
    w = np.linspace(-8, 8, 200_001)
    density = np.exp(-w * w / 2) / math.sqrt(2 * math.pi) * (w[1] - w[0])
    s = s0 * np.exp((mu - vol * vol / 2) * t + vol * w)
    expected = {}
    for name, x in (("delta", (s > s0) * s / s0), ("vega", (s > s0) * s * (w - vol * t))):
        mean, second = (density * x).sum(), (density * x * x).sum()
        expected[name] = math.sqrt(second - mean * mean) / math.sqrt(n) / mean
    # The delta's mean is e^(mu T) N(d1), d1 = (mu + sigma^2 / 2) sqrt(T) / sigma.
    d1 = (mu + vol * vol / 2) / vol
    delta = (density * (s > s0) * s / s0).sum()
    assert delta == pytest.approx(math.exp(mu) * _norm_cdf(d1), rel=1e-4)
    se = accuracy.standard_errors(n)
    assert se["paths"] == n
    assert se["delta"] == pytest.approx(expected["delta"], rel=0.05)  # a sample of 10^4 paths
    assert se["vega"] == pytest.approx(expected["vega"], rel=0.05)
    assert f"{se['delta']:.1%}" == "1.0%"


def test_the_cheapest_automatic_differentiation_at_a_size_on_one_scale(small):
    # At 1,000, each warm time over its framework's fastest simulation: TensorFlow's
    # pathwise-function 0.882 ms / 1.002 ms = 0.88×, the lowest of the AD strategies; numpy's
    # closed form (0.28×) is not automatic differentiation. By the ratio to its own simulation
    # (side by side) it is the lowest too (1.14×), but the scales differ: PyTorch's
    # compiled-pathwise is 1.29× its compiled simulation and 1.93× PyTorch's fastest.
    cheapest = accuracy.cheapest_ad(small, 1000)
    assert (cheapest["framework"], cheapest["strategy"]) == ("tensorflow", "pathwise-function")
    assert cheapest["ratio_to_fastest_simulation"] == pytest.approx(0.000882 / 0.001002, rel=1e-2)
    assert accuracy.cheapest_ad(small, None) is None
    assert accuracy.cheapest_ad(small, 5) is None
    # A tie: the first in framework order (jax before tensorflow).
    df = small.copy()
    tie = _row(df, "tensorflow", "pathwise-function", 1000)["ratio_to_fastest_simulation"]
    _set(df, "jax", "jvp", 1000, ratio_to_fastest_simulation=tie)
    assert accuracy.cheapest_ad(df, 1000)["strategy"] == "jvp"
    # A failed row is no candidate: the next on the one scale is TensorFlow's
    # forward-accumulator-function (1.50×), not PyTorch's compiled-pathwise (1.29× its own
    # simulation, 1.93× on the one scale); a cheaper row is the pick.
    df = small.copy()
    _set(df, "tensorflow", "pathwise-function", 1000, status="memory-cap")
    assert chapter.named(accuracy.cheapest_ad(df, 1000)) == (
        "TensorFlow's forward-accumulator-function"
    )
    _set(df, "torch", "pathwise", 1000, ratio_to_fastest_simulation=0.5)
    assert chapter.named(accuracy.cheapest_ad(df, 1000)) == "PyTorch's pathwise"
    # A path-blocked strategy draws its own normals: not on the scale, however low its ratio.
    blocked = _row(df, "jax", "jvp", 1000).copy()
    blocked["strategy"], blocked["ratio_to_fastest_simulation"] = "blocked-jvp", 0.1
    df = pd.concat([df, blocked.to_frame().T.astype(df.dtypes.to_dict())], ignore_index=True)
    assert chapter.named(accuracy.cheapest_ad(df, 1000)) == "PyTorch's pathwise"


def test_the_pathwise_trick_matches_a_jvp_until_the_paths_are_coupled():
    check = accuracy.pathwise_check(1000)
    assert check["gbm"] < 1e-5  # float32 rounding
    assert check["vmap"] < 1e-5
    assert check["normalised"] > 0.5  # the coupling changes the column, silently


# --- the allocator ------------------------------------------------------------------------------


def _glibc_only(df):
    """The fixture less its one row under another allocator (PyTorch's jvp under jemalloc)."""
    return df[df["allocator"] == "glibc"].reset_index(drop=True)


def _allocator_rows(df):
    """The fixture's glibc rows with PyTorch's default loop (grad-loop's row relabelled) at
    N = 1,000 under each allocator, and the question's program under glibc-mmap."""
    df = _glibc_only(df)
    base = df[_at(df, "torch", "grad-loop", 1000)].iloc[0]
    made = []
    for alloc, peak, warm in (("glibc", 100, 1.0), ("glibc-mmap", 10, 3.0), ("jemalloc", 20, 1.1)):
        made.append(base.copy())
        made[-1][["strategy", "allocator", "peak_over_inputs", "warm_median_s"]] = (
            "functional-loop", alloc, peak * MIB, warm)  # fmt: skip
    question = df[_at(df, "torch", "question", 1000)].iloc[0].copy()
    question["allocator"] = "glibc-mmap"
    return pd.concat([df, pd.DataFrame([*made, question])], ignore_index=True)


def test_the_questions_program_with_the_mmap_threshold_fixed(small):
    assert allocator.glibc_mmap_threshold() == 65536
    df = _allocator_rows(small)
    # The question's program at 1,000 under glibc-mmap is its glibc row relabelled; a smaller peak.
    df.loc[_at(df, "torch", "question", 1000, allocator="glibc-mmap"), "peak_over_inputs"] = MIB
    glibc = _row(df, "torch", "question", 1000)["peak_over_inputs"]
    said = allocator.question_under_mmap(df, 1000)
    assert said == f"holds 1.0 MiB instead of {formats.size(glibc)}"
    assert allocator.question_under_mmap(df, None) == "was not measured under both at that N"
    assert allocator.question_under_mmap(small, 1000) == "was not measured under both at that N"
    df.loc[_at(df, "torch", "question", 1000, allocator="glibc-mmap"), "status"] = "timeout"
    assert allocator.question_under_mmap(df, 1000).startswith("did not finish under both (")


def test_the_allocator_factor_is_not_measured_without_other_allocators(small):
    # The fixture's jemalloc row is PyTorch's jvp: no loop, no factor.
    assert allocator.allocator_loops(small) == [("torch", "jvp")]
    assert allocator.allocator_size(small) == 1000
    assert allocator.allocator_effect(small)["n"] is None
    small = _glibc_only(small)
    assert allocator.allocator_loops(small) == [] and allocator.allocator_size(small) is None
    assert allocator.under_allocators(small) == {}
    effect = allocator.allocator_effect(small)
    assert set(effect["peak"].values()) == {None}
    assert set(effect["time_over_glibc"].values()) == {None}


def test_the_default_loop_under_each_allocator(small):
    df = _allocator_rows(small)
    assert allocator.allocator_loops(df) == [("torch", "question"), ("torch", "functional-loop")]
    assert allocator.allocator_size(df) == 1000
    assert list(allocator.under_allocators(df)) == [
        ("question", "glibc"), ("question", "glibc-mmap"), ("functional-loop", "glibc"),
        ("functional-loop", "glibc-mmap"), ("functional-loop", "jemalloc"),
    ]  # fmt: skip
    table = allocator.allocators_table(df, [1000])
    assert table.iloc[2].tolist() == ["1,000", "functional-loop", "glibc", "1.00 s", "100.0 MiB"]
    assert len(table) == 5 and allocator.allocators_table(df, []).empty
    effect = allocator.allocator_effect(df)
    assert effect["n"] == allocator.allocator_compared_size(df) == 1000
    assert effect["peak"] == {"glibc": 100 * MIB, "glibc-mmap": 10 * MIB, "jemalloc": 20 * MIB}
    assert effect["time"] == {"glibc": 1.0, "glibc-mmap": 3.0, "jemalloc": 1.1}
    assert effect["time_over_glibc"] == pytest.approx({"glibc-mmap": 3.0, "jemalloc": 1.1})


def test_a_missing_or_failed_allocator_row_is_not_measured(small):
    df = _allocator_rows(small)
    without = df[~_at(df, "torch", "functional-loop", allocator="jemalloc")]
    assert allocator.allocator_compared_size(without) is None  # no N with all three
    effect = allocator.allocator_effect(without, 1000)
    assert effect["peak"]["jemalloc"] is None and effect["time_over_glibc"]["jemalloc"] is None
    assert effect["peak"]["glibc-mmap"] == 10 * MIB
    df.loc[_at(df, "torch", "functional-loop", allocator="glibc-mmap"), "status"] = "memory-cap"
    assert allocator.allocator_compared_size(df) is None  # a failed row does not count
    effect = allocator.allocator_effect(df, 1000)
    assert effect["peak"]["glibc-mmap"] is None and effect["time_over_glibc"]["glibc-mmap"] is None
    assert ("functional-loop", "glibc-mmap") in allocator.under_allocators(df)  # shown, failed
    # Without glibc's row there is nothing to set the other times against.
    effect = allocator.allocator_effect(
        df[~_at(df, "torch", "functional-loop", allocator="glibc")], 1000
    )
    assert effect["time_over_glibc"] == {"glibc-mmap": None, "jemalloc": None}


def test_the_allocator_size_is_the_largest_n_measured_under_another_allocator(small):
    # The question's program under jemalloc at 3,000 moves the size, where the loop has no row.
    df = _allocator_rows(small)
    row = df[_at(df, "torch", "question", 1000, allocator="glibc-mmap")].iloc[0].copy()
    row[["paths", "allocator"]] = (3000, "jemalloc")
    df = pd.concat([df, pd.DataFrame([row])], ignore_index=True)
    assert allocator.allocator_size(df) == 3000
    assert list(allocator.under_allocators(df)) == [("question", "jemalloc")]
    assert len(allocator.under_allocators(df, 1000)) == 5
    # The effect is read where the loop ran under all three (1,000), not at 3,000.
    assert allocator.allocator_effect(df)["n"] == 1000
    assert allocator.allocator_effect(df)["peak"]["glibc"] == 100 * MIB
    assert set(allocator.allocator_effect(df, 3000)["peak"].values()) == {None}


def _loop_at(df, paths, rows, strategy="functional-loop"):
    """The frame with PyTorch's loop at N = paths under allocators: {allocator: (status, peak MiB,
    warm s) or (status, peak, warm, heap in use MiB, heap kept MiB)}."""
    base = df[_at(df, "torch", "grad-loop", 1000)].iloc[0]
    made = []
    for alloc, values in rows.items():
        status, peak, warm, *heap = values
        r = base.copy()
        r[["strategy", "allocator", "paths", "status", "peak_over_inputs", "warm_median_s"]] = (
            strategy, alloc, paths, status, None if peak is None else peak * MIB, warm)  # fmt: skip
        if heap:
            r["inputs_heap_in_use"] = 5 * MIB
            r["warm_heap_in_use"] = 5 * MIB + heap[0] * MIB
            r["warm_heap_free_kept"] = heap[1] * MIB
        made.append(r)
    return pd.concat([df, pd.DataFrame(made)], ignore_index=True)


def test_the_allocator_sentence_reads_the_compared_size_then_the_larger_one(small):
    df = _allocator_rows(small)
    df = _loop_at(
        df,
        3000,
        {
            "glibc": ("memory-cap", None, None),
            "glibc-mmap": ("ok", 15, 60.0),
            "jemalloc": ("ok", 18, 9.0),
        },
    )
    said = allocator.allocator_sentence(df)
    assert said.startswith("At N = 1,000, the largest N at which it ran under all three, ")
    assert (
        "holds 100.0 MiB beyond its inputs under glibc's default, 10.0 MiB with the mmap "
        "threshold fixed (3.0× glibc's time) and 20.0 MiB under jemalloc (about glibc's "
        "time)."
    ) in said
    assert ("At N = 3,000, under glibc's default it stopped: memory cap (") in said
    assert (
        "with the mmap threshold fixed at 64.0 KiB (glibc-mmap) it held 15.0 MiB in 60.00 s a "
        "call; under jemalloc it held 18.0 MiB in 9.00 s a call."
    ) in said
    assert "worth choosing: jemalloc keeps the memory down at no cost in time" in said


def test_the_allocator_is_worth_choosing_only_where_the_data_says_so(small):
    df = _allocator_rows(small)
    slow = df.copy()
    slow.loc[_at(slow, "torch", "functional-loop", allocator="jemalloc"), "warm_median_s"] = 2.0
    said = allocator.allocator_sentence(slow)
    assert "(2.0× glibc's time)" in said and "a trade, not a free choice" in said
    assert "worth choosing" not in said
    big = df.copy()
    big.loc[_at(big, "torch", "functional-loop", allocator="jemalloc"), "peak_over_inputs"] = (
        80 * MIB
    )
    said = allocator.allocator_sentence(big)
    assert "worth choosing" not in said and "a trade" not in said
    fast = df.copy()
    fast.loc[_at(fast, "torch", "functional-loop", allocator="jemalloc"), "warm_median_s"] = 0.5
    assert "(2.0× faster)" in allocator.allocator_sentence(fast)
    assert "not measured under all three" in allocator.allocator_sentence(small)


def test_the_allocator_experiment_reads_what_glibc_kept(small):
    df = _loop_at(small, 3000, {
        "glibc": ("ok", 1000, 1.2, 2, 900),
        "glibc-arena1": ("ok", 950, 1.3, 2, 880),
        "glibc-trim": ("ok", 990, 1.5, 2, 910),
    })  # fmt: skip
    df = _loop_at(
        df, 1000, {"glibc": ("ok", 130, 0.2, 1, 120), "glibc-arena1": ("ok", 120, 0.2, 1, 110)}
    )
    exp = allocator.allocator_experiment(df)
    assert list(zip(exp["paths"], exp["allocator"], strict=True)) == [
        (1000, "glibc"), (1000, "glibc-arena1"),
        (3000, "glibc"), (3000, "glibc-arena1"), (3000, "glibc-trim"),
    ]  # fmt: skip
    row = exp[(exp["paths"] == 3000) & (exp["allocator"] == "glibc")].iloc[0]
    assert row["in_use"] == 2 * MIB and row["kept"] == 900 * MIB and row["peak"] == 1000 * MIB
    said = allocator.allocator_experiment_sentence(exp)
    assert said.startswith(
        "After the warm calls of PyTorch's default loop (functional-loop) at N = 3,000 under "
        "glibc's default, malloc had "
        "2.0 MiB more in use than before the first call and 900.0 MiB freed "
        "but kept, against a peak of 1000.0 MiB beyond the inputs: what stays "
        "resident is memory the program has freed and glibc keeps"
    )
    assert (
        "not memory the program holds. With one arena (MALLOC_ARENA_MAX=1) the peak was "
        "950.0 MiB (0.95× glibc's default peak, about glibc's time)"
    ) in said
    assert "with malloc_trim(0) after every call the peak was 990.0 MiB (0.99×" in said
    assert said.endswith(
        "One arena leaves the peak where it was, so the memory is not kept in other threads' "
        "arenas. Trimming between calls does not lower it either: the peak is reached within "
        "one call, whose backward passes do not reuse the buffers the earlier ones freed."
    )
    # A variant that halves the peak is not read as leaving it where it was.
    halved = exp.copy()
    halved.loc[(halved["paths"] == 3000) & (halved["allocator"] == "glibc-arena1"), "peak"] = (
        400 * MIB
    )
    said = allocator.allocator_experiment_sentence(halved)
    assert "(0.40× glibc's default peak" in said and "One arena leaves" not in said
    assert "Trimming between calls does not lower it either" in said
    # Memory the program still holds reads so.
    held = _loop_at(
        small, 3000, {"glibc": ("ok", 1000, 1.2, 900, 50), "glibc-trim": ("ok", 1000, 1.2, 900, 50)}
    )
    said = allocator.allocator_experiment_sentence(allocator.allocator_experiment(held))
    assert "the program itself still holds most of it" in said
    assert "Trimming between calls" not in said  # not read where the program holds it


def test_the_allocator_experiment_absent_or_without_glibc(small):
    assert allocator.allocator_experiment(small).empty
    assert "was not run in this build" in allocator.allocator_experiment_sentence(
        allocator.allocator_experiment(small)
    )
    alone = _loop_at(small, 3000, {"glibc-arena1": ("ok", 950, 1.3, 2, 880)})
    said = allocator.allocator_experiment_sentence(allocator.allocator_experiment(alone))
    assert said.startswith("At N = 3,000 the loop did not run under glibc's default")


def test_the_loop_growth_is_fitted_from_the_rows(small):
    df = small.copy()
    df = df[~_at(df, "torch", "question")]
    base = small[_at(small, "torch", "question", 1000)].iloc[0]
    rows = []
    for n, peak in ((1000, 131), (3000, 1157), (10000, None)):
        r = base.copy()
        r[["paths", "peak_over_inputs", "status"]] = (
            n,
            None if peak is None else peak * MIB,
            "ok" if peak else "memory-cap",
        )
        rows.append(r)
    df = pd.concat([df, pd.DataFrame(rows)], ignore_index=True)
    g = chapter.loop_growth(df)
    slope = math.log(1157 / 131) / math.log(3)
    assert (g["from"], g["to"]) == (1000, 3000) and g["slope"] == pytest.approx(slope)
    array = (int(base["steps"]) + 1) * 3000 * 4  # float32 path array at N = 3,000
    assert g["per_pass"] == pytest.approx(1157 * MIB / (3000 * array))
    said = chapter.loop_growth_sentence(df)
    assert said.startswith(
        f"between N = 1,000 and 3,000, the sizes measured there, its peak beyond the inputs "
        f"grows as N^{slope:.2f}, as if each of the N backward passes left "
        f"{g['per_pass']:.2f} of a path array behind"
    )
    # A peak that grows as one tape does reads so.
    flat = df.copy()
    flat.loc[_at(flat, "torch", "question", 3000), "peak_over_inputs"] = 131 * 3.3 * MIB
    said = chapter.loop_growth_sentence(flat)
    assert said.endswith(", no faster than the one tape the loop needs")
    one = df[~_at(df, "torch", "question", 3000)]
    assert chapter.loop_growth(one) is None
    assert "not fitted here" in chapter.loop_growth_sentence(one)


def _drawing_rows(df, paths, rows):
    """The frame with blocked rows at N = paths copied from the fixture's torch rows at 1,000:
    {(framework, name): warm s}; names starting 'simulation:' become simulation rows."""
    strategy = df[_at(df, "torch", "jvp", 1000)].iloc[0]
    sim = df[(df["framework"] == "torch") & (df["strategy"] == "simulation:eager")
             & (df["paths"] == 1000)].iloc[0]  # fmt: skip
    made = []
    for (fw, name), warm in rows.items():
        r = (sim if name.startswith("simulation:") else strategy).copy()
        r[["framework", "strategy", "paths", "warm_median_s", "status"]] = (
            fw,
            name,
            paths,
            warm,
            "ok" if warm is not None else "timeout",
        )
        made.append(r)
    return pd.concat([df, pd.DataFrame(made)], ignore_index=True)


def test_the_drawing_share_of_the_blocked_cases(small):
    df = _drawing_rows(small, 10**7, {
        ("torch", "simulation:blocked-draws"): 6.0, ("torch", "simulation:blocked-eager"): 10.0,
        ("torch", "blocked-jvp"): 20.0, ("torch", "blocked-pathwise"): 12.0,
        ("jax", "simulation:blocked-draws"): 9.0, ("jax", "simulation:blocked-jit"): 10.0,
        ("jax", "blocked-jvp"): 15.0, ("jax", "blocked-pathwise"): None,
    })  # fmt: skip
    assert blocked.drawing_size(df) == 10**7
    shares = blocked.drawing_shares(df, 10**7)
    assert list(zip(shares["framework"], shares["strategy"], strict=True)) == [
        ("torch", "simulation:blocked-eager"), ("torch", "blocked-jvp"),
        ("torch", "blocked-pathwise"), ("jax", "simulation:blocked-jit"), ("jax", "blocked-jvp"),
    ]  # fmt: skip
    assert list(shares["share"]) == pytest.approx([0.6, 0.3, 0.5, 0.9, 0.6])
    said = blocked.drawing_sentence(shares, 10**7)
    assert said.startswith(
        "At N = 10,000,000, drawing the normals alone takes 60% to 90% of the "
        "blocked simulations' time and 30% to 60% of the blocked strategies'"
    )
    assert "for blocked-jvp in JAX, the random numbers are most of the Jacobian's cost" in said
    # Under 60% everywhere (a half and a tenth of uncertainty): no such clause.
    low = shares.assign(share=shares["share"].clip(upper=0.59))
    assert "most of the Jacobian's cost" not in blocked.drawing_sentence(low, 10**7)
    assert blocked.drawing_size(small) is None and blocked.drawing_shares(small, None).empty
    assert "was not measured in this build" in blocked.drawing_sentence(
        blocked.drawing_shares(small, None), None
    )


def test_tensorflow_drawing_under_xla(small):
    def rows(function, xla, philox):
        return _drawing_rows(small, 10**6, {
            ("tensorflow", "simulation:function-draws"): function,
            ("tensorflow", "simulation:xla-draws"): xla,
            ("tensorflow", "simulation:xla-philox-draws"): philox,
        })  # fmt: skip

    found = blocked.tensorflow_drawing(rows(1.0, 20.0, 1.05))
    assert found["n"] == 10**6 and found["xla"]["warm_median_s"] == 20.0
    said = blocked.tensorflow_drawing_sentence(found)
    assert (
        "takes 1.00 s in a tf.function; with jit_compile=True, 20.00 s, 20.0× as long; with "
        "jit_compile=True and alg='philox' named, 1.05 s, about the same."
    ) in said
    assert "should name alg='philox'" in said
    said = blocked.tensorflow_drawing_sentence(blocked.tensorflow_drawing(rows(1.0, 20.0, 18.0)))
    assert "slow whichever algorithm" in said
    said = blocked.tensorflow_drawing_sentence(blocked.tensorflow_drawing(rows(1.0, None, 1.0)))
    assert "with jit_compile=True, timeout (" in said and "should name alg='philox'" in said
    said = blocked.tensorflow_drawing_sentence(blocked.tensorflow_drawing(rows(1.0, 1.1, 1.0)))
    assert "costs no more than a tf.function's" in said
    assert blocked.tensorflow_drawing(small) is None
    assert "was not measured" in blocked.tensorflow_drawing_sentence(None)


# --- why such a difference ----------------------------------------------------------------------


def test_the_question_against_the_fastest_strategy_and_the_pathwise_gradient(small):
    # PyTorch at 1,000: the question's 0.351 s against compiled-pathwise's 0.338 ms.
    question = _row(small, "torch", "question", 1000)["warm_median_s"]
    fastest = _row(small, "torch", "compiled-pathwise", 1000)["warm_median_s"]
    assert chapter.question_speedup(small, "torch", 1000) == pytest.approx(question / fastest)
    # The fastest is compiled: its first call and the fastest eager strategy (PyTorch's pathwise,
    # 0.413 ms) come with it.
    found = chapter.question_against_fastest(small, "torch", 1000)
    assert found["name"] == "compiled-pathwise" and found["eager_name"] == "pathwise"
    assert found["cold_s"] == _row(small, "torch", "compiled-pathwise", 1000)["cold_s"]
    eager = _row(small, "torch", "pathwise", 1000)["warm_median_s"]
    assert found["eager_speedup"] == pytest.approx(question / eager)
    df = small.copy()
    _set(df, "torch", "pathwise", 1000, warm_median_s=0.0001)
    assert chapter.question_speedup(df, "torch", 1000) == pytest.approx(question / 0.0001)
    found = chapter.question_against_fastest(df, "torch", 1000)  # eager pathwise is fastest
    assert found["name"] == "pathwise" and found["cold_s"] is None
    _set(df, "torch", "question", 1000, status="timeout")
    assert chapter.question_speedup(df, "torch", 1000) is None
    # TensorFlow at 1,000: the question's peak beyond the inputs over pathwise's.
    assert chapter.question_memory_over_pathwise(small, "tensorflow", 1000) == pytest.approx(
        473604096 / 4333568
    )
    df = small.copy()
    _set(df, "tensorflow", "pathwise", 1000, peak_over_inputs=0)
    assert chapter.question_memory_over_pathwise(df, "tensorflow", 1000) is None
    assert chapter.question_memory_over_pathwise(small, "tensorflow", 10_000) is None  # skipped


# --- blocks of paths ----------------------------------------------------------------------------


def _blocked_memory(small, peaks_mib):
    """PyTorch's blocked-pathwise at each N with its memory beyond the inputs (MiB)."""
    index = at(small, "torch", "pathwise", 10_000)
    df = small
    for n, mib in peaks_mib.items():
        df = copy(df, index, strategy="blocked-pathwise", paths=n, peak_over_inputs=mib * MIB)
    return df


def test_a_blocked_strategys_memory_beyond_its_result_is_said_where_it_ran_whole_blocks(small):
    assert "not measured" in blocked.memory_sentence(small)
    # Its result is 12 bytes a path in float32: 11.4 MiB at 10^6, 114.4 MiB at 10^7. At 10,000,
    # less than one block, it is left out; 100 MiB more beyond the result from 10^5 to 10^6 (a
    # path array grows by 182 MiB), 3.0 MiB more from 10^6 to 10^7 (1.8 GiB).
    result = {n: 12 * n / MIB for n in (10**5, 10**6, 10**7)}
    peaks = {10_000: 1.0, 10**5: 200 + result[10**5], 10**6: 300 + result[10**6],
             10**7: 303 + result[10**7]}  # fmt: skip
    df = _blocked_memory(small, peaks)
    growth = blocked.memory_growth(df)
    assert growth[["from", "to"]].values.tolist() == [[10**5, 10**6], [10**6, 10**7]]
    assert growth["growth"].tolist() == pytest.approx([100 * MIB, 3 * MIB])
    # The fixture's rows ran glibc as it comes: one setting, nothing said of it.
    assert blocked.memory_sentence(df) == (
        "From N = 100,000 to 1,000,000 a blocked strategy's memory beyond its result grew by "
        "100.0 MiB, while one path array grows by 182.0 MiB. From N = 1,000,000 to 10,000,000 it "
        "grew by 3.0 MiB, while one path array grows by 1.8 GiB. So its memory did not grow from "
        "N = 1,000,000 to 10,000,000."
    )
    # The thresholds fixed at 10^5 and 10^6, as it comes at 10^7: the flat step crosses a change
    # of malloc's settings, and the sentence says so.
    env = "MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=4294967296"
    mixed = df.copy()
    mixed.loc[mixed["paths"].isin([10**5, 10**6]), "malloc_env"] = env
    assert blocked.malloc_settings(mixed)[10**5] == "with its thresholds fixed"
    assert blocked.malloc_settings(mixed)[10**7] == "as it comes"
    said = blocked.memory_sentence(mixed)
    assert ("The blocked strategies ran glibc's malloc with its thresholds fixed at N = 100,000 "
            "and 1,000,000 and as it comes at N = 10,000,000. So its memory did not grow from "
            "N = 1,000,000 to 10,000,000. The settings of glibc's malloc also changed there, so "
            "these rows do not show that blocking alone keeps it flat.") in said  # fmt: skip
    # Changed where it grew, not where it was flat: no caveat on the flat step.
    mixed.loc[mixed["paths"] == 10**6, "malloc_env"] = pd.NA
    assert "blocking alone" not in blocked.memory_sentence(mixed)
    flat = _blocked_memory(small, {10**5: 300 + result[10**5], 10**6: 300 + result[10**6]})
    assert blocked.memory_sentence(flat).endswith(
        "So its memory did not grow from N = 100,000 to 1,000,000."
    )
    # Falling: said as such.
    fell = _blocked_memory(small, {10**5: 300 + result[10**5], 10**6: 250 + result[10**6]})
    assert "fell by 50.0 MiB" in blocked.memory_sentence(fell)
    growing = _blocked_memory(small, {10**6: 300.0, 10**7: 900.0})
    assert blocked.memory_sentence(growing).endswith(
        "So it still grew with N at the largest sizes measured, from N = 1,000,000 to 10,000,000."
    )


def test_the_path_array_and_the_block_at_ten_to_the_eight_paths():
    assert blocked.path_array_bytes() == 53 * 10**8 * 4  # 19.7 GiB
    b = blocked.default_block()
    assert b == 65_536 and b % memory_model.BLOCK_ROUND == 0
    assert memory_model.BLOCK_ARRAYS * 53 * b * 4 <= 256 * MIB  # within the default budget


def _blocked_rows(df):
    """JAX's jvp rows of the small results fixture relabelled as blocked-jvp at N x 1,000."""
    rows = df[(df["framework"] == "jax") & (df["strategy"] == "jvp")].copy()
    rows["strategy"] = "blocked-jvp"
    rows["paths"] = rows["paths"] * 1000
    return rows


def test_the_chapter_says_not_measured_where_no_blocked_row_is(small):
    said = blocked.summary(small, "jax", "blocked-jvp")
    assert said["twin"] == "jvp" and said["twin_n"] == "1,000"
    assert said["n"] == said["peak"] == said["ratio"] == NOT_MEASURED
    assert len(blocked.table(small)) == 6
    assert blocked.furthest(small, "jax") is None
    assert blocked.phrase(small, "jax") == NOT_MEASURED


def test_the_chapter_reads_the_blocked_strategy_at_its_largest_n(small):
    rows = _blocked_rows(small)
    df = pd.concat([small, rows], ignore_index=True)
    said = blocked.summary(df, "jax", "blocked-jvp")
    # The jvp row at 1,000 became blocked-jvp at 1,000,000: its peak there, and at 10^6.
    peak = rows["peak"].iloc[0]
    assert said["n"] == "1,000,000"
    assert said["peak"] == said["peak_1e6"] == f"{peak / MIB:.1f} MiB"
    assert blocked.furthest(df, "jax") == "blocked-jvp"
    assert blocked.phrase(df, "jax").startswith("blocked-jvp to N = 1,000,000: ")
    # Of two blocked strategies at the same N, the lower ratio; then the one that went further.
    other = rows.copy()
    other["strategy"] = "blocked-pathwise"
    other["ratio_median"] = rows["ratio_median"] / 2
    both = pd.concat([df, other], ignore_index=True)
    assert blocked.furthest(both, "jax") == "blocked-pathwise"
    both.loc[both["strategy"] == "blocked-pathwise", "status"] = "timeout"
    assert blocked.furthest(both, "jax") == "blocked-jvp"


def test_the_costs_table_reads_each_strategy_against_one_baseline_too(small):
    costs = chapter.costs(small)
    row = costs[(costs["framework"] == "torch") & (costs["strategy"] == "compiled-pathwise")]
    # PyTorch's compiled pathwise gradient at N = 1,000: 0.338 ms over the eager simulation's
    # 0.175 ms (faster than the inductor simulation's 0.250 ms, its own yardstick).
    (ratio,) = row["ratio_to_fastest_simulation"]
    assert ratio == pytest.approx(0.000338 / 0.000175, rel=0.01)
    assert chapter.times_cell(ratio) == "1.9×"
    assert chapter.times_cell(2310.4) == "2310×" and chapter.times_cell(None) == "–"


def test_the_chapter_says_where_ratios_come_from_several_processes(small):
    # The fixture's ratios all come from one worker each.
    assert method.processes_phrase(small) == "in that process only"
    df = small.copy()
    _set(df, "torch", "jvp", 100_000, ratio_processes=3)
    _set(df, "torch", "jvp", 10_000, ratio_processes=2)
    assert method.processes_phrase(df) == "at N = 10,000 and 100,000 in up to three such processes"


def test_the_method_says_how_the_pairs_were_timed(small):
    # The fixture predates the method column: every ratio row was measured with the first.
    older = (
        "each side is timed right after the other's call, and a row's warm time comes from its "
        "first process only"
    )
    assert method.settling_phrase(small) == older
    df = small.copy()
    ratios = df.dropna(subset=["ratio_median"]).index
    df.loc[ratios, "method"] = store.METHOD
    said = method.settling_phrase(df)
    assert said.startswith("a side whose call takes under 1 s is called once, untimed")
    assert said.endswith(
        "pools the warm calls of all its processes; the dataset keeps each process's median "
        "(warm_by_process) and the page faults of a call (warm_faults)"
    )
    # Half way through measuring again: both methods, with how many ratios each holds.
    df.loc[ratios[:2], "method"] = pd.NA
    mixed = method.settling_phrase(df)
    assert mixed.startswith(said + f". That is how {len(ratios) - 2} of the {len(ratios)} ")
    assert mixed.endswith(f"the other 2, of the dataset's older method, were not: there {older}")


def test_the_method_says_how_far_the_processes_of_one_simulation_differ(small):
    # The fixture times each simulation in one process: there is no spread to state.
    said = method.process_spread_sentence(small)
    assert said == "Each simulation's warm calls come from one process."
    df = small.copy()
    sim = df[(df["target"] == "simulation") & (df["framework"] == "torch")]
    eager = sim[sim["strategy"].str.endswith(":eager") & (sim["paths"] == 1000)].index
    df.loc[eager, "warm_by_process"] = "0.0154;0.0497;0.0160"
    assert method.process_medians("0.0154;0.0497") == [0.0154, 0.0497]
    assert method.process_spread_sentence(df) == (
        "The processes of one simulation differ by up to 3.2×: PyTorch's eager simulation at "
        "N = 1,000 took a median of 15.4 ms in one and 49.7 ms in another."
    )


def test_the_method_says_how_glibc_ran_where_processes_are_compared(small):
    # The fixture times every case in one process: glibc as it comes, nothing to compare.
    assert method.heap_sentence(small) == "Every worker ran glibc's malloc as it comes."
    df = small.copy()
    several = df.index[(df["paths"] == 1000) & (df["framework"] == "torch")
                       & (df["status"] == "ok") & (df["allocator"] == "glibc")
                       & (df["dtype"] == "float32") & (df["problem"] == "gbm")]  # fmt: skip
    df.loc[several, "ratio_processes"] = 3
    # Measured before method 3: as it comes, and what that does.
    assert method.heap_sentence(df).startswith("Every worker ran glibc's malloc as it comes, ")
    sims = [i for i in several if df.loc[i, "target"] == "simulation"]
    assert sims
    df.loc[several, "malloc_env"] = store.malloc_text(True)
    df.loc[several, "warm_faults"] = 0.0
    df.loc[sims[0], "warm_faults"] = 1500.0
    said = method.heap_sentence(df)
    assert "thresholds fixed (MALLOC_MMAP_THRESHOLD_ at 32.0 MiB" in said
    assert "MALLOC_TRIM_THRESHOLD_ at 4.0 GiB)" in said
    # Bimodal, none or thousands: the range, not a median. At 1,000 a path array is far below
    # the threshold: no mapping of its own, so the faults' source is not said to be known.
    assert (
        "took 0 to 1,500 page faults at N = 1,000. At N = 1,000 a path array (207.0 KiB) " in said
    )
    assert "is below the 32.0 MiB threshold; where the faults there come from is not " in said
    assert "A block that large" not in said
    # No faults below the threshold: nothing to explain.
    df.loc[sims[0], "warm_faults"] = 0.0
    assert "not established" not in method.heap_sentence(df)
    df.loc[sims[0], "warm_faults"] = 1500.0
    # A second size, where a path array (202.2 MiB) is above it: each its own range, and why.
    big = sims[1]
    df.loc[big, ["paths", "warm_faults"]] = 1_000_000, 125_001.0
    two = method.heap_sentence(df)
    assert "took 1,500 page faults at N = 1,000 and 125,001 at N = 1,000,000. " in two, two
    assert ("At N = 1,000,000 a path array (202.2 MiB) is above the 32.0 MiB threshold. A block "
            "that large is a mapping of its own whatever the threshold") in two  # fmt: skip
    assert "At N = 1,000 a path array (207.0 KiB) is below" in two
    assert "That is how" not in said
    assert said.endswith("The allocator variants and the cases timed in one process run it as "
                         "it comes.")  # fmt: skip
    # Half way through measuring again: how many of each.
    df.loc[several[:1], "malloc_env"] = pd.NA
    mixed = method.heap_sentence(df)
    assert f"That is how {len(several) - 1} of the {len(several)} cases timed in several " in mixed
    assert "the other 1, of an older method, ran glibc as it comes" in mixed


def test_the_cost_tables_lay_out_each_strategy_on_both_baselines(small):
    own, common = chapter.costs_tables(small)
    rows = chapter.costs(small)
    assert len(own) == len(common) == len(rows)
    assert (
        list(own.columns[:3])
        == list(common.columns[:3])
        == ["framework", "strategy", "largest N run"]
    )
    # PyTorch's compiled-pathwise at N = 1,000: 1.9× the eager simulation (see above).
    at = (common["framework"] == "PyTorch") & (common["strategy"] == "compiled-pathwise")
    assert common.loc[at, "time / fastest simulation"].tolist() == ["1.9×"]
    assert own.loc[at, "largest N run"].tolist() == ["1,000"]
    assert own.loc[at, "time / simulation [spread]"].tolist() == [
        chapter.ratio_cell(
            rows[(rows["framework"] == "torch") & (rows["strategy"] == "compiled-pathwise")].iloc[0]
        )
    ]


def test_what_mapping_costs_is_said_from_the_rows_measured_again_without_mappings(small):
    assert method.mapping_sentence(small) == (
        "No case was measured again with no block mapped (glibc-heap) in this build."
    )
    df = small.copy()
    sim, path = (at(df, "torch", s, paths=1000) for s in ("simulation:eager", "pathwise"))
    # Under glibc: the simulation 4 ms, mapped (1,500 faults a call); pathwise 6 ms, 3.0× side
    # by side (its pairs' simulation took no fault), 1.5× by the warm medians.
    edit(df, sim, warm_median_s=0.004, warm_faults=1500.0, peak_over_inputs=100 * 2**20)
    edit(df, path, warm_median_s=0.006, warm_faults=0.0, ratio_median=3.0,
         pair_baseline_faults=0.0, peak_over_inputs=200 * 2**20)  # fmt: skip
    # With no block mapped: the simulation 2 ms, pathwise 6 ms, 3.1× side by side, 3.0× warm.
    df = copy(df, sim, allocator="glibc-heap", key="heap-sim", warm_median_s=0.002,
              warm_faults=0.0, peak_over_inputs=150 * 2**20)  # fmt: skip
    df = copy(df, path, allocator="glibc-heap", key="heap-path", warm_median_s=0.006,
              warm_faults=0.0, ratio_median=3.1, peak_over_inputs=500 * 2**20)  # fmt: skip
    heap_path = df.index[-1]
    said = method.mapping_sentence(df)
    assert said.startswith("What those mappings cost was measured again with no block a mapping "
                           "of its own (MALLOC_MMAP_MAX_=0 besides the fixed thresholds: "
                           "allocator glibc-heap). At N = 1,000, PyTorch's eager simulation took "
                           "2.0 ms instead of 4.0 ms (0 page faults a call instead of 1,500) and "
                           "pathwise took 6.0 ms instead of 6.0 ms;")  # fmt: skip
    assert "; side by side, pathwise 3.10× against 3.00× its simulation;" in said
    assert ("held up to 2.5× the memory beyond the inputs (pathwise: 500.0 MiB against 200.0 "
            "MiB)") in said  # fmt: skip
    # 3.0× side by side against 1.5× from the warm medians under glibc; 3.1× and 3.0× without.
    assert ("PyTorch's pathwise at N = 1,000 is 3.00× its simulation side by side but 1.50× by the "
            "warm medians under glibc as the dataset runs it, and 3.10× side by side and 3.00× by "
            "the warm medians with no block mapped") in said  # fmt: skip
    assert ("(1,500 page faults a call against 0 as the pairs' baseline), so the ratio to read is "
            "the one side by side, the nearer to both without mappings.") in said  # fmt: skip
    assert said.endswith("they are part of what a program under glibc pays.")
    # Where the two measures disagree without mappings too, the cause is not the mappings.
    edit(df, heap_path, ratio_median=6.0)
    assert "as the pairs' baseline" not in method.mapping_sentence(df)
    # Where the warm medians' ratio is the nearer to what both give without mappings, the side
    # by side one is not the one to read.
    edit(df, heap_path, ratio_median=3.1)
    edit(df, path, ratio_median=9.0)  # 2.95x off the settled 3.05x; the warm 1.5x, 2.03x
    assert "so the ratio to read" not in method.mapping_sentence(df)
    # Where they agree under glibc, there is nothing to settle.
    edit(df, path, ratio_median=1.6)
    assert "so the ratio to read" not in method.mapping_sentence(df)


def test_the_captions_say_how_glibc_ran_n_by_n(small):
    # The captions name the glibc allocator just before: malloc, not glibc's malloc again.
    assert method.malloc_phrase(small) == "malloc as it comes"
    env = "MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=4294967296"
    df = small.copy()
    df.loc[df["paths"] == 100_000, "malloc_env"] = env
    assert method.malloc_phrase(df) == (
        "malloc as it comes at N = 1,000 and 10,000, with its thresholds fixed "
        "(MALLOC_MMAP_THRESHOLD_ = 32.0 MiB, MALLOC_TRIM_THRESHOLD_ = 4.0 GiB) at N = 100,000"
    )
    df["malloc_env"] = env
    assert method.malloc_phrase(df).startswith("malloc with its thresholds fixed (")


def test_the_largest_error_at_any_n(small):
    worst = chapter.largest_error_anywhere(small)  # finite differences at 1,000: 2.4e-05
    assert (worst["strategy"], worst["paths"]) == ("finite-difference", 1000)
    df = edit(small.copy(), at(small, "jax", "pathwise", 10_000), max_rel_error=1e-4)
    worst = chapter.largest_error_anywhere(df)
    assert chapter.named(worst) == "JAX's pathwise" and worst["paths"] == 10_000
    assert chapter.largest_error_anywhere(small.assign(max_rel_error=np.nan)) is None


def test_how_the_blocked_strategy_named_for_each_framework_was_chosen(small):
    assert blocked.furthest_lead(small).startswith("The blocked strategy that went furthest")
    df = small
    pairs = [(f, b) for f in ("torch", "tensorflow", "jax") for b, _ in registry.blocked_pairs(f)]
    for fw, name in pairs:
        df = copy(df, at(small, "torch", "pathwise", 10_000), framework=fw, strategy=name,
                  paths=10**7)  # fmt: skip
    assert blocked.furthest_lead(df) == (
        "Every blocked strategy reached N = 10,000,000; in each framework, the one with the "
        "lower time over its blocked simulation"
    )
    one_short = edit(df.copy(), df.index[-1], paths=10**6)
    assert blocked.furthest_lead(one_short).startswith("The blocked strategy that went furthest")
