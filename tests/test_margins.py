"""The one noise rule (report.margins): margins measured from the sessions, and comparisons."""

import pandas as pd
import pytest

from jacbench.report import data, dataset, margins, queries


@pytest.fixture(scope="module")
def reference():
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / dataset.RESULTS
    return data.load(path), dataset.others(dataset.Dataset(path))


def test_one_session_leaves_every_margin_at_its_default(small):
    m = margins.measure(small, [])
    assert m.sessions == 1 and not m.measured
    for basis in margins.BASES:
        assert set(getattr(m, basis).values()) == {margins.UNMEASURED}


def test_the_reference_margins_are_those_the_book_states(reference):
    """Literal answers: the furthest each framework's quantities moved between the reference's
    session and the two others (the method chapter's table prints them)."""
    df, others = reference
    m = margins.measure(df, others)
    assert m.sessions == 3 and m.measured
    ratio = {"torch": 1.1660, "tensorflow": 1.1201, "jax": 1.1146}
    warm = {"torch": 2.1952, "tensorflow": 2.0486, "jax": 2.4988}
    for fw in ratio:
        assert m.ratio[fw] == pytest.approx(ratio[fw], abs=1e-4), fw
        assert m.warm[fw] == pytest.approx(warm[fw], abs=1e-4), fw


def _row(name, warm, low=None, ratio=None, lo=None, hi=None, cold=1.0, execution="eager"):
    return pd.Series(
        {
            "problem": "moments",
            "framework": "torch",
            "strategy": name,
            "target": "strategy",
            "inputs": 1000,
            "paths": pd.NA,
            "dtype": "float32",
            "allocator": "glibc",
            "warm_median_s": warm,
            "warm_min_s": low if low is not None else warm * 0.95,
            "cold_s": cold,
            "ratio_median": ratio,
            "ratio_lo": lo,
            "ratio_hi": hi,
        }
    )


FLAT = margins.Margins(*(dict.fromkeys(["torch"], 1.3),) * 3, sessions=2)


def test_a_pair_is_ranked_only_beyond_its_margin_and_without_overlap():
    fast = _row("grad-loop", 0.010)
    assert margins.compare(fast, _row("jacrev", 0.020), FLAT).ranked
    assert margins.compare(fast, _row("jacrev", 0.012), FLAT).tied  # 1.2 < 1.3
    # The slower one's fastest call beats the faster one's median: the calls overlap.
    assert margins.compare(fast, _row("jacrev", 0.020, low=0.009), FLAT).tied
    c = margins.compare(_row("jacrev", 0.020), fast, FLAT)
    assert c.faster == ("torch", "grad-loop") and c.factor == pytest.approx(2.0)


def test_two_calls_under_a_millisecond_are_never_ranked():
    c = margins.compare(_row("grad-loop", 0.0001), _row("jacrev", 0.0009), FLAT)
    assert c.overhead and c.tied and c.factor == pytest.approx(9.0)


def test_first_calls_are_compared_for_one_call():
    a, b = _row("grad-loop", 0.010, cold=0.002), _row("jacrev", 0.001, cold=1.0)
    assert margins.compare(a, b, FLAT, "cold").faster == ("torch", "grad-loop")
    assert margins.compare(a, b, FLAT).faster == ("torch", "jacrev")


def test_the_group_holds_the_fastest_and_what_it_does_not_beat():
    rows = pd.DataFrame([_row("a", 0.010), _row("b", 0.011), _row("c", 0.030)])
    rows = rows.assign(status="ok")
    rows["strategy"] = ["grad-loop", "functional-loop", "jacrev"]
    names = [r["strategy"] for r in margins.group(rows, FLAT)]
    assert names == ["grad-loop", "functional-loop"]


def test_two_strategies_timed_against_one_simulation_are_ranked_by_their_ratios(reference):
    """PyTorch's compiled-jvp has the lower warm median at N = 10,000, and both are timed side
    by side against the same compiled simulation. That simulation takes under the floor there,
    so the warm medians rank them; with a simulation of 10 ms their ratios would, and those are
    within the margin."""
    df, others = reference
    m = margins.measure(df, others)
    at = queries.gbm(df, framework="torch", paths=10_000, status="ok")
    jvp, pathwise = (queries.one(at, strategy=s) for s in ("compiled-jvp", "compiled-pathwise"))
    assert jvp["warm_median_s"] < pathwise["warm_median_s"]
    assert max(jvp["pair_baseline_median_s"], pathwise["pair_baseline_median_s"]) < 1e-3
    assert margins.compare(jvp, pathwise, m).basis == "warm"
    jvp, pathwise = jvp.copy(), pathwise.copy()
    jvp["pair_baseline_median_s"] = pathwise["pair_baseline_median_s"] = 0.010
    c = margins.compare(jvp, pathwise, m)
    # Their ratios, 2.206 and 3.094, are 1.403 apart, but their spreads (2.14 to 2.30 and
    # 2.03 to 3.72) meet.
    assert c.basis == "ratio" and c.tied and c.factor == pytest.approx(1.403, abs=1e-3)


# --- the rule with literal answers: nothing below works a margin or a ranking out again -------


def _session(*warm: tuple) -> pd.DataFrame:
    """A made-up session: PyTorch GBM strategies (name, warm median[, N[, side-by-side ratio]]),
    at N = 10^5 unless given; each first call ten times its warm median, each ratio over a
    simulation of the warm median over the ratio."""
    rows = [w + (100_000, float("nan"))[len(w) - 2 :] for w in warm]
    return pd.DataFrame(
        {"problem": "gbm", "framework": "torch", "strategy": name, "target": "strategy",
         "form": "array", "paths": n, "inputs": 0, "batch": 0, "dtype": "float32",
         "allocator": "glibc", "status": "ok", "warm_median_s": s, "cold_s": 10 * s,
         "ratio_median": ratio, "pair_baseline_median_s": s / ratio}
        for name, s, n, ratio in rows
    )  # fmt: skip


def test_two_sessions_whose_quotients_moved_1_1_and_0_9_give_a_margin_of_1_1_over_0_9():
    first = _session(("jacfwd", 0.100), ("pathwise", 0.200))
    other = _session(("jacfwd", 0.110), ("pathwise", 0.180))  # moved 1.1 and 0.9
    m = margins.measure(first, [other])
    assert m.sessions == 2 and m.warm["torch"] == pytest.approx(1.1 / 0.9)
    assert m.cold["torch"] == pytest.approx(1.1 / 0.9)


# (first session, the other, PyTorch's warm margin): each a number worked out by hand.
WARM_MARGINS = {
    "three quotients, 1.0, 1.2 and 0.8: the furthest two apart": (
        [("a", 0.1), ("b", 0.2), ("c", 0.4)], [("a", 0.1), ("b", 0.24), ("c", 0.32)], 1.5),
    "the whole session 1.3x slower: no quotient moved": (
        [("a", 0.1), ("b", 0.2)], [("a", 0.13), ("b", 0.26)], 1.0),
    "a strategy the other session did not measure counts for nothing": (
        [("a", 0.1), ("b", 0.2), ("c", 0.3)], [("a", 0.11), ("b", 0.18)], 1.2222),
    "moves at two sizes are never paired: no pair, the default": (
        [("a", 0.1, 10**5), ("b", 0.2, 10**6)], [("a", 0.11, 10**5), ("b", 0.18, 10**6)], 1.15),
    "two sizes, each with its pair: the larger of the two": (
        [("a", 0.1, 10**5), ("b", 0.1, 10**5), ("a", 1.0, 10**6), ("b", 1.0, 10**6)],
        [("a", 0.1, 10**5), ("b", 0.105, 10**5), ("a", 1.0, 10**6), ("b", 1.3, 10**6)], 1.3),
}  # fmt: skip


@pytest.mark.parametrize("case", list(WARM_MARGINS))
def test_the_warm_margin_is_the_furthest_two_quotients_moved_apart_at_one_size(case):
    first, other, expected = WARM_MARGINS[case]
    m = margins.measure(_session(*first), [_session(*other)])
    assert m.warm["torch"] == pytest.approx(expected, abs=1e-4)
    # Every framework the sessions did not measure takes the largest measured.
    assert m.warm["jax"] == pytest.approx(expected, abs=1e-4)


# (first session, the other, PyTorch's ratio margin): one ratio moving is enough.
RATIO_MARGINS = {
    "2.0 to 2.2 and 3.0 to 2.7: the furthest either moved, 3.0/2.7": (
        [("a", 0.1, 10**5, 2.0), ("b", 0.2, 10**5, 3.0)],
        [("a", 0.1, 10**5, 2.2), ("b", 0.2, 10**5, 2.7)], 1.1111),
    "a ratio alone at its size still moves": (
        [("a", 0.1, 10**5, 2.0)], [("a", 0.1, 10**5, 2.5)], 1.25),
    "a ratio missing in one session is left out": (
        [("a", 0.1, 10**5, 2.0), ("b", 0.2, 10**5, 3.0)],
        [("a", 0.1, 10**5, 2.1), ("b", 0.2, 10**5)], 1.05),
}  # fmt: skip


@pytest.mark.parametrize("case", list(RATIO_MARGINS))
def test_the_ratio_margin_is_the_furthest_one_ratio_moved(case):
    first, other, expected = RATIO_MARGINS[case]
    m = margins.measure(_session(*first), [_session(*other)])
    assert m.ratio["torch"] == pytest.approx(expected, abs=1e-4)


def _spread(value, low=None, high=None, seconds=None):
    return margins.Spread(value, value if low is None else low, value if high is None else high,
                          value if seconds is None else seconds)  # fmt: skip


@pytest.mark.parametrize(
    "faster, slower, margin, ranked",
    [
        (_spread(0.010), _spread(0.020), 1.5, True),  # 2.0 beyond 1.5, spreads apart
        (_spread(0.010), _spread(0.015), 1.5, False),  # exactly at the margin: not beyond it
        (_spread(0.010), _spread(0.0151), 1.5, True),  # just beyond it
        (_spread(0.010, high=0.030), _spread(0.020, low=0.018), 1.5, False),  # spreads meet
        (_spread(0.0002), _spread(0.0009), 1.5, False),  # both under the 1 ms floor
        (_spread(0.0002), _spread(0.0200), 1.5, True),  # one under it, one far above it
    ],
)
def test_the_rule_on_plain_numbers(faster, slower, margin, ranked):
    assert margins.ranks(faster, slower, margin) is ranked


def test_equal_medians_are_ordered_by_name_whatever_the_files_order():
    rows = [_row("jacrev", 0.010), _row("grad-loop", 0.010), _row("jacfwd", 0.030)]
    rows = pd.DataFrame(rows).assign(status="ok")
    for order in (rows, rows.iloc[::-1]):
        assert [r["strategy"] for r in margins.group(order, FLAT)] == ["grad-loop", "jacrev"]


def _wide(*warm: tuple[str, float]) -> pd.DataFrame:
    """A made-up session's wide Jacobians: PyTorch at n = 10^5, each with its warm median."""
    return _session(*warm).assign(problem="moments", form="", paths=0, inputs=100_000)


def test_the_wide_rows_count_at_their_inputs_and_never_pair_with_the_gbms():
    """GBM quotients moved 1.1 and 0.9 (1.222), the wide ones 1.3 and 1.0 (1.3): the margin is
    1.3. Left unread, the wide rows would leave 1.222; paired across problems, 1.3/0.9."""
    first = pd.concat([_session(("jacfwd", 0.100), ("pathwise", 0.200)),
                       _wide(("grad-loop", 0.010), ("jacrev", 0.010))])  # fmt: skip
    other = pd.concat([_session(("jacfwd", 0.110), ("pathwise", 0.180)),
                       _wide(("grad-loop", 0.013), ("jacrev", 0.010))])  # fmt: skip
    m = margins.measure(first, [other])
    assert m.warm["torch"] == pytest.approx(1.3) and m.sizes == (100_000,)


def test_quotients_the_rule_never_ranks_set_no_margin():
    """Two warm calls under the 1 ms floor that moved 1.5 and 0.5 are never ranked against
    each other, so their 3.0 sets no margin; a 10 ms call that moved 1.2 is ranked against the
    one that moved 0.5, and sets 2.4. A ratio over a 2 ms simulation that moved 2x sets none:
    the ratio margin is the 1.1 of the one over a 10 ms simulation."""
    first = _session(("jacfwd", 0.0004), ("jacrev", 0.0004), ("pathwise", 0.010),
                     ("jvp", 0.010), ("hand-fused", 0.020, 100_000, 2.0),
                     ("compiled-jvp", 0.004, 100_000, 2.0))  # fmt: skip
    other = _session(("jacfwd", 0.0006), ("jacrev", 0.0002), ("pathwise", 0.012),
                     ("jvp", 0.010), ("hand-fused", 0.020, 100_000, 2.2),
                     ("compiled-jvp", 0.004, 100_000, 4.0))  # fmt: skip
    m = margins.measure(first, [other])
    assert m.ratio["torch"] == pytest.approx(1.1) and m.warm["torch"] == pytest.approx(2.4)
