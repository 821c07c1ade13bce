"""Chapter 3 (vectorized Jacobians): what vectorized reverse mode holds, how its memory grew,
the terminal-only forms, what each way of batching did at the question's N, and each loop
against its vectorized form by the book's one rule, on the reference dataset, the small fixture
and rows edited so that the answer changes."""

from pathlib import Path

import numpy as np
import pytest

from jacbench.problems.gbm import GBMParams
from jacbench.report import data, dataset, margins
from jacbench.report.chapters import vectorized
from jacbench.report.chapters.vectorized import tables
from jacbench.report.chapters.vectorized.facts import PFOR, loop_pairs, terminal_pairs, ways
from jacbench.strategies import registry
from tests.chapters.rows import at, edit

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / dataset.RESULTS
PAIRS = [
    ("torch", "functional-loop", "functional-vectorized"),
    ("torch", "grad-loop", "jacrev"),
    ("tensorflow", "tape-jacobian-loop", "tape-jacobian-pfor"),
    ("jax", "vjp-loop", "jacrev"),
]
TERMINALS = [
    ("torch", "jacrev-terminal", "jacrev"),
    ("tensorflow", "tape-jacobian-terminal", "tape-jacobian-pfor"),
    ("jax", "jacrev-terminal", "jacrev"),
]


@pytest.fixture(scope="module")
def reference_rows():
    return data.load(REFERENCE), dataset.others(dataset.Dataset(REFERENCE))


@pytest.fixture
def reference(reference_rows):
    df, others = reference_rows
    return df.copy(), others


@pytest.fixture(scope="module")
def ref_facts(reference_rows):
    df, others = reference_rows
    return vectorized.facts(df, margins.measure(df, others))


# --- the registry's roles ---------------------------------------------------------------------


def test_the_pairs_come_from_the_registry():
    assert loop_pairs() == PAIRS
    assert terminal_pairs() == TERMINALS
    assert vectorized.reverse_strategies("jax") == [
        "vjp-loop",
        "jacrev",
        "jacrev-terminal",
        "jacrev-chunked",
        "pathwise",
    ]
    assert vectorized.reverse_strategies("torch")[0] == "question"


@pytest.mark.parametrize("fw", ["torch", "tensorflow", "jax"])
def test_each_framework_has_one_strategy_of_each_way(fw):
    way = ways(fw)
    assert list(way) == ["loop", "vectorized", "chunked", "terminal"]
    assert registry.get(fw, way["vectorized"]).vectorizes == way["loop"]
    assert registry.get(fw, way["chunked"]).batching == "chunked"
    # The pair shown holds the framework's default call.
    assert registry.get(fw, way["loop"]).default or registry.get(fw, way["vectorized"]).default


def test_the_calls_table_names_every_batched_reverse_strategy():
    shown = tables.calls(chunk=64)
    assert len(shown) == 12 and set(shown["batching"]) == {"loop", "vectorized", "chunked"}
    assert "question" not in set(shown["strategy"]) and "–" not in set(shown["call"])
    (chunked,) = shown.loc[shown["strategy"] == "tape-jacobian-pfor-chunked", "call"]
    assert chunked == "tape.jacobian(..., parallel_iterations=64)"


# --- what it holds -------------------------------------------------------------------------------


def test_what_vectorized_reverse_mode_holds_is_n_path_arrays():
    h = vectorized.held(10_000)
    assert h.path_array == 53 * 10_000 * 4 == GBMParams(paths=10_000).path_array_bytes
    assert h.batch == 10_000 * h.path_array
    assert (h.chunk_size, h.chunk_batch) == (256, 256 * h.path_array)
    pfor = registry.get(*PFOR)
    assert h.pfor_predicted == pfor.memory.peak("tensorflow", 10_000, 52, "float32", 256)
    assert h.pfor_predicted > 3 * h.batch  # the model counts a few batches
    small = vectorized.held(100)
    assert small.chunk_size == 100 and small.batch * 100**2 == h.batch  # quadratic in N


def test_the_held_table_orders_sizes_up(ref_facts):
    shown = tables.held(ref_facts)
    assert list(shown["bytes"]) == ["2.0 MiB", "517.6 MiB", "19.7 GiB", "63.9 GiB"]


# --- on the reference dataset ---------------------------------------------------------------


def test_pfor_memory_grew_as_n_squared(ref_facts, reference_rows):
    df, _ = reference_rows
    rows = [df.loc[at(df, *PFOR, paths=n)] for n in (1000, 3000)]
    slope = np.log(rows[1]["peak_over_inputs"] / rows[0]["peak_over_inputs"]) / np.log(3)
    assert ref_facts.slope == pytest.approx(slope)
    assert ref_facts.slope_sizes == (1000, 3000) and ref_facts.grows_quadratically
    loop = ref_facts.pfor_loop_largest
    assert (loop.name, loop.paths) == ("tape-jacobian-loop", 3000)
    # The loop's memory grew about as N, from its own rows, not as N^2.
    rows = [df.loc[at(df, "tensorflow", loop.name, paths=n)] for n in (1000, 3000)]
    loop_slope = np.log(rows[1]["peak_over_inputs"] / rows[0]["peak_over_inputs"]) / np.log(3)
    assert ref_facts.loop_slope == pytest.approx(loop_slope) and loop_slope < 1.2


def test_pfor_batches_are_its_peak_over_n_path_arrays(ref_facts, reference_rows):
    df, _ = reference_rows
    r = ref_facts.pfor_largest
    assert (r.name, r.paths) == (PFOR[1], 3000)
    batch = 3000 * GBMParams(paths=3000).path_array_bytes
    row = df.loc[at(df, *PFOR, paths=3000)]
    assert ref_facts.pfor_batches == pytest.approx(row["peak_over_inputs"] / batch)
    shown = tables.batches(2, 3, ref_facts)
    assert list(shown["at once"]) == ["2", "3", f"{ref_facts.pfor_batches:.2f}", "3.2"]
    assert shown["batches alive"].iloc[2] == "measured at N = 3,000"


def test_every_loop_pair_is_ranked_by_the_book_s_rule(ref_facts, reference_rows):
    df, others = reference_rows
    m = margins.measure(df, others)
    assert m.measured and ref_facts.margins_measured
    assert len(ref_facts.loop_pairs) == 12
    for p in ref_facts.loop_pairs:
        a = df.loc[at(df, p.framework, p.loop.name, paths=p.paths)]
        b = df.loc[at(df, p.framework, p.vectorized.name, paths=p.paths)]
        assert p.repeated == margins.compare(a, b, m)
        assert p.one_call == margins.compare(a, b, m, "cold")
        # The verdict does not depend on which side is named first.
        assert margins.compare(b, a, m).ranked == p.repeated.ranked
    assert ref_facts.verdicts() == {"loop": 6, "vectorized": 5, None: 1}
    # PyTorch's first-call margin (1.47, since its sessions' compiled first calls were measured
    # with an inductor cache each) ranks three more of its loops ahead for one call.
    assert ref_facts.verdicts("cold") == {"loop": 7, "vectorized": 1, None: 4}


def test_the_reference_s_verdicts_by_framework(ref_facts):
    f = ref_facts
    assert f.always("tensorflow", "vectorized")
    assert f.winners("torch") == {"loop", "vectorized"} and f.always("torch", "loop", 1000)
    assert f.always("jax", "loop", from_n=1000) and f.winners("jax") == {"loop", None}
    (small,) = [p for p in f.loop_pairs if p.framework == "jax" and p.paths == 100]
    assert small.repeated.overhead and small.winner() is None and small.winner("cold") is None


def test_the_terminal_only_forms_hold_less_and_run_at_the_question_s_n(ref_facts):
    f = ref_facts
    assert f.terminal_gap_grows and f.both_ran_largest == 3000
    assert f.terminal_smaller(3000) and f.terminal_smaller(1000)
    assert f.ran_at_question("terminal") == ["torch", "tensorflow", "jax"]
    assert f.ran_at_question("vectorized") == []
    assert f.ran_at_question("chunked") == ["tensorflow", "jax"]
    assert f.at_question["torch"]["loop"].status == "memory-cap"
    assert f.at_question["tensorflow"]["loop"].status == "not measured"
    shown = tables.terminal(f)
    assert list(shown["N"]) == ["1,000", "3,000", "10,000"] * 3
    assert shown["with the path"][2] == "skipped: needs 59.6 GiB"


def test_the_tables_show_the_rule_s_verdicts(ref_facts):
    shown = tables.loop_vs_vectorized(ref_facts)
    assert len(shown) == len(ref_facts.loop_pairs)
    for (_, row), p in zip(shown.iterrows(), ref_facts.loop_pairs, strict=True):
        winner = p.winner()
        assert row["many calls"] == (
            "tie" if winner is None else f"{winner}, {p.repeated.factor:.1f}×"
        )
    assert (shown["one call"] == "tie").sum() == ref_facts.verdicts("cold")[None] == 4
    q = tables.at_question(ref_facts)
    assert list(q.loc[q["framework"] == "JAX", "way"]) == [
        "loop",
        "vectorized",
        "chunked",
        "terminal only",
    ]
    assert "stopped at the 8.0 GiB cap" in set(q["memory"])


# --- edited rows and the fixture ----------------------------------------------------------------


def test_a_vectorized_form_as_fast_as_its_loop_is_a_tie(reference):
    df, others = reference
    a = at(df, "tensorflow", "tape-jacobian-loop", paths=1000)
    b = at(df, "tensorflow", "tape-jacobian-pfor", paths=1000)
    w = df.loc[a, "warm_median_s"] * 1.05  # its simulation is too short for ratios to rank
    edit(df, b, warm_median_s=w, warm_min_s=w * 0.9)
    f = vectorized.facts(df, margins.measure(df, others))
    (p,) = [p for p in f.loop_pairs if p.framework == "tensorflow" and p.paths == 1000]
    assert p.winner() is None and not f.always("tensorflow", "vectorized")
    assert f.verdicts()[None] == 2


def test_a_loop_that_gets_slow_loses(reference):
    df, others = reference
    i = at(df, "jax", "vjp-loop", paths=3000)
    edit(df, i, ratio_median=1e5, ratio_lo=9e4, ratio_hi=1.1e5, warm_median_s=50.0, warm_min_s=49.0)
    f = vectorized.facts(df, margins.measure(df, others))
    (p,) = [p for p in f.loop_pairs if p.framework == "jax" and p.paths == 3000]
    assert p.winner() == "vectorized" and not f.always("jax", "loop", from_n=1000)


def test_a_terminal_form_holding_more_breaks_the_growing_gap(reference):
    df, others = reference
    edit(df, at(df, "jax", "jacrev-terminal", paths=3000), peak_over_inputs=1e11)
    f = vectorized.facts(df, margins.measure(df, others))
    assert not f.terminal_gap_grows and not f.terminal_smaller(3000)
    assert f.terminal_smaller(1000)


def test_the_fixture_leaves_what_it_lacks_unmeasured(small):
    f = vectorized.facts(small)
    assert f.slope is None and f.slope_sizes is None and not f.grows_quadratically
    assert f.pfor_loop_largest is None and f.terminals == ()
    assert not f.terminal_gap_grows and f.both_ran_largest is None
    assert not f.margins_measured
    assert [(p.framework, p.paths) for p in f.loop_pairs] == [("torch", 1000), ("jax", 1000)]
    assert all(p.repeated.margin == margins.UNMEASURED for p in f.loop_pairs)
    assert f.ran_at_question("loop") == [] and f.ran_at_question("terminal") == []
    q = tables.at_question(f)
    assert set(q["memory"]) == {"not measured in this profile"}
    assert tables.terminal(f).empty and len(tables.loop_vs_vectorized(f)) == 2
