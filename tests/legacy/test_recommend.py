"""What to use (chapter 6): the one-argument fix, finite differences against AD, the candidates
and picks per framework and shape, the budget picks, the defaults and the answer code's costs,
on the committed fixture and on rows edited from it (a tie, a missing size, failed rows, a
faster non-candidate, a pick that follows changed rows)."""

import pandas as pd
import pytest

from jacbench.report import formats
from jacbench.report.legacy import picks as pk
from jacbench.report.legacy import recommend as rec
from tests.legacy.rows import at, copy, edit

NM = formats.NOT_MEASURED


# --- The one-argument fix ---------------------------------------------------------------------


def test_without_the_fix_measured_the_question_program_still_reads_its_fate(small):
    # The fixture has no functional-forward row; the question's program hit the 4 GiB cap at
    # N = 10,000 after 13.35 s.
    assert rec.fix_compare(small) == f"beside the question's call at the same N, it was {NM}."
    assert rec.fix_times(small) == (None, None, None)
    assert rec.fix_beyond(small) == (
        "At N = 10,000 the question's program stopped at the memory cap (4.0 GiB) after "
        f"13.35 s; the one-argument fix was {NM} at that N."
    )


def fixed(small):
    """The fixture with functional-forward measured: the jvp rows at N = 1,000 and 10,000."""
    df = copy(small, at(small, "torch", "jvp", paths=1000), strategy="functional-forward")
    return copy(df, at(small, "torch", "jvp", paths=10_000), strategy="functional-forward")


def test_the_fix_against_the_question_at_the_largest_n_both_ran(small):
    df = fixed(small)
    # At N = 1,000: the fix 4.301 ms and 90,001,408 B beyond the inputs (85.8 MiB), the
    # question 351.2 ms and 247,070,720 B (235.6 MiB): 0.351181 / 0.004301 = 81.6, '82×'.
    assert rec.fix_compare(df) == (
        "at N = 1,000 it takes 4.3 ms and 85.8 MiB beyond the inputs (the memory the call adds "
        "to what the process held before it), against 351.2 ms and 235.6 MiB for the question's "
        "call: 82× faster."
    )
    assert rec.fix_times(df) == (
        1000,
        pytest.approx(0.351181, rel=1e-4),
        pytest.approx(0.004301, rel=1e-3),
    )
    # At N = 10,000 the fix (the jvp row there) took 20.1 ms and 133,738,496 B.
    assert rec.fix_beyond(df) == (
        "At N = 10,000 the question's program stopped at the memory cap (4.0 GiB) after "
        "13.35 s; the one-argument fix took 20.1 ms and 127.5 MiB."
    )


def test_when_the_question_finishes_at_the_larger_n_the_comparison_moves_there(small):
    df = fixed(small)
    i = at(df, "torch", "question", paths=10_000)
    edit(df, i, status="ok", warm_median_s=2.0, peak_over_inputs=2**30)
    assert rec.fix_compare(df).startswith("at N = 10,000 it takes 20.1 ms and 127.5 MiB")
    assert rec.fix_compare(df).endswith(
        "against 2.00 s and 1.0 GiB for the question's call: 99× faster."
    )
    assert rec.fix_beyond(df) == "The question's program was tried at no larger N in this build."
    assert rec.fix_times(df)[:2] == (10_000, 2.0)


def test_fate_words_each_outcome(small):
    row = small.loc[at(small, "torch", "question", paths=10_000)].copy()
    assert rec.fate(row) == "stopped at the memory cap (4.0 GiB) after 13.35 s"
    row["status"], row["timeout"] = "timeout", 120.0
    assert rec.fate(row) == "ran past its timeout (120.00 s)"
    row["status"], row["predicted_peak"] = "skipped-predicted", 3 * 2**30
    assert rec.fate(row) == "was not started: the memory model predicted 3.0 GiB"
    row["status"] = "error"
    assert rec.fate(row) == "failed with an error"


# --- Finite differences -----------------------------------------------------------------------


def test_finite_differences_against_the_cheapest_ad_strategy(small):
    # At N = 1,000 the lowest AD ratio is TensorFlow's pathwise-function (1.137); the largest AD
    # error leaves out TensorFlow's question (1.2e-06): 3.8e-07. The Monte-Carlo error is
    # sqrt(expm1(0.2^2 * 1) / 1,000) = 6.4e-03, above finite differences' 2.4e-05.
    assert rec.fd_cost(small) == (
        "cost 3.38× [2.93–3.50] the numpy simulation's time at N = 1,000; on one scale, each "
        "warm time over its framework's fastest simulation given the same normals, 3.2×, "
        "against TensorFlow's pathwise-function (0.9×) for the cheapest "
        "automatic-differentiation strategy there (a path-blocked one, which draws its own "
        "normals, is not on that scale)."
    )
    assert rec.fd_accuracy(small) == (
        "Their largest relative error per path, 2.4e-05, is above float32's rounding in the "
        "automatic-differentiation strategies (3.8e-07 at most) and below the Monte-Carlo "
        "standard error of the simplest Greek at that N, the paths' mean of dS_T/dS0: 6.4e-03 "
        "of its value."
    )


def test_the_cheapest_ad_strategy_follows_the_ratios_and_the_error_its_side(small):
    edit(small, at(small, "tensorflow", "pathwise-function"),
         ratio_to_fastest_simulation=float("nan"))  # fmt: skip
    edit(small, at(small, "numpy", "finite-difference"), max_rel_error=0.01)
    assert "against TensorFlow's forward-accumulator-function (1.5×)" in rec.fd_cost(small)
    assert "1.0e-02, is above" in rec.fd_accuracy(small)
    assert "and above the Monte-Carlo standard error" in rec.fd_accuracy(small)


def test_failed_finite_differences_are_not_measured(small):
    edit(small, at(small, "numpy", "finite-difference"), status="memory-cap")
    assert rec.fd_cost(small) == f"were {NM}."
    assert rec.fd_accuracy(small) == f"Their error was {NM} either."


# --- Candidates and picks ---------------------------------------------------------------------


def test_candidates_are_the_ad_strategies_the_registry_lets_a_recommendation_pick(small):
    df = copy(small, at(small, "jax", "jacfwd", inputs=1000), framework="torch",
              strategy="grad-loop-create-graph", warm_median_s=1e-9)  # fmt: skip
    cands = rec.candidates(df)
    # 20 tall rows (the AD frameworks' GBM strategies but the two question rows at N = 1,000
    # and the two at 10,000), 4 wide (jacfwd and jacrev, failed ones too), 3 Hessian (dense and
    # products; not the diagonal, not the GBM's Greeks).
    assert cands.groupby("shape").size().to_dict() == {rec.TALL: 20, rec.WIDE: 4, rec.HESSIAN: 3}
    assert not {"question", "grad-loop-create-graph"} & set(cands["name"])
    assert set(cands["framework"]) == {"torch", "tensorflow", "jax"}
    assert set(cands.loc[cands["shape"] == rec.HESSIAN, "name"]) == {"hessian", "hvp"}
    assert (
        cands["size"] == cands["paths"].where(cands["shape"] == rec.TALL, cands["inputs"])
    ).all()


def _groups(df, framework, shape, margin=1.0):
    """{regime: [names of the pick group]} of a framework and shape."""
    picks = pk.regime_picks(rec.candidates(df), framework, shape, margin)
    return {regime: [r["name"] for r in group] for regime, _, group in picks}


def test_the_picks_per_regime_on_the_fixture(small):
    # PyTorch: pathwise at the question's N (8.5 ms; jvp's fastest call 15.1 ms), jvp alone at
    # N = 100,000 (no blocked strategy ran, so there is no blocked-only size).
    assert _groups(small, "torch", rec.TALL) == {
        pk.QUESTION_SIZE: ["pathwise"],
        pk.IN_MEMORY: ["jvp"],
    }
    assert [n for _, n, _ in pk.regime_picks(rec.candidates(small), "torch", rec.TALL)] == [
        10_000,
        100_000,
    ]
    # TensorFlow ran no candidate at N = 10,000 (its question's program is none): N = 1,000,
    # where pathwise-function (881 µs) is clear of forward-accumulator-function (1.29 ms at best).
    assert _groups(small, "tensorflow", rec.TALL) == {pk.IN_MEMORY: ["pathwise-function"]}
    # JAX: pathwise alone at N = 10,000, which is also its largest: one regime.
    assert _groups(small, "jax", rec.TALL) == {pk.QUESTION_SIZE: ["pathwise"]}
    assert _groups(small, "jax", rec.WIDE) == {pk.QUESTION_SIZE: ["jacrev"]}  # jacfwd skipped
    assert _groups(small, "jax", rec.HESSIAN) == {pk.LARGEST: ["hvp"]}  # dense skipped
    assert _groups(small, "torch", rec.WIDE) == {}  # its one row was skipped
    assert _groups(small, "tensorflow", rec.HESSIAN) == {}


def test_blocked_forms_only_is_a_regime_of_its_own(small):
    df = copy(small, at(small, "torch", "jvp", paths=100_000), strategy="blocked-jvp",
              paths=10**7, warm_median_s=14.0, warm_min_s=13.5)  # fmt: skip
    picks = pk.regime_picks(rec.candidates(df), "torch", rec.TALL)
    assert [(regime, n) for regime, n, _ in picks] == [
        (pk.QUESTION_SIZE, 10_000),
        (pk.IN_MEMORY, 100_000),
        (pk.BEYOND, 10**7),
    ]
    assert [r["name"] for r in picks[-1][2]] == ["blocked-jvp"]
    # The pick at the question's N is not a blocked-only strategy.
    assert [r["name"] for r in picks[0][2]] == ["pathwise"]


def test_a_tie_names_both(small):
    # JAX's jvp moved to N = 10,000 with pathwise's time there: neither is named alone.
    tie = small.loc[at(small, "jax", "pathwise", paths=10_000), "warm_median_s"]
    df = copy(small, at(small, "jax", "jvp"), paths=10_000, warm_median_s=tie)
    assert _groups(df, "jax", rec.TALL)[pk.QUESTION_SIZE] == ["jvp", "pathwise"]
    ((_, _, group),) = pk.regime_picks(rec.candidates(df), "jax", rec.TALL)
    assert pk.group_phrase(group) == (
        "jvp (9.9 ms) or pathwise (9.9 ms): within 1.00×, their warm calls overlapping"
    )
    # vjp-loop at N = 10,000 with its own calls (68 ms at best 59 ms): pathwise is clear of it.
    df = copy(small, at(small, "jax", "vjp-loop"), paths=10_000)
    assert _groups(df, "jax", rec.TALL)[pk.QUESTION_SIZE] == ["pathwise"]


def test_a_margin_from_the_occasions_widens_the_pick(small):
    # PyTorch's jvp at 2.37x pathwise's median at N = 10,000: clear with no margin, not with a
    # margin of 2.5 (its ratios moved that far between occasions).
    assert _groups(small, "torch", rec.TALL, 2.5)[pk.QUESTION_SIZE] == ["pathwise", "jvp"]
    (_, _, group), _ = pk.regime_picks(rec.candidates(small), "torch", rec.TALL, 2.5)
    assert pk.group_phrase(group, 2.5) == (
        "pathwise (8.5 ms) or jvp (20.1 ms): within 2.37×, less than the 2.50× this "
        "framework's ratios moved between occasions"
    )
    # A margin that rounds to the spread: as many digits as tell them apart.
    spread = group[1]["warm_median_s"] / group[0]["warm_median_s"]
    assert f"within {spread:.3f}×, less than the {spread + 0.003:.3f}× this" in pk.group_phrase(
        group, spread + 0.003
    )


def test_calls_under_a_millisecond_are_not_ranked(small):
    # JAX's pathwise at N = 10,000 failed: at N = 1,000 jvp, pathwise and jacfwd all take under
    # a millisecond, so all three are named; vjp-loop (59 ms at best) and jacrev are not.
    edit(small, at(small, "jax", "pathwise", paths=10_000), status="memory-cap")
    picks = pk.regime_picks(rec.candidates(small), "jax", rec.TALL)
    assert [(regime, n) for regime, n, _ in picks] == [(pk.IN_MEMORY, 1000)]
    assert pk.group_phrase(picks[0][2]) == (
        "jvp (565 µs), pathwise (822 µs) or jacfwd (877 µs): all under a millisecond, where "
        "per-call overhead decides"
    )


def test_clearly_faster_needs_the_median_the_fastest_call_and_the_margin():
    a = pd.Series(
        {"warm_median_s": 1.0, "warm_min_s": 0.9, "warm_max_s": 1.5, "overhead_bound": False}
    )
    b = pd.Series(
        {"warm_median_s": 2.0, "warm_min_s": 1.2, "warm_max_s": 2.5, "overhead_bound": False}
    )
    assert pk.clearly_faster(a, b) and not pk.clearly_faster(b, a)
    assert not pk.clearly_faster(a, b, margin=2.5)  # within the margin
    assert not pk.clearly_faster(a, b.copy().replace({1.2: 0.95}))  # b's best beat a's median
    quick_a = a * 1e-4
    quick_a["overhead_bound"] = True
    quick_b = b * 1e-4
    quick_b["overhead_bound"] = True
    assert not pk.clearly_faster(quick_a, quick_b)  # both overhead: not ranked
    assert pk.clearly_faster(quick_a, b)  # one of them is not
    b["warm_min_s"] = float("nan")  # no fastest call recorded: its median stands in
    assert pk.clearly_faster(a, b)


def test_a_group_names_at_most_three(small):
    rows = [pd.Series({"name": f"s{i}", "warm_median_s": 0.5e-3 + i * 1e-5,
                       "overhead_bound": True}) for i in range(5)]  # fmt: skip
    said = pk.group_phrase(rows)
    assert said.startswith("s0 (500 µs), s1 (510 µs), s2 (520 µs) and 2 more: all under")
    assert pk.group_phrase([]) == "–"


def test_margins_come_from_how_far_each_frameworks_ratios_moved(small):
    assert pk.margins(small, None) == {"torch": 1.0, "tensorflow": 1.0, "jax": 1.0}
    second = small.copy()
    torch = second["framework"] == "torch"
    jax = second["framework"] == "jax"
    second.loc[torch, "ratio_median"] *= 1.1
    second.loc[jax, "ratio_median"] /= 1.6
    got = pk.margins(small, second)
    assert got["torch"] == pytest.approx(1.1) and got["jax"] == pytest.approx(1.6)
    assert got["tensorflow"] == pytest.approx(1.0)  # its ratios did not move
    only_torch = second[~second["framework"].isin(["tensorflow", "jax"])]
    got = pk.margins(small, only_torch)
    assert got["tensorflow"] == got["jax"] == pytest.approx(1.1)  # none: the largest of any


def test_the_picks_sentence_follows_the_data(small):
    cands = rec.candidates(small)
    said = pk.picks_sentence(cands, rec.TALL, {})
    assert said.startswith(
        "The question's size (N = 10,000): PyTorch, pathwise (8.5 ms); "
        "JAX, pathwise (9.9 ms). Largest unblocked (N = 1,000): TensorFlow, "
        "pathwise-function (882 µs). Largest unblocked (N = 100,000): "
        "PyTorch, jvp (135.2 ms)."
    )
    # Slow PyTorch's pathwise down at the question's N: jvp becomes the pick there.
    edit(small, at(small, "torch", "pathwise", paths=10_000), warm_median_s=0.05,
         warm_min_s=0.045)  # fmt: skip
    said = pk.picks_sentence(rec.candidates(small), rec.TALL, {})
    assert said.startswith("The question's size (N = 10,000): PyTorch, jvp (20.1 ms); ")
    # Remove the size: the regime goes.
    df = small[~((small["framework"] == "torch") & (small["paths"] == 100_000))]
    assert "N = 100,000" not in pk.picks_sentence(rec.candidates(df), rec.TALL, {})
    assert pk.picks_sentence(rec.candidates(small), rec.WIDE, {}) == (
        "The question's size (n = 100,000): JAX, jacrev (491 µs)."
    )
    none = small[small["problem"] != "moments"]
    assert pk.picks_sentence(rec.candidates(none), rec.WIDE, {}) == (
        "No wide Jacobian candidate ran correctly in this build."
    )


def test_a_faster_non_candidate_is_never_the_pick(small):
    edit(small, at(small, "tensorflow", "question", paths=1000), warm_median_s=1e-9)
    assert _groups(small, "tensorflow", rec.TALL)[pk.IN_MEMORY] == ["pathwise-function"]


def test_the_pick_follows_changed_rows(small):
    edit(small, at(small, "tensorflow", "forward-accumulator"), warm_median_s=1e-5)
    assert _groups(small, "tensorflow", rec.TALL)[pk.IN_MEMORY] == ["forward-accumulator"]


def test_the_fastest_within_a_budget(small):
    rows = rec.at_size(rec.shape_rows(rec.candidates(small), "tensorflow", rec.TALL), 1000)
    # Peaks: pathwise 714.6 MB, pathwise-function 720.0 MB, forward-accumulator 720.5 MB, ...
    assert rec.fitted(rec.within(rows, 1.0)) == "pathwise-function (686.7 MiB)"
    assert rec.fitted(rec.within(rows, 0.67)) == "pathwise (681.5 MiB)"  # 719.4 MB
    assert rec.fitted(rec.within(rows, 0.5)) == "none measured"
    # With the rows it was applied to: they ran, and none fits; the smallest peak in MiB.
    smallest = rows.loc[rows["status"] == "ok", "peak"].min() / 2**20
    assert rec.fitted(rec.within(rows, 0.5), rows) == f"none fits (smallest {smallest:,.1f} MiB)"
    assert rec.fitted(None, rows.assign(status="memory-cap")) == "none measured"


def test_the_default_call_at_the_picks_size_or_its_largest(small):
    assert [rec.default_name(fw, s) for fw in ("torch", "tensorflow", "jax")
            for s in (rec.TALL, rec.HESSIAN)] == [
        "functional-loop", "functional-hessian", "tape-jacobian-pfor", "nested-tapes",
        "jacrev", "hessian"]  # fmt: skip
    cands = rec.candidates(small)
    tall = rec.shape_rows(cands, "jax", rec.TALL)
    # jax's jacrev was not run at the pick's N = 10,000: its largest size, N = 1,000.
    assert rec.outcome_at(rec.default_at(tall, "jacrev", 10_000), rec.TALL) == (
        "jacrev: 721.6 ms at N = 1,000"
    )
    hessian = rec.shape_rows(cands, "jax", rec.HESSIAN)
    assert rec.outcome_at(rec.default_at(hessian, "hessian", 100_000), rec.HESSIAN) == (
        "hessian: skipped (needs 119.4 GiB) at n = 100,000"
    )
    assert rec.default_at(rec.shape_rows(cands, "torch", rec.TALL), "functional-loop", 1) is None
    assert rec.outcome_at(None, rec.TALL) == "–"


def test_the_decision_table(small):
    table = pk.decision_table(small, rec.candidates(small), (0.5, 1.0))
    assert list(table.columns) == [
        "framework", "Jacobian shape", "where", "fastest there",
        "fastest within 0.5 GiB", "fastest within 1 GiB", "the framework's default",
        "fastest against the question's program at N = 10,000"]  # fmt: skip
    assert list(zip(table["framework"], table["Jacobian shape"], table["where"], strict=True)) == [
        ("PyTorch", rec.TALL, "the question's size, N = 10,000"),
        ("PyTorch", rec.TALL, "largest unblocked, N = 100,000"),
        ("TensorFlow", rec.TALL, "largest unblocked, N = 1,000"),
        ("JAX", rec.TALL, "the question's size, N = 10,000"),
        ("JAX", rec.WIDE, "the question's size, n = 100,000"),
        ("JAX", rec.HESSIAN, "largest measured, n = 100,000"),
    ]  # fmt: skip
    question, large = table.iloc[0], table.iloc[1]
    assert question["fastest there"] == "pathwise (8.5 ms)"
    assert question.iloc[-1].startswith("pathwise: ")  # against the question's program
    assert large["fastest there"] == "jvp (135.2 ms)"
    assert large["fastest within 0.5 GiB"] == "none fits (smallest 712.2 MiB)"
    assert large["fastest within 1 GiB"] == "jvp (712.2 MiB)"
    assert large["the framework's default"] == "–"  # functional-loop: no row
    assert (table.iloc[1:3, -1] == "–").all() and (table.iloc[4:, -1] == "–").all()
    assert table.iloc[4]["fastest there"] == "jacrev (491 µs)"


# --- The answer code's costs ------------------------------------------------------------------


def test_the_answer_codes_costs(small):
    assert rec.answer_cost(small, "torch", "pathwise") == (
        "8.5 ms a call at N = 10,000, 2.22× [2.06–3.12] the simulation's time; peak memory "
        "276.5 MiB"
    )
    assert rec.answer_cost(small, "torch", "forward").startswith("135.2 ms a call at N = 100,000")
    assert rec.answer_cost(small, "tensorflow", "forward").startswith("31.5 ms a call at N = 1,000")
    assert (
        rec.answer_cost(small, "jax", "wide")
        == "491 µs a call at n = 100,000; peak memory 226.5 MiB"
    )
    assert (
        rec.answer_cost(small, "jax", "hvp")
        == "301 µs a call at n = 100,000; peak memory 222.3 MiB"
    )
    assert rec.answer_cost(small, "torch", "wide") == NM  # grad-loop: no moments row
    assert rec.answer_cost(small, "tensorflow", "hvp") == NM


def test_a_cost_falls_back_to_a_smaller_size_or_reads_what_stopped_it(small):
    edit(small, at(small, "jax", "pathwise", paths=10_000), status="memory-cap")
    assert rec.answer_cost(small, "jax", "pathwise").startswith("822 µs a call at N = 1,000, 1.65×")
    edit(small, at(small, "jax", "second:hvp"), status="skipped-predicted")
    assert rec.answer_cost(small, "jax", "hvp") == "skipped (needs 251.3 MiB) at n = 100,000"


def test_the_fix_over_repeated_calls(small):
    assert rec.fix_repeated(small) == f"Its repeated calls were {NM} here."
    df = copy(small, at(small, "torch", "jvp", paths=1000), strategy="functional-forward",
              cold_peak=1000 * 2**20, warm_peak=1050 * 2**20, warm_n=20)  # fmt: skip
    assert rec.fix_repeated(df).startswith(
        "Here, on the CPU at N = 1,000, the process's peak over 20 warm calls stayed at "
        "1.0 GiB (the first call: 1000.0 MiB)"
    )
    grown = edit(df.copy(), df.index.max(), warm_peak=1500 * 2**20)
    assert "grew to 1.5 GiB from the first call's 1000.0 MiB" in rec.fix_repeated(grown)


def test_the_blocked_forms_are_the_registry_s():
    hand = {"torch": ["blocked-pathwise", "blocked-jvp"],
            "tensorflow": ["blocked-pathwise-function", "blocked-forward-function"],
            "jax": ["blocked-pathwise", "blocked-jvp"]}  # fmt: skip
    segments = rec.blocked_forms().split("; ")
    assert [seg.split("'s ")[0] for seg in segments] == ["PyTorch", "TensorFlow", "JAX"]
    for seg, names in zip(segments, hand.values(), strict=True):
        assert sorted(seg.split("'s ")[1].split(" and ")) == sorted(names)


def test_the_question_at_the_larger_n_under_the_other_allocators(small):
    # Chapter 1's rows: the program finished at N = 10,000 under jemalloc (first call 5.69 s)
    # and under glibc-mmap (54.08 s) while glibc's default settings hit the cap.
    df = fixed(small)
    i = at(df, "torch", "question", paths=10_000)
    df = copy(df, i, allocator="jemalloc", status="ok", cold_s=5.6919, warm_median_s=5.0512)
    df = copy(df, i, allocator="glibc-mmap", status="ok", cold_s=54.0766, warm_median_s=66.0)
    fix = at(df, "torch", "functional-forward", paths=10_000)
    first = formats.time(df.loc[fix, "cold_s"])
    # First call beside first call, warm beside warm, the fix's too.
    assert rec.fix_beyond(df) == (
        "At N = 10,000 the question's program, under glibc's malloc with its default settings, "
        "stopped at the memory cap (4.0 GiB) after 13.35 s; under glibc-mmap it took 54.08 s a "
        "first call and 1 min 6 s a warm one, under jemalloc 5.69 s and 5.05 s. Under glibc, "
        f"the one-argument fix took {first} a first call and 20.1 ms a warm one, holding "
        "127.5 MiB beyond the inputs."
    )
    # Under glibc-mmap it too hit the cap: the first call named under jemalloc.
    edit(df, df.index.max(), status="memory-cap", wall_s=30.0)
    assert (
        "; under glibc-mmap it stopped at the memory cap (4.0 GiB) after 30.00 s, under "
        "jemalloc it took 5.69 s a first call and 5.05 s a warm one." in rec.fix_beyond(df)
    )


def test_where_the_margins_come_from(small):
    assert pk.margins_basis(small, None) == (
        "With one occasion in this build, every margin is 1: the warm calls alone decide."
    )
    second = small.copy()
    second.loc[second["framework"] == "torch", "ratio_median"] *= 1.1
    # The fixture's ratios are at N = 1,000, 10,000 and 100,000.
    assert pk.margins_basis(small, second) == (
        "These margins, how far apart two medians must be (PyTorch 1.100×, TensorFlow 1.000×, "
        "JAX 1.000×), are the largest moves of the GBM's time-over-simulation ratios, measured "
        "at N = 1,000, 10,000 and 100,000 on one occasion besides the dataset's, and are "
        "applied here at every size and to the wide Jacobian and the Hessians as well."
    )
    # Measured again at N = 1,000 alone: 'only'.
    at_1000 = second[second["paths"] == 1000]
    assert "at N = 1,000 only on one occasion besides" in pk.margins_basis(small, at_1000)
    # A third occasion, JAX's ratios 1.2x lower at 10,000: each framework's margin is its
    # largest move over both, whichever occasion and N it came from.
    third = small[small["paths"] == 10_000].copy()
    third.loc[third["framework"] == "jax", "ratio_median"] /= 1.2
    both = pk.margins(small, [second, third])
    assert both == pytest.approx({"torch": 1.1, "tensorflow": 1.0, "jax": 1.2})
    assert pk.margins(small, [second, None]) == pk.margins(small, second)
    assert "(PyTorch 1.100×, TensorFlow 1.000×, JAX 1.200×)" in pk.margins_basis(
        small, [second, third]
    )
    assert "on two occasions besides the dataset's" in pk.margins_basis(small, [second, third])
    assert pk.margins_basis(small, second.iloc[0:0]).startswith("With one occasion")


def test_the_answer_code_names_the_pick_where_its_builder_is_not_it(small):
    cands = rec.candidates(small)
    # PyTorch's jvp at N = 100,000 is the only candidate there: it is the pick, nothing said.
    assert pk.answer_note(small, cands, "torch", "forward") == ""
    # PyTorch's pathwise at N = 10,000 (8.5 ms) is the pick: nothing said; made slower than
    # jvp (20.1 ms), the pick there is jvp.
    assert pk.answer_note(small, cands, "torch", "pathwise") == ""
    edit(small, at(small, "torch", "pathwise", paths=10_000), warm_median_s=0.05,
         warm_min_s=0.049)  # fmt: skip
    cands = rec.candidates(small)
    assert pk.answer_note(small, cands, "torch", "pathwise") == (
        "; at that size the table's pick is jvp (20.1 ms)"
    )
    # TensorFlow's eager forward-accumulator at N = 1,000 (31.5 ms) against the compiled forms:
    # pathwise-function is the pick there; made as fast as it, two are named.
    assert pk.answer_note(small, cands, "tensorflow", "forward") == (
        "; at that size the table's pick is pathwise-function (882 µs)"
    )
    i = at(small, "tensorflow", "forward-accumulator-function", paths=1000)
    edit(small, i, warm_median_s=0.00089, warm_min_s=0.0008)
    assert pk.answer_note(small, rec.candidates(small), "tensorflow", "forward") == (
        "; at that size the table names pathwise-function (882 µs) or "
        "forward-accumulator-function (890 µs)"
    )
    assert pk.answer_note(small, cands, "torch", "wide") == ""  # no row


def test_the_regime_above_the_unblocked_forms_is_named_by_what_ran(small):
    df = copy(small, at(small, "torch", "jvp", paths=100_000), strategy="blocked-jvp",
              paths=10**7, warm_median_s=14.0, warm_min_s=13.5)  # fmt: skip
    table = pk.decision_table(df, rec.candidates(df), (1.0,))
    assert "blocked forms only, N = 10,000,000" in list(table["where"])
    assert "beyond memory" not in " ".join(table["where"])
