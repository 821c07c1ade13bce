"""Chapter 3 (vectorized Jacobians): the reverse-mode strategies it shows, what vectorized
reverse mode holds, each loop against the strategy that vectorizes it, and every reverse-mode
strategy against its memory model at one size, on the committed fixture and edited copies."""

import math

import numpy as np
import pandas as pd
import pytest

from jacbench.problems.gbm import GBMParams
from jacbench.report import formats
from jacbench.report.legacy import vectorized
from jacbench.strategies import registry
from tests.legacy.rows import at, copy

# The hand lists the registry rule replaces (the chapter before issue 23), with the terminal-only
# forms of vectorized reverse mode since.
REVERSE = {
    "torch": ["question", "functional-loop", "grad-loop", "functional-vectorized",
              "batched-backward", "jacrev", "jacrev-terminal", "jacrev-chunked", "pathwise"],
    "tensorflow": ["question", "tape-jacobian-loop", "tape-jacobian-pfor",
                   "tape-jacobian-terminal", "tape-jacobian-pfor-chunked", "pathwise"],
    "jax": ["vjp-loop", "jacrev", "jacrev-terminal", "jacrev-chunked", "pathwise"],
}  # fmt: skip
PAIRS = [
    ("torch", "functional-loop", "functional-vectorized"),
    ("torch", "grad-loop", "jacrev"),
    ("tensorflow", "tape-jacobian-loop", "tape-jacobian-pfor"),
    ("jax", "vjp-loop", "jacrev"),
]
MIB = 2**20


def mask(df, framework, strategy, paths=1000, allocator="glibc"):
    """The fixture's GBM strategy rows of one case, picked with plain pandas."""
    return (
        (df["problem"] == "gbm") & (df["target"] == "strategy") & (df["framework"] == framework)
        & (df["strategy"] == strategy) & (df["paths"] == paths) & (df["allocator"] == allocator)
    ).fillna(False)  # fmt: skip


def value(df, framework, strategy, column, paths=1000):
    (v,) = df.loc[mask(df, framework, strategy, paths), column]
    return float(v)


def copy_of(df, framework, strategy, **changes):
    """The table with one more row: a copy of a row at N = 1,000 with some columns changed."""
    return pd.concat([df, df[mask(df, framework, strategy)].assign(**changes)],
                     ignore_index=True)  # fmt: skip


# --- which strategies ------------------------------------------------------------------


def test_the_reverse_rule_gives_the_hand_lists_in_their_order():
    assert vectorized.reverse_by_framework() == REVERSE
    assert list(vectorized.reverse_by_framework()) == ["torch", "tensorflow", "jax"]
    assert vectorized.reverse_strategies("numpy") == []


@pytest.mark.parametrize("fw", ["torch", "tensorflow", "jax"])
def test_the_reverse_lists_hold_every_unvaried_reverse_strategy_once(fw):
    names = vectorized.reverse_strategies(fw)
    assert len(set(names)) == len(names)
    for s in registry.by_framework(fw, "gbm"):
        assert (s.name in names) == (s.mode == "reverse" and not s.variant_of)
    records = [registry.get(fw, n) for n in names]
    if any(s.faithful for s in records):
        assert records[0].faithful
    rest = [registry.BATCHINGS.index(s.batching) for s in records if not s.faithful]
    assert rest == sorted(rest) and records[-1].batching == "single-pass"


def test_each_loop_is_paired_with_what_vectorizes_it_in_the_registry_order():
    assert vectorized.loop_and_vectorized() == PAIRS


# --- what vectorized reverse mode holds ------------------------------------------------


def test_reverse_memory_at_the_question_size():
    held = vectorized.reverse_memory(GBMParams(paths=10_000),
                                     registry.get("tensorflow", "tape-jacobian-pfor"))  # fmt: skip
    path_array = 53 * 10_000 * 4  # M + 1 = 53 steps, float32
    assert held["path_array"] == path_array
    assert held["batch"] == 10_000 * path_array
    assert held["chunk_size"] == 256 and held["chunk_batch"] == 256 * path_array
    assert held["batch_coefficient"] == 3.2
    # TensorFlow's import (645 MiB), three copies of the normals, 70 MiB, the model's default
    # three path arrays and 3.2 batches of N of them.
    predicted = (645 * MIB + 3 * 52 * 10_000 * 4 + 70 * MIB + 3 * path_array
                 + 3.2 * 10_000 * path_array)  # fmt: skip
    assert held["predicted_peak"] == pytest.approx(predicted, abs=1)
    assert formats.size(held["predicted_peak"]) == "63.9 GiB"


def test_reverse_memory_chunk_is_at_most_n():
    held = vectorized.reverse_memory(GBMParams(paths=100, dtype="float64"),
                                     registry.get("jax", "jacrev"))  # fmt: skip
    assert held["chunk_size"] == 100
    assert held["chunk_batch"] == held["batch"] == 100 * 53 * 100 * 8


def test_memory_slope_over_the_sizes_that_ran(small):
    # The fixture has pfor at one size only: no slope.
    assert vectorized.memory_slope(small, "tensorflow", "tape-jacobian-pfor") is None
    peak = value(small, "tensorflow", "tape-jacobian-pfor", "peak_over_inputs")
    edited = copy_of(small, "tensorflow", "tape-jacobian-pfor", paths=2000,
                     peak_over_inputs=4 * peak)  # fmt: skip
    assert vectorized.memory_slope(edited, "tensorflow", "tape-jacobian-pfor") == pytest.approx(2)
    # A failed row at a larger N (its peak at the cap) does not bend the slope.
    failed = copy_of(edited, "tensorflow", "tape-jacobian-pfor", paths=4000, status="memory-cap",
                     peak_over_inputs=5 * peak)  # fmt: skip
    assert vectorized.memory_slope(failed, "tensorflow", "tape-jacobian-pfor") == pytest.approx(2)
    assert vectorized.slope_sizes(failed, "tensorflow", "tape-jacobian-pfor") == "1,000 to 2,000"
    # A size below 1,000, where the fixed buffers dominate (as large a peak as at 1,000: the
    # slope through it would read 1), is left out of the fit.
    small_n = copy_of(edited, "tensorflow", "tape-jacobian-pfor", paths=100, peak_over_inputs=peak)
    assert vectorized.memory_slope(small_n, "tensorflow", "tape-jacobian-pfor") == pytest.approx(2)
    assert vectorized.memory_slope(small_n, "tensorflow", "tape-jacobian-pfor",
                                   from_paths=100) < 1.5  # fmt: skip
    assert vectorized.slope_sizes(small, "tensorflow", "tape-jacobian-pfor") == "–"


# --- loop against vectorized -----------------------------------------------------------


def test_loop_against_vectorized_pairs_the_rows_of_one_size(small):
    cmp = vectorized.loop_against_vectorized(small, PAIRS)
    # The fixture has no TensorFlow loop nor PyTorch functional pair: only pairs measured at
    # the same N appear.
    assert list(zip(cmp["framework"], cmp["loop"], cmp["paths"], strict=True)) == [
        ("torch", "grad-loop", 1000), ("jax", "vjp-loop", 1000)]  # fmt: skip
    for r in cmp.itertuples():
        loop_s = value(small, r.framework, r.loop, "warm_median_s")
        vec_s = value(small, r.framework, r.vectorized, "warm_median_s")
        assert math.isclose(r.time_ratio, vec_s / loop_s)
        loop_m = value(small, r.framework, r.loop, "peak_over_inputs")
        vec_m = value(small, r.framework, r.vectorized, "peak_over_inputs")
        assert math.isclose(r.memory_ratio, vec_m / loop_m)
    assert vectorized.loop_against_vectorized(small, []).empty


def test_on_the_fixture_the_loops_are_the_faster_and_the_leaner(small):
    cmp = vectorized.loop_against_vectorized(small, PAIRS)
    faster = vectorized.faster_at(cmp, PAIRS, 1000)
    assert faster == {
        ("torch", "functional-loop"): formats.NOT_MEASURED,
        ("torch", "grad-loop"): "grad-loop, 3.4× faster than jacrev (252.8 ms against 856.2 ms)",
        ("tensorflow", "tape-jacobian-loop"): formats.NOT_MEASURED,
        ("jax", "vjp-loop"): "vjp-loop, 10.6× faster than jacrev (68.0 ms against 721.6 ms)",
    }
    assert vectorized.vectorized_counts(cmp) == {"compared": 2, "faster": 0, "more_memory": 2}


def test_a_faster_vectorized_strategy_is_named_first(small):
    small.loc[mask(small, "jax", "jacrev"), "warm_median_s"] = 0.034
    cmp = vectorized.loop_against_vectorized(small, PAIRS)
    assert vectorized.faster_at(cmp, PAIRS, 1000)["jax", "vjp-loop"] == (
        "jacrev, 2.0× faster than vjp-loop (34.0 ms against 68.0 ms)")  # fmt: skip
    assert vectorized.vectorized_counts(cmp)["faster"] == 1


def test_a_tie_counts_as_no_win_for_the_vectorized_strategy(small):
    loop_s = value(small, "jax", "vjp-loop", "warm_median_s")
    small.loc[mask(small, "jax", "jacrev"), ["warm_median_s", "peak_over_inputs"]] = [
        loop_s, value(small, "jax", "vjp-loop", "peak_over_inputs")]  # fmt: skip
    cmp = vectorized.loop_against_vectorized(small, PAIRS)
    jax = cmp[cmp["framework"] == "jax"]
    assert list(jax["time_ratio"]) == [1.0] and list(jax["memory_ratio"]) == [1.0]
    assert vectorized.vectorized_counts(cmp) == {"compared": 2, "faster": 0, "more_memory": 1}
    # Equal times: the loop, named first in the pair, is named first.
    assert vectorized.faster_at(cmp, PAIRS, 1000)["jax", "vjp-loop"].startswith(
        "vjp-loop, 1.0× faster than jacrev")  # fmt: skip


def test_a_size_where_only_the_loop_ran_is_not_compared(small):
    edited = copy_of(small, "torch", "grad-loop", paths=3000, warm_median_s=1.2)
    cmp = vectorized.loop_against_vectorized(edited, PAIRS)
    assert 3000 not in set(cmp["paths"])
    assert set(vectorized.faster_at(cmp, PAIRS, 3000).values()) == {formats.NOT_MEASURED}


@pytest.mark.parametrize("status", ["memory-cap", "timeout", "skipped-predicted"])
def test_a_failed_vectorized_row_leaves_its_pair_out(small, status):
    small.loc[mask(small, "torch", "jacrev"), "status"] = status
    cmp = vectorized.loop_against_vectorized(small, PAIRS)
    assert list(cmp["framework"]) == ["jax"]
    faster = vectorized.faster_at(cmp, PAIRS, 1000)
    assert faster["torch", "grad-loop"] == formats.NOT_MEASURED
    assert faster["jax", "vjp-loop"].startswith("vjp-loop")
    assert vectorized.vectorized_counts(cmp)["compared"] == 1


def test_which_is_faster_names_the_faster_first_whatever_the_order():
    one = vectorized.which_is_faster("loop", 0.25, "vmap", 1.0)
    assert one == vectorized.which_is_faster("vmap", 1.0, "loop", 0.25)
    assert one == "loop, 4.0× faster than vmap (250.0 ms against 1.00 s)"
    assert vectorized.which_is_faster("loop", None, "vmap", 1.0) == formats.NOT_MEASURED
    assert vectorized.which_is_faster("loop", float("nan"), "vmap", 1.0) == formats.NOT_MEASURED


# --- every reverse-mode strategy at one size ---------------------------------------------


def test_reverse_at_one_size_on_the_fixture(small):
    at = vectorized.reverse_at(small, REVERSE, 1000)
    assert list(zip(at["framework"], at["strategy"], strict=True)) == [
        (fw, name) for fw, names in REVERSE.items() for name in names]  # fmt: skip
    rows = at.set_index(["framework", "strategy"])
    jacrev = rows.loc["jax", "jacrev"]
    assert jacrev["outcome"] == "721.6 ms" and jacrev["batching"] == "vectorized"
    assert jacrev["peak"] == value(small, "jax", "jacrev", "peak_over_inputs")
    assert math.isnan(jacrev["mmap_peak"]) and jacrev["fitted_under"] == "glibc"
    # jax.jacrev's model: 100 MiB, three path arrays and 3.3 batches of N of them.
    path_array = 53 * 1000 * 4
    assert jacrev["model"] == int(100 * MIB + 3 * path_array + 3.3 * 1000 * path_array)
    # Not measured: the problem's default M and chunk size; PyTorch's loops fitted under mmap.
    loop = rows.loc["torch", "functional-loop"]
    assert loop["outcome"] == formats.NOT_MEASURED and math.isnan(loop["peak"])
    assert loop["model"] == int(8 * MIB + 11 * path_array)
    assert loop["fitted_under"] == "glibc-mmap"


@pytest.mark.parametrize(("status", "outcome"), [
    ("memory-cap", "memory cap (4.0 GiB)"),
    ("timeout", "timeout (600 s)"),
])  # fmt: skip
def test_reverse_at_a_failed_row_says_what_stopped_it(small, status, outcome):
    small.loc[mask(small, "torch", "jacrev"), ["status", "mem_cap", "timeout"]] = [
        status, 4 * 2**30, 600.0]  # fmt: skip
    at = vectorized.reverse_at(small, REVERSE, 1000).set_index(["framework", "strategy"])
    r = at.loc["torch", "jacrev"]
    assert r["outcome"] == outcome and math.isnan(r["peak"])


def test_reverse_at_a_skipped_case(small):
    at = vectorized.reverse_at(small, {"tensorflow": ["question"]}, 10_000)
    (r,) = at.itertuples()
    # Its model predicted 68,602,331,840 bytes: 63.9 GiB.
    assert r.outcome == "skipped (needs 63.9 GiB)" and np.isnan(r.peak)


def test_reverse_at_shows_glibc_mmap_only_beside_an_ok_glibc_row(small):
    peak = value(small, "torch", "grad-loop", "peak_over_inputs")
    edited = copy_of(small, "torch", "grad-loop", allocator="glibc-mmap", peak_over_inputs=12e6)
    r = vectorized.reverse_at(edited, {"torch": ["grad-loop"]}, 1000).iloc[0]
    assert (r["peak"], r["mmap_peak"]) == (peak, 12e6)
    edited.loc[mask(edited, "torch", "grad-loop"), "status"] = "timeout"
    r = vectorized.reverse_at(edited, {"torch": ["grad-loop"]}, 1000).iloc[0]
    assert math.isnan(r["peak"]) and math.isnan(r["mmap_peak"])


def test_only_pytorch_loops_have_a_model_fitted_under_glibc_mmap():
    mmap = [s for s in registry.STRATEGIES if s.memory_fitted_under == "glibc-mmap"]
    assert {s.name for s in mmap} == {"question", "functional-loop", "grad-loop"}
    for s in mmap:
        assert s.framework == "torch" and s.mode == "reverse" and s.batching == "loop"
    assert registry.get("tensorflow", "tape-jacobian-loop").memory_fitted_under == "glibc"


# --- the terminal-only forms ------------------------------------------------------------------


def test_each_terminal_form_is_paired_with_the_path_form_it_runs_without_the_path():
    assert vectorized.terminal_pairs() == [
        ("torch", "jacrev-terminal", "jacrev"),
        ("tensorflow", "tape-jacobian-terminal", "tape-jacobian-pfor"),
        ("jax", "jacrev-terminal", "jacrev"),
    ]


def _terminal_rows(df, rows):
    """The fixture with rows copied from its torch jacrev row at N = 1,000: (framework, strategy,
    N, status, peak MiB, warm s)."""
    base = df[mask(df, "torch", "jacrev")].iloc[0]
    made = []
    for fw, name, n, status, peak, warm in rows:
        r = base.copy()
        r[["framework", "strategy", "paths", "status", "peak_over_inputs", "warm_median_s"]] = (
            fw, name, n, status, None if peak is None else peak * MIB, warm)  # fmt: skip
        made.append(r)
    drop = (df["problem"] == "gbm") & df["strategy"].isin(["jacrev", "tape-jacobian-pfor"])
    return pd.concat([df[~drop.fillna(False)], pd.DataFrame(made)], ignore_index=True)


def test_the_terminal_forms_against_the_path_forms(small):
    df = _terminal_rows(small, [
        ("torch", "jacrev", 3000, "ok", 5300, 2.0),
        ("torch", "jacrev-terminal", 3000, "ok", 100, 0.1),
        ("tensorflow", "tape-jacobian-pfor", 3000, "ok", 6400, 3.0),
        ("tensorflow", "tape-jacobian-terminal", 3000, "ok", 80, 0.2),
        ("torch", "jacrev", 10000, "skipped-predicted", None, None),
        ("torch", "jacrev-terminal", 10000, "ok", 1200, 1.5),
        ("tensorflow", "tape-jacobian-pfor", 10000, "skipped-predicted", None, None),
        ("tensorflow", "tape-jacobian-terminal", 10000, "memory-cap", None, None),
    ])  # fmt: skip
    cmp = vectorized.terminal_against_path(df, vectorized.terminal_pairs())
    assert len(cmp) == 4 and set(cmp["framework"]) == {"torch", "tensorflow"}  # no JAX rows
    at = cmp.set_index(["framework", "paths"])
    assert at.loc[("torch", 3000), "path_peak"] / at.loc[("torch", 3000), "terminal_peak"] == 53
    assert at.loc[("tensorflow", 10000), "terminal_outcome"].startswith("memory cap")
    said = vectorized.terminal_sentence(cmp)
    # 5300 / 100 = 53x and 6400 / 80 = 80x at 3,000; at 10,000 one of two terminal forms ran.
    assert said.startswith("At N = 3,000, where both ran, the path forms held 53× to 80× the ")
    assert "(5.2 GiB to 6.2 GiB against 80.0 MiB to 100.0 MiB beyond the inputs)" in said
    assert "at N = 10,000, 1 of 2 terminal-only forms ran, holding 1.2 GiB in 1.50 s a call" in said
    assert "; the path forms: skipped (needs " in said and said.endswith(").")


def test_the_terminal_sentence_where_the_forms_never_both_ran(small):
    df = _terminal_rows(small, [
        ("jax", "jacrev", 10000, "memory-cap", None, None),
        ("jax", "jacrev-terminal", 10000, "ok", 800, 0.5),
    ])  # fmt: skip
    said = vectorized.terminal_sentence(
        vectorized.terminal_against_path(df, vectorized.terminal_pairs())
    )
    assert said.startswith("At N = 10,000, 1 of 1 terminal-only forms ran, holding 800.0 MiB")
    assert "; the path forms: memory cap (" in said
    empty = vectorized.terminal_against_path(small, vectorized.terminal_pairs())
    assert empty.empty
    assert vectorized.terminal_sentence(empty) == (
        "The terminal-only forms were not measured in this build."
    )
    failed = _terminal_rows(small, [("jax", "jacrev-terminal", 1000, "error", None, None)])
    said = vectorized.terminal_sentence(
        vectorized.terminal_against_path(failed, vectorized.terminal_pairs())
    )
    assert said == "No terminal-only form ran correctly in this build."


def test_chunked_at_gives_their_memory_and_time_where_they_ran(small):
    assert vectorized.chunked_at(small, 1000).startswith("No chunked strategy ran correctly")
    i = at(small, "torch", "jacrev", paths=1000)
    two = copy(small, i, strategy="jacrev-chunked", peak_over_inputs=2 * 2**30, warm_median_s=8.5)
    j = at(two, "jax", "jacrev", paths=1000)
    two = copy(two, j, strategy="jacrev-chunked", peak_over_inputs=2**30, warm_median_s=30.0)
    said = vectorized.chunked_at(two, 1000)
    assert said.startswith("Measured at N = 1,000, the chunked strategies (JAX and PyTorch) held")
    assert "1.0 GiB to 2.0 GiB beyond the inputs and took 8.50 s to 30.00 s" in said
    assert said.endswith("bounds the memory, not the N sweeps of the arithmetic. TensorFlow's "
                         "was not run there.")  # fmt: skip
    with_batch = vectorized.chunked_at(two, 1000, 512 * 2**20)
    assert "beyond the inputs (the chunk's cotangents alone are 512.0 MiB) and took" in with_batch
    # A chunked row that failed is no measurement.
    failed = copy(small, i, strategy="jacrev-chunked", status="memory-cap")
    assert vectorized.chunked_at(failed, 1000).startswith("No chunked strategy")
