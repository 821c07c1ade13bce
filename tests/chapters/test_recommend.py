"""What to use (chapter 6): the one-argument fix, finite differences against AD, the candidates
and picks per framework and shape, the budget picks, the defaults and the answer code's costs,
on the committed fixture and on rows edited from it (a tie, a missing size, failed rows, a
faster non-candidate, a pick that follows changed rows)."""

import pandas as pd

from jacbench.report import formats
from jacbench.report.chapters import recommend as rec

NM = formats.NOT_MEASURED


def at(df, framework, strategy, paths=None, inputs=None):
    """The index of the one fixture row of a strategy at a size."""
    mask = (df["framework"] == framework) & (df["strategy"] == strategy)
    if paths is not None:
        mask &= df["paths"] == paths
    if inputs is not None:
        mask &= df["inputs"] == inputs
    (index,) = df.index[mask.fillna(False).astype(bool)]
    return index


def edit(df, index, **values):
    """Set columns of one row in place."""
    for column, value in values.items():
        df.loc[index, column] = value
    return df


def copy(df, index, **values):
    """The frame with a copy of one row added, some columns changed."""
    row = df.loc[[index]].copy()
    row.index = [df.index.max() + 1]
    return edit(pd.concat([df, row]), row.index[0], **values)


# --- The one-argument fix ---------------------------------------------------------------------


def test_without_the_fix_measured_the_question_program_still_reads_its_fate(small):
    # The fixture has no functional-forward row; the question's program hit the 4 GiB cap at
    # N = 10,000 after 13.35 s.
    assert rec.fix_compare(small) == f"beside the question's call at the same N, it was {NM}."
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
        "cost 3.38× [2.93–3.50] the numpy simulation's time at N = 1,000, against TensorFlow's "
        "pathwise-function (1.14× [0.99–1.21]) for the cheapest automatic-differentiation "
        "strategy there."
    )
    assert rec.fd_accuracy(small) == (
        "Their largest relative error per path, 2.4e-05, is above float32's rounding in the "
        "automatic-differentiation strategies (3.8e-07 at most) and below the Monte-Carlo "
        "standard error of the simplest Greek at that N, the paths' mean of dS_T/dS0: 6.4e-03 "
        "of its value."
    )


def test_the_cheapest_ad_strategy_follows_the_ratios_and_the_error_its_side(small):
    edit(small, at(small, "tensorflow", "pathwise-function"), ratio_median=float("nan"))
    edit(small, at(small, "numpy", "finite-difference"), max_rel_error=0.01)
    assert "against PyTorch's compiled-pathwise (1.29× [1.22–1.35])" in rec.fd_cost(small)
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


def test_the_pick_is_the_fastest_candidate_at_the_largest_size_that_ran(small):
    cands = rec.candidates(small)
    name = {(fw, s): rec.pick(cands, fw, s) for fw in ("torch", "tensorflow", "jax")
            for s in rec.SHAPES}  # fmt: skip
    assert name["torch", rec.TALL]["name"] == "jvp"  # alone at N = 100,000
    assert name["tensorflow", rec.TALL]["name"] == "pathwise-function"  # 882 µs at N = 1,000
    assert name["jax", rec.TALL]["name"] == "pathwise"  # alone at N = 10,000
    assert name["jax", rec.WIDE]["name"] == "jacrev"  # jacfwd was skipped at n = 100,000
    assert name["jax", rec.HESSIAN]["name"] == "hvp"  # the dense one was skipped there
    assert name["torch", rec.WIDE] is None  # its one row was skipped
    assert name["tensorflow", rec.HESSIAN] is None


def test_a_tie_goes_to_the_first_candidate(small):
    # jax's jvp moved to N = 10,000 with pathwise's time there: the first of equals, in the
    # candidates' order (by strategy name), wins.
    tie = small.loc[at(small, "jax", "pathwise", paths=10_000), "warm_median_s"]
    df = copy(small, at(small, "jax", "jvp"), paths=10_000, warm_median_s=tie)
    assert rec.pick(rec.candidates(df), "jax", rec.TALL)["name"] == "jvp"
    df = copy(small, at(small, "jax", "vjp-loop"), paths=10_000, warm_median_s=tie)
    assert rec.pick(rec.candidates(df), "jax", rec.TALL)["name"] == "pathwise"


def test_a_faster_non_candidate_is_never_the_pick(small):
    edit(small, at(small, "tensorflow", "question", paths=1000), warm_median_s=1e-9)
    assert rec.pick(rec.candidates(small), "tensorflow", rec.TALL)["name"] == "pathwise-function"


def test_the_pick_follows_changed_rows(small):
    edit(small, at(small, "tensorflow", "forward-accumulator"), warm_median_s=1e-5)
    assert rec.pick(rec.candidates(small), "tensorflow", rec.TALL)["name"] == "forward-accumulator"


def test_a_failed_row_is_never_the_pick_and_its_size_not_the_largest(small):
    # jax's pathwise at N = 10,000 hit the memory cap (its time kept): the largest size that
    # ran is N = 1,000, where jvp (565 µs) is fastest.
    edit(small, at(small, "jax", "pathwise", paths=10_000), status="memory-cap")
    cands = rec.candidates(small)
    best = rec.pick(cands, "jax", rec.TALL)
    assert (best["name"], best["size"]) == ("jvp", 1000)


def test_the_fastest_within_a_budget(small):
    rows = rec.at_size(rec.shape_rows(rec.candidates(small), "tensorflow", rec.TALL), 1000)
    # Peaks: pathwise 714.6 MB, pathwise-function 720.0 MB, forward-accumulator 720.5 MB, ...
    assert rec.fitted(rec.within(rows, 1.0)) == "pathwise-function (686.7 MiB)"
    assert rec.fitted(rec.within(rows, 0.67)) == "pathwise (681.5 MiB)"  # 719.4 MB
    assert rec.fitted(rec.within(rows, 0.5)) == "none measured"


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
    table = rec.decision_table(small, rec.candidates(small), (0.5, 1.0))
    assert list(table.columns) == [
        "framework", "Jacobian shape", "largest size measured", "fastest there",
        "fastest within 0.5 GiB", "fastest within 1 GiB", "the framework's default",
        "fastest against the question's program at N = 10,000"]  # fmt: skip
    assert list(zip(table["framework"], table["Jacobian shape"], strict=True)) == [
        ("PyTorch", rec.TALL), ("TensorFlow", rec.TALL), ("JAX", rec.TALL), ("JAX", rec.WIDE),
        ("JAX", rec.HESSIAN)]  # fmt: skip
    torch = table.iloc[0]
    assert torch["largest size measured"] == "N = 100,000"
    assert torch["fastest there"] == "jvp (135.2 ms, 5.5× a simulation)"
    assert torch["fastest within 0.5 GiB"] == "none measured"  # its peak: 712.2 MiB
    assert torch["fastest within 1 GiB"] == "jvp (712.2 MiB)"
    assert torch["the framework's default"] == "–"  # functional-loop: no row
    # At the question's N = 10,000 PyTorch's fastest is pathwise (8.5 ms against jvp's 20.1).
    assert torch.iloc[-1].startswith("pathwise: ")
    assert table.iloc[3]["fastest there"] == "jacrev (491 µs)"  # no ratio for the moments
    assert (table.iloc[3:, -1] == "–").all()


def test_timed_gives_the_ratio_where_one_was_measured(small):
    row = small.loc[at(small, "jax", "pathwise", paths=10_000)].copy()
    row["name"] = "pathwise"
    assert rec.timed(row) == "pathwise (9.9 ms, 1.8× a simulation)"
    row["ratio_median"] = float("nan")
    assert rec.timed(row) == "pathwise (9.9 ms)"


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
