"""How the wide chapter's times grow with n (chapter 5): log-log slopes between consecutive sizes
at which each method ran, set beside the growth of its arithmetic, what the slopes below it look
like (a cost per call, a cost per input), and the page faults of a warm call at the largest n."""

from __future__ import annotations

import pandas as pd

from jacbench.constants import AD_FRAMEWORKS, FRAMEWORK_NAMES
from jacbench.report import formats, queries
from jacbench.strategies import registry

SLOPES = ["framework", "strategy", "lo", "hi", "slope", "lo_faults", "hi_faults", "lo_s", "hi_s"]
# A slope within this of the arithmetic's power is read as growing like the arithmetic; one
# within this of 0 as not growing, of 1 (where the arithmetic grows faster) as growing as n.
CLOSE = 0.15


def span_slopes(rows: pd.DataFrame, last_only: bool = False) -> pd.DataFrame:
    """For each method (framework and strategy) and each two consecutive n at which it ran
    correctly, the log-log slope of its warm time between them, its page faults per warm call
    and its warm time at each; only each method's two largest n where last_only."""
    out = []
    for (fw, name), g in rows[rows["status"] == "ok"].groupby(["framework", "strategy"]):
        g = g.dropna(subset=["inputs", "warm_median_s"]).sort_values("inputs")
        pairs = list(zip(g.iloc[:-1].itertuples(), g.iloc[1:].itertuples(), strict=True))
        for a, b in pairs[-1:] if last_only else pairs:
            slope = queries.loglog_slope([a.inputs, b.inputs], [a.warm_median_s, b.warm_median_s])
            out.append([fw, name, int(a.inputs), int(b.inputs), slope, a.warm_faults,
                        b.warm_faults, a.warm_median_s, b.warm_median_s])  # fmt: skip
    slopes = pd.DataFrame(out, columns=SLOPES)
    floats = ["slope", "lo_faults", "hi_faults", "lo_s", "hi_s"]
    slopes[floats] = slopes[floats].astype(float)
    return slopes


def _power(power: float) -> str:
    """'n', 'n²': the arithmetic's growth as the book's prose writes it."""
    return "n" if power == 1 else f"n{str(int(power)).translate(SUPERSCRIPT)}"


SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def _values(lo: float, hi: float) -> str:
    return formats.span([lo, hi], "{:.2f}".format)


def _slopes(lo: float, hi: float) -> str:
    """'a log-log slope of 1.00'; 'log-log slopes of 0.88 to 1.70'."""
    one = f"{lo:.2f}" == f"{hi:.2f}"
    return f"{'a log-log slope' if one else 'log-log slopes'} of {_values(lo, hi)}"


def spans_said(slopes: pd.DataFrame) -> str:
    """The range of slopes over each span of n, smallest n first: 'log-log slopes of 0.11 to 1.39
    from n = 300 to 1,000 and of 1.14 to 3.70 from 1,000 to 3,000'; '' where there is none."""
    said = []
    for (lo, hi), g in slopes.groupby(["lo", "hi"], sort=True):
        where = f"from n = {lo:,} to {hi:,}" if not said else f"from {lo:,} to {hi:,}"
        lo_s, hi_s = g["slope"].min(), g["slope"].max()
        said.append(f"{_slopes(lo_s, hi_s) if not said else 'of ' + _values(lo_s, hi_s)} {where}")
    return formats.listing(said)


def _name(framework: str, strategy: str) -> str:
    return f"{FRAMEWORK_NAMES[framework]}'s {strategy.split(':')[-1]}"


def below_said(slopes: pd.DataFrame, power: float) -> str:
    """What the slopes below the arithmetic's look like, method by method: one that barely grows
    over a span (within CLOSE of 0) as a fixed cost per call would, and, where the arithmetic
    grows faster than n, one that grows as n at every span as a fixed cost per input would (with
    its time per input); '' where none does either."""
    said = []
    flat = slopes[slopes["slope"] <= CLOSE]
    for (lo, hi), g in flat.groupby(["lo", "hi"], sort=True):
        names = formats.listing(
            [_name(fw, s) for fw, s in zip(g["framework"], g["strategy"], strict=True)]
        )
        grows = "grows" if len(g) == 1 else "grow"
        said.append(f"{names} barely {grows} from n = {lo:,} to {hi:,}, as a fixed cost per call "
                    "would")  # fmt: skip
    if power > 1 + CLOSE:
        for (fw, name), g in slopes.groupby(["framework", "strategy"], sort=False):
            if len(g) > 1 and ((g["slope"] - 1).abs() <= CLOSE).all():
                per = pd.concat([g["lo_s"] / g["lo"], g["hi_s"] / g["hi"]])
                said.append(f"{_name(fw, name)} grows as n throughout, as a fixed cost per input "
                            f"would ({formats.span(per, formats.time)} per input)")  # fmt: skip
    return "; ".join(said)


def faults_said(slopes: pd.DataFrame) -> str:
    """The page faults of a warm call of every method at the largest n of the slopes, against
    those at the n before it: 'At n = 10,000,000 a warm call of each takes 39,064 to 439,643 page
    faults, more than any took at 1,000,000 (at most 22,828).'; '' where none was counted."""
    slopes = slopes.dropna(subset=["lo_faults", "hi_faults"])
    if slopes.empty:
        return ""
    top = slopes[slopes["hi"] == slopes["hi"].max()]
    hi, lo = int(top["hi"].iloc[0]), int(top["lo"].max())
    before = top[top["lo"] == lo]["lo_faults"]
    faults = formats.span(top["hi_faults"].round(), formats.count)
    said = f"At n = {hi:,} a warm call of each takes {faults} page faults"
    if top["hi_faults"].min() > before.max():
        return (
            f"{said}, more than any took at {lo:,} (at most {formats.count(round(before.max()))})."
        )
    return f"{said}; at {lo:,}, {formats.span(before.round(), formats.count)}."


def against_arithmetic(slopes: pd.DataFrame, power: float) -> str:
    """The slopes read against the arithmetic's power, in sentences: below it, something besides
    the arithmetic takes much of the time (below_said's methods named); above it, the excess is
    not arithmetic, with every method's page faults at the largest n (faults_said)."""
    if slopes.empty:
        return ""
    said = []
    arithmetic = _power(power)
    if (slopes["slope"] < power - CLOSE).any():
        below = below_said(slopes, power)
        said.append(f"Where a slope is below {power:g}, something besides the arithmetic takes "
                    f"much of the time{': ' + below if below else ''}.")  # fmt: skip
    if (slopes["slope"] > power + CLOSE).any():
        said.append(f"Where a slope is above {power:g}, the time grows faster than {arithmetic} "
                    "and the excess is not arithmetic.")  # fmt: skip
        said.append(faults_said(slopes))
    return " ".join(s for s in said if s)


def growth(slopes: pd.DataFrame, power: float, what: str) -> str:
    """What the arithmetic grows as and what the times did: 'In arithmetic the dense Hessians
    grow as n^2, a log-log slope of 2; measured, their slopes are 0.11 to 1.39 from n = 300 to
    1,000 ... Where a slope is below 2, ...'. Says so where no method ran at two sizes."""
    arithmetic = _power(power)
    said = f"In arithmetic {what} grow as {arithmetic}, a log-log slope of {power:g}"
    if slopes.empty:
        return f"{said}; none ran at two sizes here, so their growth is not measured."
    said += f"; measured, they have {spans_said(slopes)}."
    reading = against_arithmetic(slopes, power)
    return f"{said} {reading}" if reading else said


def reverse_growth(df: pd.DataFrame) -> str:
    """How the wide Jacobian's reverse-mode strategies grow between the two largest n at which
    each ran correctly, against their arithmetic, linear in n: 'Between n = 1,000,000 and
    10,000,000 their log-log slopes are 0.88 to 1.70, against the arithmetic's 1. ...' (read by
    against_arithmetic); says so where none ran at two sizes."""
    reverse = {(s.framework, s.name) for fw in AD_FRAMEWORKS
               for s in registry.by_framework(fw, "moments") if s.mode == "reverse"}  # fmt: skip
    rows = queries.wide(df, target="strategy", status="ok")
    rows = rows[[k in reverse for k in zip(rows["framework"], rows["strategy"], strict=True)]]
    slopes = span_slopes(rows, last_only=True)
    if slopes.empty:
        return ("Each reverse-mode strategy ran at one n only in this build, so their growth "
                "is not fitted.")  # fmt: skip
    spans = set(zip(slopes["lo"], slopes["hi"], strict=True))
    if len(spans) == 1:
        ((a, b),) = spans
        where = f"Between n = {a:,} and {b:,}"
    else:
        where = "Between the two largest n each ran"
    said = (f"{where} the reverse-mode strategies have "
            f"{_slopes(slopes['slope'].min(), slopes['slope'].max())}, against the arithmetic's "
            "1.")  # fmt: skip
    reading = against_arithmetic(slopes, 1)
    return f"{said} {reading}" if reading else said


def sizes_said(rows: pd.DataFrame) -> str:
    """The n at which the rows ran correctly, smallest to largest: '300 to 3,000'; NOT_MEASURED
    where none did."""
    ran = rows[rows["status"] == "ok"]["inputs"].dropna()
    return formats.span(ran.astype(int), "{:,}".format) if len(ran) else formats.NOT_MEASURED
