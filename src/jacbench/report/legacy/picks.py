"""What to use (chapter 6), the picks: per framework, Jacobian shape and regime (the question's
size, the largest unblocked, the largest where only blocked forms ran), the fastest candidate,
named alone only where the data rank it (its next one's fastest warm call slower than its
median, the medians further apart than the framework's ratios moved between the reference and
another occasion, no call under a millisecond ranked), and the decision table built from
them."""

from __future__ import annotations

import pandas as pd

from jacbench.constants import AD_FRAMEWORKS, FRAMEWORK_NAMES
from jacbench.report import formats, queries
from jacbench.report.legacy import occasions, reproduced
from jacbench.report.legacy.recommend import (
    HESSIAN,
    SHAPES,
    SIZE,
    TALL,
    WIDE,
    against_question,
    answer_rows,
    at_size,
    default_at,
    default_name,
    fitted,
    outcome_at,
    shape_rows,
    within,
)
from jacbench.strategies import registry


def decision_columns(budgets_gib) -> list[str]:
    """The decision table's columns, one per memory budget among them."""
    return (
        ["framework", "Jacobian shape", "where", "fastest there"]
        + [f"fastest within {b:g} GiB" for b in budgets_gib]
        + ["the framework's default"]
        + [f"fastest against the question's program at N = {reproduced.QUESTION_N:,}"]
    )


def decision_table(
    df: pd.DataFrame, cands: pd.DataFrame, budgets_gib, margin_by: dict[str, float] | None = None
) -> pd.DataFrame:
    """Per framework, shape and regime (regimes): the pick there (group_phrase of pick_group
    with the framework's margin), the fastest within each budget, the framework's own call
    and, for the tall Jacobian at the question's N, the fastest against the question's
    program."""
    margin_by = margin_by or {}
    table = []
    for fw in AD_FRAMEWORKS:
        margin = margin_by.get(fw, 1.0)
        for shape in SHAPES:
            rows = shape_rows(cands, fw, shape)
            for regime, n, group in regime_picks(cands, fw, shape, margin):
                there = at_size(rows, n)
                question_size = shape == TALL and n == reproduced.QUESTION_N
                table.append(
                    [FRAMEWORK_NAMES[fw], shape, f"{regime}, {SIZE[shape]} = {n:,}",
                     group_phrase(group, margin)]
                    + [fitted(within(there, b), there) for b in budgets_gib]
                    + [outcome_at(default_at(rows, default_name(fw, shape), n), shape)]
                    + [against_question(df, fw, shape) if question_size else "–"]
                )  # fmt: skip
    return pd.DataFrame(table, columns=decision_columns(budgets_gib))


# --- Picks per regime -------------------------------------------------------------------------

# The second question's n (the wide Jacobian's size it asked about).
QUESTION_INPUTS = 100_000
# The regimes a pick is made in: the question's size, the largest size with the arrays in
# memory (the tall Jacobian's unblocked strategies), and above it the largest where only blocked
# ones ran (named by what was measured: no unblocked strategy need have been tried there).
QUESTION_SIZE, IN_MEMORY, BEYOND, LARGEST = (
    "the question's size",
    "largest unblocked",
    "blocked forms only",
    "largest measured",
)
# At most this many names in one pick; the rest are counted.
MOST_NAMED = 3


def _occasions(others) -> list[pd.DataFrame]:
    """Other occasions as a list: None, one occasion's rows, or several."""
    if others is None:
        return []
    listed = [others] if isinstance(others, pd.DataFrame) else others
    return [o for o in listed if o is not None and not o.empty]


def _moved_tables(first: pd.DataFrame, others) -> list[tuple[int, pd.DataFrame]]:
    """occasions.moved for every other occasion at each of its N where some ratio was measured
    on both: (N, table)."""
    return [item for other in _occasions(others)
            for item in occasions.moved_by_n(first, other).items()]  # fmt: skip


def _margins(tables: list[tuple[int, pd.DataFrame]]) -> dict[str, float]:
    """margins from the moved tables of every other occasion."""
    if not tables:
        return dict.fromkeys(AD_FRAMEWORKS, 1.0)
    moved = pd.concat([t for _, t in tables])
    factor = occasions.factors(moved)
    overall = float(factor.max())
    by = factor.groupby(moved["framework"]).max()
    return {fw: float(by.get(fw, overall)) for fw in AD_FRAMEWORKS}


def margins(first: pd.DataFrame, others) -> dict[str, float]:
    """How many times faster one strategy's warm median must be than another's for the book to
    rank them, per framework: the largest factor by which one of that framework's side-by-side
    ratios moved between the reference and any other occasion (occasions.moved at every N of
    each; others: one occasion's rows or a list of them; any framework's largest for one with
    none there); 1 for every framework with one occasion."""
    return _margins(_moved_tables(first, others))


def margins_basis(first: pd.DataFrame, others) -> str:
    """Where margins come from and where they are applied: 'These margins, how far apart two
    medians must be (PyTorch 1.094×, TensorFlow 1.894×, JAX 1.147×), were measured on the GBM's
    time-over-simulation ratios at N = 1,000,000 on two occasions besides the dataset's, and are
    applied here at every size ...'; with one occasion, that every margin is 1."""
    count = len(_occasions(others))
    if not count:
        return "With one occasion in this build, every margin is 1: the warm calls alone decide."
    tables = _moved_tables(first, others)
    if not tables:
        return "No ratio was measured on both occasions, so every margin is 1."
    by = _margins(tables)
    said = ", ".join(f"{FRAMEWORK_NAMES[fw]} {formats.times(by[fw], 3)}" for fw in AD_FRAMEWORKS)
    sizes = [f"{n:,}" for n in sorted({n for n, _ in tables})]
    at = f"{sizes[0]} only" if len(sizes) == 1 else formats.listing(sizes)
    words = {1: "one occasion", 2: "two occasions", 3: "three occasions"}
    besides = words.get(count, f"{formats.count(count)} occasions")
    return (
        f"These margins, how far apart two medians must be ({said}), are the largest moves of "
        f"the GBM's time-over-simulation ratios, measured at N = {at} on {besides} besides the "
        "dataset's, and are applied here at every size and to the wide Jacobian and the "
        "Hessians as well."
    )


def clearly_faster(a: pd.Series, b: pd.Series, margin: float = 1.0) -> bool:
    """Whether a's warm calls beat b's by more than their noise: not both under a millisecond
    (overhead_bound), b's fastest warm call slower than a's median, and b's median more than
    margin times a's."""
    if _overhead(a) and _overhead(b):
        return False
    fastest = b["warm_min_s"] if not formats.missing(b["warm_min_s"]) else b["warm_median_s"]
    median = a["warm_median_s"]
    return bool(fastest > median and b["warm_median_s"] > margin * median)


def _overhead(row: pd.Series) -> bool:
    value = row.get("overhead_bound")
    return False if formats.missing(value) else bool(value)


def pick_group(rows: pd.DataFrame, margin: float = 1.0) -> list[pd.Series]:
    """The fastest correct row and every other that it does not clearly beat (clearly_faster),
    in order of warm median: one row where the pick is clear, more where it is not; []."""
    ok = rows[(rows["status"] == "ok").fillna(False).astype(bool)]
    ok = ok.sort_values("warm_median_s", kind="stable")
    if ok.empty:
        return []
    first = ok.iloc[0]
    return [first] + [r for _, r in ok.iloc[1:].iterrows() if not clearly_faster(first, r, margin)]


def regimes(rows: pd.DataFrame, shape: str) -> list[tuple[str, int]]:
    """The (regime, size) pairs at which a framework's candidates of a shape are picked, in
    order of size, each size once: for the tall Jacobian the question's N (where anything ran
    there), the largest N where an unblocked strategy ran and, above it, the largest N where
    anything ran (the blocked ones); for the wide Jacobian the question's n and the largest n;
    for Hessians the largest n."""
    ok = rows[(rows["status"] == "ok").fillna(False).astype(bool)]
    if ok.empty:
        return []
    top = int(ok["size"].max())
    found = []
    if shape == TALL:
        if (ok["size"] == reproduced.QUESTION_N).any():
            found.append((QUESTION_SIZE, reproduced.QUESTION_N))
        blocked = [registry.get(fw, s).blocked
                   for fw, s in zip(ok["framework"], ok["strategy"], strict=True)]  # fmt: skip
        unblocked = ok[~pd.Series(blocked, index=ok.index, dtype=bool)]
        if len(unblocked):
            found.append((IN_MEMORY, int(unblocked["size"].max())))
        found.append((BEYOND, top))
    elif shape == WIDE:
        if (ok["size"] == QUESTION_INPUTS).any():
            found.append((QUESTION_SIZE, QUESTION_INPUTS))
        found.append((LARGEST, top))
    else:
        found.append((LARGEST, top))
    out, seen = [], set()
    for regime, n in found:
        if n not in seen:
            seen.add(n)
            out.append((regime, n))
    return out


def _named(row: pd.Series) -> str:
    return f"{row['name']} ({formats.time(row['warm_median_s'])})"


def group_phrase(group: list[pd.Series], margin: float = 1.0) -> str:
    """'compiled-pathwise (1.2 ms)' for a clear pick; where it is not clear, the names within
    reach of the fastest and why they are not ranked: 'pathwise-function (14.11 s) or
    blocked-pathwise-function (14.19 s): within 1.01×, less than the 1.65× ratios moved between
    occasions'; '–' for none."""
    if not group:
        return "–"
    if len(group) == 1:
        return _named(group[0])
    first, last = group[0], group[-1]
    shown = [_named(r) for r in group[:MOST_NAMED]]
    more = len(group) - MOST_NAMED
    names = (
        ", ".join(shown[:-1]) + f" or {shown[-1]}"
        if more <= 0
        else (", ".join(shown) + f" and {more} more")
    )
    spread = last["warm_median_s"] / first["warm_median_s"]
    if all(_overhead(r) for r in group):
        why = "all under a millisecond, where per-call overhead decides"
    elif margin > 1 and spread <= margin:
        # As many digits as tell the two apart (1.886× and 1.890×, not 1.89× and 1.89×).
        digits = 2
        while digits < 4 and formats.times(spread, digits) == formats.times(margin, digits):
            digits += 1
        why = (
            f"within {formats.times(spread, digits)}, less than the "
            f"{formats.times(margin, digits)} this framework's ratios moved between occasions"
        )
    else:
        why = f"within {formats.times(spread, 2)}, their warm calls overlapping"
    return f"{names}: {why}"


def regime_picks(
    cands: pd.DataFrame, framework: str, shape: str, margin: float = 1.0
) -> list[tuple[str, int, list[pd.Series]]]:
    """(regime, size, pick_group there) for each of regimes."""
    rows = shape_rows(cands, framework, shape)
    return [(regime, n, pick_group(at_size(rows, n), margin)) for regime, n in regimes(rows, shape)]


def picks_sentence(cands: pd.DataFrame, shape: str, margin_by: dict[str, float]) -> str:
    """The picks of one shape, regime by regime, every framework in each: 'At the question's
    size (N = 10,000): PyTorch compiled-pathwise (1.2 ms); TensorFlow ... .'"""
    by_regime: dict[tuple[str, int], list[str]] = {}
    for fw in AD_FRAMEWORKS:
        for regime, n, group in regime_picks(cands, fw, shape, margin_by.get(fw, 1.0)):
            said = group_phrase(group, margin_by.get(fw, 1.0))
            by_regime.setdefault((regime, n), []).append(f"{FRAMEWORK_NAMES[fw]}, {said}")
    if not by_regime:
        what = {TALL: "tall Jacobian", WIDE: "wide Jacobian", HESSIAN: "Hessian"}[shape]
        return f"No {what} candidate ran correctly in this build."
    parts = []
    order = (QUESTION_SIZE, IN_MEMORY, BEYOND, LARGEST)
    for (regime, n), said in sorted(
        by_regime.items(), key=lambda kv: (order.index(kv[0][0]), kv[0][1])
    ):
        parts.append(
            f"{regime[0].upper()}{regime[1:]} ({SIZE[shape]} = {n:,}): " + "; ".join(said) + "."
        )
    return " ".join(parts)


def answer_note(
    df: pd.DataFrame, cands: pd.DataFrame, framework: str, role: str, margin: float = 1.0
) -> str:
    """Where the answer code's builder for a role (recommend.ANSWER_ROLES) is not among the
    picks at the size its cost is read at, the pick there: '; at that size the table's pick is
    functional-vectorized (499.6 ms)'; '' where it is among them or did not run."""
    rows, _ = answer_rows(df, framework, role)
    ok = rows[rows["status"] == "ok"]
    if ok.empty:
        return ""
    row = ok.iloc[-1]
    shape = {"hvp": HESSIAN, "wide": WIDE}.get(role, TALL)
    n = int(row["paths" if shape == TALL else "inputs"])
    group = pick_group(at_size(shape_rows(cands, framework, shape), n), margin)
    if not group or queries.short_name(row) in [r["name"] for r in group]:
        return ""
    named = [_named(r) for r in group[:MOST_NAMED]]
    pick = "the table's pick is" if len(named) == 1 else "the table names"
    return f"; at that size {pick} {' or '.join(named)}"
