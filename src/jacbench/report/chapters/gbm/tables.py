"""Chapter 4's tables: every strategy's cost against one simulation, the blocked strategies, the
price of compilation, and the errors beside the Monte-Carlo standard error."""

from __future__ import annotations

import pandas as pd

from jacbench.constants import FRAMEWORK_NAMES, FRAMEWORKS
from jacbench.report import formats
from jacbench.report.chapters.gbm.compilation import Price
from jacbench.report.chapters.gbm.costs import (
    DEFAULT,
    FORWARD,
    NONE,
    PATHWISE,
    QUESTION,
    REVERSE,
)
from jacbench.report.chapters.gbm.facts import Facts

# A strategy's family as the cost table's "kind" column says it.
KIND = {
    QUESTION: "the question's",
    DEFAULT: "default",
    FORWARD: "forward",
    PATHWISE: "pathwise",
    REVERSE: "reverse",
    NONE: "no AD",
}


def with_spread(ratio: float | None, lo: float | None, hi: float | None) -> str:
    """'2.0× [1.9–2.1]'; from 10× up the ratio alone, a whole number ('1,915×'), where its
    spread changes no reading; '–' unmeasured."""
    if formats.missing(ratio):
        return "–"
    if ratio >= 10:
        return formats.fold(ratio)
    return f"{formats.times(ratio)} [{lo:.1f}–{hi:.1f}]"


def costs(f: Facts) -> pd.DataFrame:
    """Every strategy at the largest N it ran: its time over its own simulation's (side by
    side, with the spread), over its framework's fastest simulation given the same normals, and
    its memory beyond the inputs."""
    cs = f.costs
    return pd.DataFrame(
        {
            "framework": [FRAMEWORK_NAMES[c.framework] for c in cs],
            "strategy": [c.name for c in cs],
            "kind": [KIND[c.family] for c in cs],  # a blocked one says so in its name
            "largest N": [formats.count(c.n) for c in cs],
            "× its simulation of S_T [spread]": [
                with_spread(c.ratio, c.ratio_lo, c.ratio_hi) for c in cs
            ],
            "× fastest": [
                "–" if formats.missing(c.over_fastest) else formats.fold(c.over_fastest) for c in cs
            ],
            "beyond the inputs (× simulation's)": [
                formats.size(c.beyond_inputs)
                + ("" if formats.missing(c.memory_ratio) else f" ({formats.fold(c.memory_ratio)})")
                for c in cs
            ],
        }
    )


def blocked(f: Facts) -> pd.DataFrame:
    """Each blocked strategy at the largest N it ran: its warm call, its time over its blocked
    simulation's, and the whole process's peak there and at the largest N of the strategies on
    the whole path array."""
    bs = f.blocked
    return pd.DataFrame(
        {
            "framework": [FRAMEWORK_NAMES[b.framework] for b in bs],
            "strategy": [b.name for b in bs],
            "largest N": [formats.count(b.n) for b in bs],
            "warm call": [formats.time(b.warm_s) for b in bs],
            "× its simulation of S_T [spread]": [
                with_spread(b.ratio, b.ratio_lo, b.ratio_hi) for b in bs
            ],
            f"peak, N = {formats.count(f.in_memory_n)}": [formats.size(b.peak_before) for b in bs],
            "peak, largest N": [formats.size(b.peak) for b in bs],
        }
    )


def from_call(p: Price) -> str:
    """From which call the compiled form's total time is below the eager form's: a count,
    'tie' where its warm call is not faster beyond the noise, 'never' where it is slower, 'no
    eager variant'."""
    if p.eager is None:
        return "no eager variant"
    if p.overtakes is not None:
        return formats.count(p.overtakes)
    return "tie" if p.warm.tied else "never"


def prices(f: Facts) -> pd.DataFrame:
    """Each compiled strategy at the question's N and at the largest N it ran beside its eager
    form: compile cost, warm calls, and from which call compiling has paid."""
    ps = f.prices
    eager = ["" if p.eager is None else f" / {formats.time(p.eager.warm_s)}" for p in ps]
    return pd.DataFrame(
        {
            "framework": [FRAMEWORK_NAMES[p.framework] for p in ps],
            "compiled": [p.compiled.name for p in ps],
            "eager": [p.eager.name if p.eager else "–" for p in ps],
            "N": [formats.count(p.n) for p in ps],
            "compile cost": ["–" if p.compile_s is None else formats.time(p.compile_s) for p in ps],
            "warm, compiled / eager": [
                formats.time(p.compiled.warm_s) + e for p, e in zip(ps, eager, strict=True)
            ],
            "pays from call": [from_call(p) for p in ps],
        }
    )


def accuracy(f: Facts) -> pd.DataFrame:
    """The largest float32 error of each framework's strategies against the closed form at any
    N, and the Monte-Carlo standard error of an at-the-money call's delta and vega."""
    a = f.accuracy
    rows = [
        (f"{FRAMEWORK_NAMES[fw]}'s strategies, float32", "every N", a.anywhere[fw])
        for fw in FRAMEWORKS
        if fw in a.anywhere
    ]
    n = formats.count(a.se_paths)
    standard = "Monte-Carlo standard error, at-the-money call's"
    rows += [(f"{standard} delta", n, a.se_delta), (f"{standard} vega", n, a.se_vega)]
    return pd.DataFrame(rows, columns=["error", "N", "relative error"]).assign(
        **{"relative error": lambda d: d["relative error"].map(formats.error)}
    )


def _fold(value: float | None) -> str:
    return "–" if formats.missing(value) else formats.fold(value)


def yardsticks(f: Facts) -> pd.DataFrame:
    """Each efficient strategy at the largest N with a path-returning simulation, over the three
    yardsticks of its mode: the simulation returning S_T alone (measured side by side), the one
    returning the whole path and the framework's hand-written pass (each a quotient of two
    measured ratios; '–' where the pass is not of its mode)."""
    ys = f.yardsticks
    return pd.DataFrame(
        {
            "framework": [FRAMEWORK_NAMES[y.framework] for y in ys],
            "mode": [y.execution for y in ys],
            "strategy": [y.name for y in ys],
            "× simulation of S_T": [_fold(y.over_terminal) for y in ys],
            "× simulation of the path": [_fold(y.over_path) for y in ys],
            "× hand-written pass": [_fold(y.over_floor) for y in ys],
        }
    )
