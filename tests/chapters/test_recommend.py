"""Chapter 6's facts (report.chapters.recommend): the book's picks read by the rule of the
shapes, the picks under a memory budget, finite differences, float64 and dense Hessians, on the
reference dataset, on rows edited so that the answer changes, and on the small fixture; and
the answer's eight snippets, run."""

import math
import re
from pathlib import Path

import pandas as pd
import pytest

from jacbench.constants import GIB
from jacbench.report import data, dataset, margins, picks
from jacbench.report.chapters import front, recommend
from jacbench.report.chapters.recommend import bends, tables
from jacbench.report.picks import BLOCKED, HESSIAN, IN_MEMORY, LARGEST, QUESTION, TALL, WIDE
from tests.chapters.rows import at, edit

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / dataset.RESULTS
# PyTorch's compiled loops over the steps, tied for its tall picks' repeated calls.
TORCH_LOOPS = ("steps-compiled-carry", "steps-compiled-pathwise", "steps-segmented-carry")


def facts(df, others, budgets=(1.0, 4.0)):
    return recommend.facts(df, picks.compute(df, margins.measure(df, others)), budgets)


@pytest.fixture(scope="module")
def ref(others):
    return facts(data.load(REFERENCE), others)


def test_every_pick_follows_the_rule_of_its_shape(ref):
    assert all(ref.follows_rule(shape) for shape in (TALL, WIDE, HESSIAN))
    assert ref.allocators == ("glibc",)
    assert ref.size(TALL, QUESTION) == picks.QUESTION_N
    assert ref.size(TALL, IN_MEMORY) == 10_000_000 and ref.size(TALL, BLOCKED) == 100_000_000
    assert ref.size(WIDE, QUESTION) == picks.QUESTION_INPUTS


def test_the_rule_fails_where_reverse_mode_wins_a_tall_pick(reference, others):
    # jacrev-chunked, vectorized reverse mode, 100 times faster than anything at N = 10,000
    # (every other JAX candidate there made ten times slower than the loops' 0.2 ms).
    for name in ("steps-carry", "steps-pathwise", "steps-jvp", "steps-jacfwd", "jvp", "jacfwd",
                 "pathwise", "blocked-jvp", "blocked-pathwise"):  # fmt: skip
        slow = {"warm_median_s": 0.1, "warm_min_s": 0.1}
        ratios = {"ratio_median": 100, "ratio_lo": 100, "ratio_hi": 100}
        edit(reference, at(reference, "jax", name, paths=10_000), **slow, **ratios)
    i = at(reference, "jax", "jacrev-chunked", paths=10_000)
    edit(
        reference,
        i,
        warm_median_s=1e-3,
        warm_min_s=1e-3,
        cold_s=1e-2,
        ratio_median=0.01,
        ratio_lo=0.01,
        ratio_hi=0.01,
    )
    f = facts(reference, others)
    assert f.pick(TALL, QUESTION, "jax").repeated == ("jacrev-chunked",)
    assert not f.follows_rule(TALL) and f.follows_rule(WIDE)


def test_compiled_forms_win_later_calls_at_the_questions_size(ref):
    for fw in ("torch", "tensorflow"):
        p = ref.pick(TALL, QUESTION, fw)
        assert ref.compiled_wins_later(TALL, QUESTION, fw)
        first = p.entry(p.one_call[0])
        # n calls of one of the tied compiled forms take less than n eager calls from
        # overtakes_at on, and none of them before.
        n = p.overtakes_at
        later = [p.entry(r) for r in p.repeated]
        assert any(t.cold_s + (n - 1) * t.warm_s < first.cold_s + (n - 1) * first.warm_s
                   for t in later)  # fmt: skip
        assert all(t.cold_s + (n - 2) * t.warm_s >= first.cold_s + (n - 2) * first.warm_s
                   for t in later)  # fmt: skip
    # the blocked form's first call (40 ms) is ranked behind the whole one's (12 ms)
    assert ref.pick(TALL, QUESTION, "torch").one_call == ("pathwise",)
    assert not ref.compiled_wins_later(TALL, QUESTION, "jax")  # jit throughout
    assert ref.ties(TALL, QUESTION, "jax", "steps-carry", "steps-pathwise")
    assert ref.compiled_wins_later(WIDE, QUESTION, "tensorflow")


def test_a_cheap_compilation_wins_from_the_first_call(reference, others):
    for name in TORCH_LOOPS:
        edit(reference, at(reference, "torch", name, paths=10_000), cold_s=5e-3)
    f = facts(reference, others)
    p = f.pick(TALL, QUESTION, "torch")
    assert p.repeated[0] in p.one_call and p.overtakes_at is None
    assert not f.compiled_wins_later(TALL, QUESTION, "torch")


def test_forward_mode_beats_the_pathwise_gradient_in_torch_and_jax_at_ten_million_paths(ref):
    assert ref.forward_beats_pathwise(IN_MEMORY, "jax")
    # JAX's carried tangent ties with forward mode through jvp, both over the loop
    assert ref.pick(TALL, IN_MEMORY, "jax").repeated == ("steps-carry", "steps-jvp")
    # PyTorch's carried tangent, its outputs written in the compiled call, wins alone there
    assert ref.forward_beats_pathwise(IN_MEMORY, "torch")
    assert ref.pick(TALL, IN_MEMORY, "torch").repeated == ("steps-compiled-carry",)
    # TensorFlow's carried tangent and pathwise gradient over the loop tie
    assert not ref.forward_beats_pathwise(IN_MEMORY, "tensorflow")


def test_a_faster_pathwise_gradient_takes_jaxs_pick_back(reference, others):
    n = 10_000_000
    i = at(reference, "jax", "steps-pathwise", paths=n)
    j = at(reference, "jax", "steps-carry", paths=n)
    half = reference.loc[j, ["warm_median_s", "warm_min_s", "ratio_median", "ratio_lo"]] / 2
    edit(reference, i, **half.to_dict(), ratio_hi=half["ratio_median"])
    f = facts(reference, others)
    assert not f.forward_beats_pathwise(IN_MEMORY, "jax")
    assert "steps-pathwise" in f.pick(TALL, IN_MEMORY, "jax").repeated


def test_the_wide_and_hessian_picks(ref):
    assert ref.ties(WIDE, QUESTION, "torch", "grad-loop", "functional-loop")
    assert ref.pick(WIDE, LARGEST, "tensorflow").repeated == ("tape-jacobian-function",)
    assert ref.only(WIDE, "jax") and not ref.only(WIDE, "torch")
    assert all(ref.only_products(fw) for fw in ("torch", "tensorflow", "jax"))
    assert not any(ref.only(HESSIAN, fw) for fw in ("torch", "tensorflow", "jax"))  # two orders


def test_within_a_budget_the_winners_fit_and_a_huge_budget_changes_nothing(reference, others):
    f = facts(reference, others, budgets=(1.0, 1024.0))
    for key, (small, huge) in f.budgeted.items():
        assert all(peak <= GIB for peak in small.peaks.values()), key
        assert huge.winners == f.picks.get(key[0], key[2], key[1]).repeated
    assert f.blocked_within(IN_MEMORY)
    torch = f.budgeted[(TALL, IN_MEMORY, "torch")][0]
    assert torch.winners == ("drawn-carry",)  # the loop drawing its own normals
    # TensorFlow's wide Jacobian at n = 10^7 fits no 1 GiB budget: the smallest peak is above.
    tf = f.budgeted[(WIDE, LARGEST, "tensorflow")][0]
    assert not tf.fits and tf.smallest > GIB


def test_a_drawing_loop_over_the_budget_gives_way(reference, others):
    i = at(reference, "torch", "drawn-carry", paths=10_000_000)
    edit(reference, i, peak=2 * GIB)
    f = facts(reference, others)
    winners = f.budgeted[(TALL, IN_MEMORY, "torch")][0].winners
    assert winners and "drawn-carry" not in winners


def test_finite_differences_beside_the_picks(ref, reference):
    fd = ref.finite
    row = reference.loc[at(reference, "numpy", "finite-difference", paths=1_000_000)]
    assert fd.paths == 1_000_000 and fd.finite.warm_s == pytest.approx(row["warm_median_s"])
    # Beside each framework's fastest Jacobian there, of either form.
    conditions = {"problem": "gbm", "target": "strategy", "paths": 1_000_000, "status": "ok",
                  "dtype": "float32", "allocator": "glibc"}  # fmt: skip
    there = reference[(reference[list(conditions)] == pd.Series(conditions)).all(axis=1)]
    for t in fd.picks:
        mine = there[there["framework"] == t.framework]
        assert t.warm_s == mine["warm_median_s"].min()
    assert [t.framework for t in fd.picks] == ["torch", "tensorflow", "jax"]
    # sqrt(exp(0.2^2 * 1) - 1) / sqrt(10^6)
    assert fd.monte_carlo == pytest.approx(math.sqrt(math.expm1(0.04)) / 1000)
    assert fd.slower_than_every_pick and fd.above_rounding and fd.below_monte_carlo
    assert len(tables.finite_differences(ref)) == 1 + len(fd.picks)


def test_fast_finite_differences_are_no_longer_slower(reference, others):
    i = at(reference, "numpy", "finite-difference", paths=1_000_000)
    edit(reference, i, warm_median_s=0.1, warm_min_s=0.1, max_rel_error=1e-3)
    fd = facts(reference, others).finite
    assert not fd.slower_than_every_pick and not fd.below_monte_carlo


def test_float64_against_float32(ref):
    by = {(p.framework, p.name): p for p in ref.precision}
    assert len(by) == 8 and {p.paths for p in ref.precision} == {100_000}
    torch = [p.over for p in ref.precision if p.framework == "torch"]
    others = [p.over for p in ref.precision if p.framework != "torch"]
    assert min(torch) > max(others)
    p = by[("torch", "pathwise")]
    assert p.over == pytest.approx(p.float64_s / p.float32_s) and p.slower
    # TensorFlow's pathwise gradient: 1.54x, inside its warm margin of 1.55x.
    assert not by[("tensorflow", "pathwise")].slower
    faults = ref.faults
    assert faults.array32 == 53 * 100_000 * 4 and faults.array64 == 2 * faults.array32
    assert faults.maps_afresh and faults.more_in_float64("torch")


def test_dense_hessians_stop_at_the_questions_n(ref, reference):
    d = ref.dense
    assert d.inputs == picks.QUESTION_INPUTS and d.all_stopped and d.all_skipped
    assert d.largest_ok == 10_000 and d.cap == 8 * GIB
    assert d.one == 4 * picks.QUESTION_INPUTS**2 and not d.three_fit
    rows = reference[(reference["target"] == "second") & (reference["inputs"] == 10_000)]
    rows = rows[rows["strategy"] == "second:hessian"]
    edit(reference, rows.index[0], status="memory-cap", mem_cap=GIB)  # under 1.1 GiB there
    stopped = bends.dense_limit(reference)
    assert stopped.inputs == 10_000 and not stopped.all_stopped and not stopped.all_skipped
    assert stopped.three_fit is False and stopped.largest_ok == 3_000


def test_the_fix_is_measured_but_no_pick(ref):
    assert ref.fix_measured and ref.fix_is_picked is False


def test_the_tables_have_one_row_per_pick(ref):
    for shape in (TALL, WIDE, HESSIAN):
        assert len(tables.picks(ref, shape)) == sum(p.shape == shape for p in ref.picks.all)
    assert len(tables.budgets(ref)) == len(ref.picks.all)
    assert list(tables.margins(ref)["framework"]) == ["PyTorch", "TensorFlow", "JAX"]
    assert len(tables.precision(ref)) == len(ref.precision)


def test_the_fixture_reads_missing_cases_as_unknown(small):
    f = recommend.facts(small, picks.compute(small))
    assert f.pick(TALL, QUESTION, "tensorflow") is None
    assert not f.compiled_wins_later(TALL, QUESTION, "tensorflow")
    assert f.dense.inputs == 100_000 and not f.dense.three_fit  # skipped there, 112 GiB
    assert f.fix_is_picked is False and not f.fix_measured
    assert f.faults.by_framework == {}  # float64 ran in PyTorch only, with no faults counted
    for shape in (TALL, WIDE, HESSIAN):
        assert len(tables.picks(f, shape)) == sum(p.shape == shape for p in f.picks.all)


def test_the_chapter_shows_each_snippet_whole():
    """Every snippet is included whole (no start-after, no lines), once, in the chapter."""
    text = (ROOT / "notebooks" / "07-recommend.md").read_text()
    included = re.findall(r"```\{literalinclude\} \.\./(book/snippets/\w+\.py)\n((?::.*\n)*)", text)
    assert sorted(path for path, _ in included) == sorted(s.path.as_posix() for s in front.SNIPPETS)
    assert all(options == ":language: python\n" for _, options in included)
    assert not re.search("[\u2018\u2019\u201c\u201d]", text)  # no curly quote to paste


def test_the_front_pages_break_even_is_the_snippets_own(reference, others):
    """The call from which the front page's PyTorch loop has taken less in all than the eager
    pathwise gradient: n calls of it cost less than n of the other from that call on."""
    f = front.facts(picks.compute(reference, margins.measure(reference, others)))
    a = f.answer(TALL, "torch")
    n = a.snippet_overtakes
    first, loop = a.pick.entry(a.pick.one_call[0]), a.pick.entry(a.snippet.compiled)
    assert loop.cold_s + (n - 1) * loop.warm_s < first.cold_s + (n - 1) * first.warm_s
    assert loop.cold_s + (n - 2) * loop.warm_s >= first.cold_s + (n - 2) * first.warm_s
