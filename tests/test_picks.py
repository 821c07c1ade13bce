"""The book's picks (report.picks): every chapter's winners, by the one rule."""

from pathlib import Path

import pytest

from jacbench.report import data, dataset, margins, picks
from tests.chapters.rows import at, edit

REFERENCE = Path(__file__).resolve().parents[1] / dataset.RESULTS


@pytest.fixture(scope="module")
def sessions():
    return dataset.others(dataset.Dataset(REFERENCE))


@pytest.fixture
def reference():
    return data.load(REFERENCE)


@pytest.fixture(scope="module")
def book(sessions):
    df = data.load(REFERENCE)
    return picks.compute(df, margins.measure(df, sessions))


def test_every_shape_and_framework_has_its_regimes(book):
    for fw in ("torch", "tensorflow", "jax"):
        assert {p.regime for p in book.all if (p.framework, p.shape) == (fw, "tall")} == {
            "question", "in-memory", "blocked"}  # fmt: skip
        for shape in ("wide", "hessian"):
            sizes = [p.size for p in book.all if (p.framework, p.shape) == (fw, shape)]
            assert picks.QUESTION_INPUTS in sizes and max(sizes) > picks.QUESTION_INPUTS


def test_a_pick_is_the_fastest_and_whatever_it_does_not_beat(book, sessions):
    cands = picks.candidates(data.load(REFERENCE))
    m = book.margins
    for p in book.all:
        rows = cands[(cands["framework"] == p.framework) & (cands["shape"] == p.shape)]
        rows = rows[(rows["size"] == p.size) & (rows["status"] == "ok")]
        fastest = rows.sort_values("warm_median_s").iloc[0]
        assert p.repeated[0] == fastest["name"]
        for _, r in rows.iterrows():
            if r["name"] == fastest["name"]:
                continue
            c = margins.compare(fastest, r, m)
            beaten = c.ranked and c.faster[1] == fastest["name"]
            assert (r["name"] in p.repeated) == (not beaten), (p.shape, p.size, r["name"])


def test_the_question_size_picks(book):
    torch = book.get("tall", "torch", "question")
    # PyTorch's compiled loops over the steps, each under a millisecond: a tie
    assert set(torch.repeated) == {"steps-compiled-carry", "steps-compiled-pathwise",
                                   "steps-segmented-carry"}  # fmt: skip
    # compiling takes seconds; the eager call, ms (in blocks of paths 3x slower, ranked)
    assert torch.one_call == ("pathwise",)
    first = torch.entry("pathwise")
    n = torch.overtakes_at
    total = lambda e, k: e.cold_s + (k - 1) * e.warm_s  # noqa: E731
    # Counted call by call: the first call at which one of the tied compiled forms is ahead.
    later = [torch.entry(r) for r in torch.repeated]
    ahead = [k for k in range(1, 100_000) if any(total(t, k) < total(first, k) for t in later)]
    assert n == ahead[0]


def test_overtakes():
    e = lambda cold, warm: picks.Entry("x", warm, cold, 0, 0, None)  # noqa: E731
    assert picks.overtakes(e(1.0, 0.5), e(3.0, 0.1)) == 7  # 3 + 0.1 k < 1 + 0.5 k from k = 6
    assert picks.overtakes(e(1.0, 0.1), e(3.0, 0.1)) is None  # never faster
    assert picks.overtakes(e(1.0, 0.1), e(0.5, 0.2)) == 1  # its first call is faster already


def test_the_first_to_catch_up_is_named_with_its_call():
    e = lambda name, cold, warm: picks.Entry(name, warm, cold, 0, 0, None)  # noqa: E731
    entries = {
        "eager": e("eager", 1.0, 0.5),
        "slow-compile": e("slow-compile", 9.0, 0.1),
        "quick-compile": e("quick-compile", 3.0, 0.1),
        "never": e("never", 2.0, 0.6),
    }
    p = picks.Pick("tall", "question", 10, "torch", ("slow-compile", "quick-compile", "never"),
                   ("eager",), 7, entries, ())  # fmt: skip
    assert p.first_to_catch_up == "quick-compile"  # from call 7; slow-compile from call 22
    none = picks.Pick("tall", "question", 10, "torch", ("never",), ("eager",), None, entries, ())
    assert none.first_to_catch_up is None


def test_a_break_even_is_given_as_the_range_the_margins_allow():
    e = lambda name, cold, warm: picks.Entry(name, warm, cold, 0, 0, None)  # noqa: E731
    eager, quick, near = e("eager", 1.0, 0.5), e("quick", 3.0, 0.1), e("near", 3.0, 0.45)
    assert picks.overtakes(eager, quick) == 7  # 1 + (3 - 1) / (0.5 - 0.1) = 6: from call 7
    # First calls' quotient off by 1.5, warm calls' by 1.2: 2.0 and 0.083 (1 + 1 / 0.417 =
    # 3.4: from call 4) to 4.5 and 0.12 (1 + 3.5 / 0.38 = 10.2: from call 11).
    assert picks.overtakes_within(eager, quick, 1.5, 1.2) == (4, 11)
    # For near, 2.0 and 0.375 (1 + 1 / 0.125 = 9: from call 10); against it, its warm call
    # (0.54) is no faster than eager's: it may never overtake.
    assert picks.overtakes_within(eager, near, 1.5, 1.2) == (10, None)
    assert picks.overtakes_within(eager, quick, 1.0, 1.0) == (7, 7)  # one session: one call
    p = picks.Pick("tall", "question", 10, "torch", ("quick",), ("eager",), 7,
                   {"eager": eager, "quick": quick}, (), 1.5, 1.2)  # fmt: skip
    assert p.overtakes_range == (4, 11)


def test_a_slower_row_leaves_the_pick(reference, sessions):
    i = at(reference, "torch", "steps-compiled-pathwise", paths=picks.QUESTION_N)
    row = reference.loc[i]
    edit(reference, i, warm_median_s=row["warm_median_s"] * 10,
         warm_min_s=row["warm_median_s"] * 9, ratio_median=row["ratio_median"] * 10,
         ratio_lo=row["ratio_median"] * 9, ratio_hi=row["ratio_median"] * 11)  # fmt: skip
    p = picks.compute(reference, margins.measure(reference, sessions)).get(
        "tall", "torch", "question"
    )
    assert set(p.repeated) == {"steps-compiled-carry", "steps-segmented-carry"}
