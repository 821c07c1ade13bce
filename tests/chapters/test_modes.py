"""Chapter 2 (forward and reverse mode): the teaching example against the closed form, and each
framework's forward mode against its reverse mode by the book's one rule, on the reference
dataset, the small fixture and rows edited so that the answer changes."""

from pathlib import Path

import numpy as np
import pytest

from jacbench.report import data, dataset, margins
from jacbench.report.chapters import modes
from jacbench.report.chapters.modes import tables
from jacbench.report.chapters.modes.facts import PAIRS, TF_GRAPH_FORWARD
from jacbench.teaching import jacobian as example
from tests.chapters.rows import at, edit

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / dataset.RESULTS


@pytest.fixture(scope="module")
def reference():
    df = data.load(REFERENCE)
    return df, dataset.others(dataset.Dataset(REFERENCE))


# --- the teaching example ---------------------------------------------------------------------


@pytest.mark.parametrize("paths", [1, 4, 9])
def test_every_way_gives_the_closed_form_jacobian(paths):
    z = example.normals(paths)
    exact = example.exact(z)
    assert exact.shape == (paths, 2)
    for way in (example.forward, example.reverse, example.pathwise):
        np.testing.assert_allclose(way(z), exact, rtol=1e-12)


def test_the_example_counts_its_passes_and_its_errors():
    e = modes.teaching(paths=5)
    assert (e.paths, e.forward_passes, e.reverse_passes, e.pathwise_passes) == (5, 2, 5, 1)
    assert e.error == max(e.forward_error, e.reverse_error, e.pathwise_error)
    assert 0 <= e.error < 1e-12


def test_the_tape_table_lists_each_operation_and_what_it_keeps():
    t = example.recorded(example.normals(4))
    shown = tables.tape_entries(t)
    assert list(shown["#"]) == list(range(1, len(t.entries) + 1))
    assert shown["bytes kept"].sum() == t.stored_bytes() == modes.teaching(4).tape_bytes
    assert "exp" in set(shown["operation"]) and "(4,)" in set(shown["output shape"])
    # One tape for both inputs: vol's terms come first, spot enters at the last multiplication.
    assert list(shown["depends on"])[:-1] == ["σ"] * (len(shown) - 1)
    assert shown["depends on"].iloc[-1] == "S0, σ"
    # A path more keeps more: the array operations keep one number more each.
    assert modes.teaching(8).tape_bytes > modes.teaching(4).tape_bytes


def test_relative_error_is_the_largest_over_the_elements():
    assert example.relative_error([1.1, 2.0], [1.0, 2.0]) == pytest.approx(0.1)
    assert example.relative_error([-2.2, 3.0], [-2.0, 2.0]) == pytest.approx(0.5)


# --- forward against reverse mode, measured ----------------------------------------------------


def test_on_the_reference_forward_mode_wins_everywhere_by_the_rule(reference):
    df, others = reference
    m = margins.measure(df, others)
    f = modes.facts(df, m)
    assert f.n == 1000 and f.half_n == 500
    assert f.forward_wins_everywhere and f.more_memory_everywhere
    for fw, (fwd, rev) in PAIRS.items():
        p = f.pairs[fw]
        assert (p.forward.name, p.reverse.name) == (fwd, rev)
        # Both rows are timed beside the same simulation, but it is too short at this N for a
        # ratio: ranked by their warm medians, the factor the quotient of the times shown.
        a, b = (df.loc[at(df, fw, s, paths=1000)] for s in (fwd, rev))
        assert a["pair_baseline_median_s"] < margins.RATIO_FLOOR_S
        assert p.comparison.basis == "warm"
        assert p.factor == pytest.approx(b["warm_median_s"] / a["warm_median_s"])
        assert p.comparison.margin == m.of("warm", fw)
        assert p.forward.warm_s == a["warm_median_s"] and p.reverse.warm_s == b["warm_median_s"]
    lo, hi = f.factors
    assert lo == f.pairs["tensorflow"].factor and hi == f.pairs["jax"].factor
    assert f.above_half("jax") and f.above_half("torch") is False
    assert f.above_half("tensorflow") is False
    assert f.tf_graph_faster and f.tf_graph_forward.name == TF_GRAPH_FORWARD
    assert f.tf_graph_forward.warm_s < f.pairs["tensorflow"].forward.warm_s


def test_the_cost_table_shows_the_calls_and_the_rule_s_factor(reference):
    df, others = reference
    f = modes.facts(df, margins.measure(df, others))
    shown = tables.costs(f)
    assert list(shown["framework"]) == ["PyTorch", "TensorFlow", "JAX"]
    assert list(shown["forward mode"]) == [
        "torch.func.jacfwd",
        "tf.autodiff.ForwardAccumulator",
        "jax.jacfwd",
    ]
    assert list(shown["reverse mode"])[1] == "tape.jacobian"
    torch = f.pairs["torch"]
    assert shown["reverse took"][0] == f"{torch.factor:,.0f}×"
    assert shown["against N/2"][0] == f"{torch.factor / 500:.2f}×"


def test_the_fixture_without_other_sessions_ranks_against_the_unmeasured_margin(small):
    f = modes.facts(small)
    assert all(p.comparison.margin == margins.UNMEASURED for p in f.compared)
    assert f.forward_wins_everywhere
    assert f.example.paths == modes.facts(small, teach_paths=3).example.paths + 1


def test_a_reverse_mode_as_fast_as_forward_mode_is_a_tie(small):
    i, j = at(small, "torch", "jacfwd", paths=1000), at(small, "torch", "jacrev", paths=1000)
    ratio = small.loc[i, "ratio_median"] * 1.05
    edit(
        small,
        j,
        ratio_median=ratio,
        ratio_lo=ratio * 0.9,
        ratio_hi=ratio * 1.1,
        warm_median_s=small.loc[i, "warm_median_s"] * 1.05,
    )
    f = modes.facts(small)
    torch = f.pairs["torch"]
    assert torch.comparison.tied and not torch.forward_wins
    assert not f.forward_wins_everywhere
    lo, hi = f.factors  # the tie is no win, so its factor is left out of the range
    assert lo == f.pairs["tensorflow"].factor and hi == f.pairs["jax"].factor
    assert tables.costs(f)["reverse took"][0] == "tie"


def test_a_reverse_mode_faster_than_forward_mode_is_said(small):
    i, j = at(small, "torch", "jacfwd", paths=1000), at(small, "torch", "jacrev", paths=1000)
    edit(
        small,
        j,
        ratio_median=small.loc[i, "ratio_median"] / 10,
        ratio_lo=0.01,
        ratio_hi=0.02,
        warm_median_s=small.loc[i, "warm_median_s"] / 2,
    )
    f = modes.facts(small)
    torch = f.pairs["torch"]
    assert torch.comparison.ranked and not torch.forward_wins and torch.factor is None
    assert f.above_half("torch") is None
    assert tables.costs(f)["reverse took"][0] == "reverse faster"


def test_two_calls_both_under_a_millisecond_are_never_ranked(small):
    i, j = at(small, "jax", "jacfwd", paths=1000), at(small, "jax", "jacrev", paths=1000)
    edit(
        small,
        j,
        ratio_median=small.loc[i, "ratio_median"] * 10,
        ratio_lo=10,
        ratio_hi=11,
        warm_median_s=small.loc[i, "warm_median_s"] * 1.01,
    )
    jax = modes.facts(small).pairs["jax"]
    assert jax.comparison.overhead and jax.comparison.tied and not jax.forward_wins


def test_a_pair_that_did_not_run_is_not_measured(small):
    edit(small, at(small, "tensorflow", "tape-jacobian-pfor", paths=1000), status="memory-cap")
    edit(small, at(small, "tensorflow", TF_GRAPH_FORWARD, paths=1000), status="timeout")
    f = modes.facts(small)
    tf = f.pairs["tensorflow"]
    assert tf.comparison is None and tf.reverse.warm_s is None and not tf.more_memory
    assert not f.forward_wins_everywhere and not f.more_memory_everywhere
    assert not f.tf_graph_faster and f.tf_graph_against_eager is None
    shown = tables.costs(f)
    assert shown["reverse took"][1] == "not measured in this profile"
    assert shown["warm, forward / reverse"][1].endswith("/ –")


def test_a_size_with_no_rows_leaves_every_pair_unmeasured(small):
    f = modes.facts(small, n=3000)
    assert f.compared == [] and f.factors is None
    assert all(p.forward.status == "not measured" for p in f.pairs.values())
