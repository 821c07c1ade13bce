"""Chapter 7's tables: the picks of each shape, the margins they were made with, the picks
under a memory budget, finite differences beside the picks, and float64 against float32."""

from __future__ import annotations

import pandas as pd

from jacbench.constants import AD_FRAMEWORKS, FRAMEWORK_NAMES
from jacbench.report import formats
from jacbench.report.chapters.recommend.facts import REGIMES, Facts
from jacbench.report.picks import HESSIAN, TALL, WIDE, Pick

# How a table names each regime, and the letter of each shape's size.
WHERE = {
    "question": "the question",
    "in-memory": "largest in memory",
    "blocked": "beyond memory",
    "largest": "largest",
}
LETTER = {TALL: "N"}
# A time's number and unit kept on one line in a narrow column.
NBSP = "\u00a0"
SHAPE = {TALL: "tall, N × 2", WIDE: "wide, 3 × n", HESSIAN: "Hessians, n × n"}


def where(shape: str, regime: str, size: int) -> str:
    """'N = 10,000, the question': a regime's size as a table cell."""
    return f"{LETTER.get(shape, 'n')} = {size:,}, {WHERE[regime]}"


def _from(p: Pick) -> str:
    """The call from which the repeated-call winner has taken less time in all: 1 where it also
    wins the first call, said tied where it is only within the noise of the one that does."""
    if p.overtakes_at is not None:
        span = p.overtakes_range
        within = "" if span is None or span[0] == span[1] else f" ({formats.calls(span)})"
        return f"from call {p.overtakes_at:,}{within}"
    if not p.same:
        return "–"
    return "from call 1" if p.repeated[0] == p.one_call[0] else "from call 1 (first calls tied)"


def picks(f: Facts, shape: str) -> pd.DataFrame:
    """One row per regime and framework: the one-call winners and the fastest first call, the
    repeated-call winners and the fastest later call, and from which call the second wins."""
    rows = []
    for regime in REGIMES[shape]:
        for fw in AD_FRAMEWORKS:
            p = f.pick(shape, regime, fw)
            if p is None:
                continue
            rows.append(
                {
                    "where": where(shape, regime, p.size),
                    "framework": FRAMEWORK_NAMES[fw],
                    "one call": ", ".join(p.one_call),
                    "first call": formats.time(p.entry(p.one_call[0]).cold_s).replace(" ", NBSP),
                    "repeated calls": ", ".join(p.repeated),
                    "later calls": formats.time(p.entry(p.repeated[0]).warm_s).replace(" ", NBSP),
                    "repeated wins": _from(p),
                }
            )
    return pd.DataFrame(rows)


def margins(f: Facts) -> pd.DataFrame:
    """Per framework, how many times larger a quantity must be than another's to rank them."""
    m = f.picks.margins
    return pd.DataFrame(
        {
            "framework": FRAMEWORK_NAMES[fw],
            "two ratios to one simulation": formats.times(m.ratio[fw], 2),
            "two later calls": formats.times(m.warm[fw], 2),
            "two first calls": formats.times(m.cold[fw], 2),
        }
        for fw in AD_FRAMEWORKS
    )


def _fitted(b) -> str:
    if b.fits:
        return ", ".join(f"{n} {formats.size(b.peaks[n]).replace(' ', NBSP)}" for n in b.winners)
    return "none fits" if b.smallest is None else f"none: smallest {formats.size(b.smallest)}"


def budgets(f: Facts) -> pd.DataFrame:
    """Per shape, regime and framework: the repeated-call winners whose peak fits in each
    budget, with their peaks."""
    rows = []
    for shape, regimes in REGIMES.items():
        for regime in regimes:
            for fw in AD_FRAMEWORKS:
                p = f.pick(shape, regime, fw)
                if p is None:
                    continue
                row = {
                    "shape": SHAPE[shape],
                    "where": where(shape, regime, p.size),
                    "framework": FRAMEWORK_NAMES[fw],
                }
                for b in f.budgeted[(shape, regime, fw)]:
                    row[f"within {formats.size(b.budget)}"] = _fitted(b)
                rows.append(row)
    return pd.DataFrame(rows)


def finite_differences(f: Facts) -> pd.DataFrame:
    """Central differences beside each framework's fastest Jacobian at the largest N they ran:
    warm call, the framework's fastest whole-array simulation of the same paths (the quotient's
    denominator, printed), the call over it, largest relative error per path."""
    if f.finite is None:
        return pd.DataFrame()
    rows = []
    for t in (f.finite.finite, *f.finite.picks):
        what = "central differences" if t.framework == "numpy" else t.name
        rows.append(
            {
                "framework": FRAMEWORK_NAMES[t.framework],
                "strategy": what,
                "later calls": formats.time(t.warm_s),
                "fastest whole-array simulation": formats.time(t.warm_s / t.over_simulation),
                "calls over it": formats.times(t.over_simulation, 2),
                "largest error": formats.error(t.error),
            }
        )
    return pd.DataFrame(rows)


def precision(f: Facts) -> pd.DataFrame:
    """Each strategy measured in both precisions: its later calls in each, and the quotient."""
    return pd.DataFrame(
        {
            "framework": FRAMEWORK_NAMES[p.framework],
            "strategy": p.name,
            "N": formats.count(p.paths),
            "float32": formats.time(p.float32_s),
            "float64": formats.time(p.float64_s),
            "float64 over float32": formats.times(p.over),
        }
        for p in f.precision
    )
