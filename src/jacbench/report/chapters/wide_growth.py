"""How the wide chapter's times grow with n (chapter 5): log-log slopes between consecutive sizes
at which each method ran, set beside the growth of its arithmetic, and the page faults of a warm
call that come with growth beyond it."""

from __future__ import annotations

import pandas as pd

from jacbench.report import formats, queries

SLOPES = ["framework", "strategy", "lo", "hi", "slope", "lo_faults", "hi_faults"]
# A slope within this of the arithmetic's power is read as growing like the arithmetic.
CLOSE = 0.15
# A warm call at the larger size faults at least this many times more than any at the smaller.
FAULTS_JUMP = 10


def span_slopes(rows: pd.DataFrame, last_only: bool = False) -> pd.DataFrame:
    """For each method (framework and strategy) and each two consecutive n at which it ran
    correctly, the log-log slope of its warm time between them and its page faults per warm call
    at each; only each method's two largest n where last_only."""
    out = []
    for (fw, name), g in rows[rows["status"] == "ok"].groupby(["framework", "strategy"]):
        g = g.dropna(subset=["inputs", "warm_median_s"]).sort_values("inputs")
        pairs = list(zip(g.iloc[:-1].itertuples(), g.iloc[1:].itertuples(), strict=True))
        for a, b in pairs[-1:] if last_only else pairs:
            slope = queries.loglog_slope([a.inputs, b.inputs], [a.warm_median_s, b.warm_median_s])
            out.append([fw, name, int(a.inputs), int(b.inputs), slope, a.warm_faults,
                        b.warm_faults])  # fmt: skip
    slopes = pd.DataFrame(out, columns=SLOPES)
    slopes[["slope", "lo_faults", "hi_faults"]] = slopes[
        ["slope", "lo_faults", "hi_faults"]
    ].astype(float)
    return slopes


def _power(lo: float, hi: float) -> str:
    return f"n^{lo:.2f}" if f"{lo:.2f}" == f"{hi:.2f}" else f"n^{lo:.2f} to n^{hi:.2f}"


def spans_said(slopes: pd.DataFrame) -> str:
    """The range of slopes over each span of n, smallest n first: 'n^0.11 to n^1.39 from
    n = 300 to 1,000 and n^1.14 to n^3.70 from 1,000 to 3,000'; '' where there is none."""
    said = []
    for (lo, hi), g in slopes.groupby(["lo", "hi"], sort=True):
        where = f"from n = {lo:,} to {hi:,}" if not said else f"from {lo:,} to {hi:,}"
        said.append(f"{_power(g['slope'].min(), g['slope'].max())} {where}")
    return formats.listing(said)


def faults_said(slopes: pd.DataFrame, power: float) -> str:
    """Where the methods that grow faster than their arithmetic (power) by more than CLOSE
    between two sizes each fault at least FAULTS_JUMP times more per warm call at the larger
    than at the smaller: those page faults, at the largest such span ('a warm call of those at
    n = 10,000,000 takes 39,064 to 410,159 page faults, at 1,000,000 at most 6,804'); '' where
    they do not."""
    steep = slopes[slopes["slope"] > power + CLOSE].dropna(subset=["lo_faults", "hi_faults"])
    for lo, hi in sorted(set(zip(steep["lo"], steep["hi"], strict=True)), reverse=True):
        span = steep[(steep["lo"] == lo) & (steep["hi"] == hi)]
        if (span["hi_faults"] >= FAULTS_JUMP * span["lo_faults"].clip(lower=1)).all():
            return (
                f"a warm call of those at n = {hi:,} takes "
                f"{formats.span(span['hi_faults'].round(), formats.count)} page faults, at "
                f"{lo:,} at most {formats.count(round(span['lo_faults'].max()))}"
            )
    return ""


def against_arithmetic(slopes: pd.DataFrame, power: float) -> str:
    """The slopes read against the arithmetic's power: where some grow more slowly than it, a
    per-call cost that does not grow with n still counts; where some grow faster, the excess is
    not arithmetic (with faults_said's page faults where they come with it)."""
    if slopes.empty:
        return ""
    said = []
    if (slopes["slope"] < power - CLOSE).any():
        said.append("where they grow more slowly than the arithmetic, a cost per call that does "
                    "not grow with n still counts")  # fmt: skip
    if (slopes["slope"] > power + CLOSE).any():
        faults = faults_said(slopes, power)
        where = "where faster" if said else "where they grow faster than the arithmetic"
        said.append(f"{where}, the excess is not arithmetic"
                    + (f", and comes with page faults: {faults}" if faults else ""))  # fmt: skip
    return "; ".join(said)


def growth(slopes: pd.DataFrame, power: float, what: str) -> str:
    """What the arithmetic grows as and what the times did: 'In arithmetic the dense Hessians
    grow as n^2; measured, as n^0.11 to n^1.39 from n = 300 to 1,000 ...; where ...'. Says so
    where no method ran at two sizes."""
    said = f"In arithmetic {what} grow as {'n' if power == 1 else f'n^{power:g}'}"
    if slopes.empty:
        return f"{said}; none ran at two sizes here, so their growth is not measured."
    said += f"; measured, as {spans_said(slopes)}"
    reading = against_arithmetic(slopes, power)
    return f"{said}; {reading}." if reading else f"{said}."
