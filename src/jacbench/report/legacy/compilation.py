"""The price of compilation (chapter 4): each compiled variant's compile cost, and from which
call it beats the same differentiation run eagerly."""

from __future__ import annotations

import math

import pandas as pd

from jacbench.constants import FRAMEWORK_NAMES
from jacbench.report import formats, queries
from jacbench.strategies import registry


def break_even(cold_c: float, warm_c: float, cold_e: float, warm_e: float) -> int | None:
    """The first number of calls n at which the compiled variant's total time is below the
    eager one's: cold_c + (n-1) warm_c < cold_e + (n-1) warm_e. 1 means from the first call;
    None means never (its warm call is not faster and its first call not either)."""
    if cold_c < cold_e:
        return 1
    if warm_c >= warm_e:
        return None

    def ahead(n: int) -> bool:
        return cold_c + (n - 1) * warm_c < cold_e + (n - 1) * warm_e

    n = max(2, math.floor((cold_c - cold_e) / (warm_e - warm_c)) + 2)
    while n > 2 and ahead(n - 1):  # the formula's rounding, settled by the definition itself
        n -= 1
    while not ahead(n):
        n += 1
    return n


def compile_cost(row) -> tuple[float, bool]:
    """The compile cost of a row: its first call over its fastest warm call (never negative),
    and whether it is within noise, i.e. the first call is no slower than the slowest warm
    call (then the compile is too cheap to tell from the warm calls' own spread)."""
    cost = max(row["cold_s"] - row["warm_min_s"], 0.0)
    return cost, bool(row["cold_s"] <= row["warm_max_s"])


def compile_cell(price: dict) -> str:
    """The compile cost in a table cell or a sentence: '2.3 s', 'within noise (0.4 ms)', or
    'within noise' alone where the first call was the fastest of all."""
    cost = formats.time(price["compile"])
    if not price["compile_within_noise"]:
        return cost
    return f"within noise ({cost})" if price["compile"] > 0 else "within noise"


def compile_prices(df: pd.DataFrame, paths: int) -> list[dict]:
    """Each compiled GBM variant against its eager counterpart at N = paths and at the largest N
    both ran (JAX: the largest it ran): first and warm calls of each, the compile cost (the
    first call over the fastest warm call, see compile_cost) and the break-even call. Sizes
    where the variant did not run are left out."""
    out = []
    for fw in registry.FRAMEWORKS:
        for name, eager in registry.compiled_variants(fw):
            largest = queries.largest_common(df, fw, [name] + ([eager] if eager else []))
            for n in dict.fromkeys(n for n in (paths, largest) if n is not None):
                found = queries.gbm(df, framework=fw, paths=n, status="ok")
                c = queries.one(found, strategy=name)
                e = queries.one(found, strategy=eager) if eager else None
                if c is None:
                    continue
                both = e is not None
                cost, within_noise = compile_cost(c)
                out.append({
                    "framework": fw, "strategy": name, "eager": eager, "paths": n,
                    "cold": c["cold_s"], "warm": c["warm_median_s"],
                    "compile": cost, "compile_within_noise": within_noise,
                    "eager_cold": e["cold_s"] if both else None,
                    "eager_warm": e["warm_median_s"] if both else None,
                    "break_even": break_even(c["cold_s"], c["warm_median_s"], e["cold_s"],
                                             e["warm_median_s"]) if both else None,
                })  # fmt: skip
    return out


def beats_eager(price: dict) -> str:
    """When a compiled variant beats its eager counterpart: 'never', 'from the first call',
    'from call 35,052'."""
    n = price["break_even"]
    return "never" if n is None else "from the first call" if n == 1 else f"from call {n:,}"


def break_even_cell(price: dict) -> str:
    """The break-even call in a table cell: '35,052', 'never', 'no eager variant'."""
    if price["eager"] is None:
        return "no eager variant"
    return "never" if price["break_even"] is None else f"{price['break_even']:,}"


def time_pair(a: float | None, b: float | None) -> str:
    """'2.46 s / 6.5 ms', each time kept on one line; the first alone where b is missing."""
    a, b = (formats.time(t).replace(" ", "\u00a0") for t in (a, b))
    return a if b == "–" else f"{a} / {b}"


def compile_extremes(prices: list[dict], paths: int) -> tuple[dict | None, dict | None]:
    """The cheapest and the dearest compile at N (the first of equals), or None where no
    variant was priced there."""
    at = [p for p in prices if p["paths"] == paths]
    return (min(at, key=lambda p: p["compile"], default=None),
            max(at, key=lambda p: p["compile"], default=None))  # fmt: skip


def overtakes(prices: list[dict], framework: str, strategy: str) -> str | None:
    """When a compiled variant beats its eager twin at each size it was priced: 'from call
    35,052 at N = 1,000 and never at N = 1,000,000'; None where it was not priced beside it."""
    said = [f"{beats_eager(p)} at N = {formats.count(p['paths'])}" for p in prices
            if (p["framework"], p["strategy"]) == (framework, strategy) and p["eager"]]  # fmt: skip
    return " and ".join(said) or None


def payback_sentence(prices: list[dict]) -> str:
    """Whether compiling pays, size by size, from the break-even calls of the variants priced
    beside an eager counterpart: 'At N = 1,000 a compiled variant overtakes its eager
    counterparts from call 7 to call 4,498; at N = 1,000,000 ... from the first or second
    call.', with the variants that never do counted; the size is left out where none was priced."""
    sizes = sorted({p["paths"] for p in prices if p["eager"]})
    if not sizes:
        return "Whether compiling pays was not measured in this build."
    parts = []
    for n in sizes:
        calls = [p["break_even"] for p in prices if p["paths"] == n and p["eager"]]
        paid = [c for c in calls if c is not None]
        said = f"at N = {formats.count(n)} "
        if not paid:
            said += "no compiled variant overtakes its eager counterpart"
        else:
            said += f"compiled variants overtake their eager counterparts {_calls(paid)}"
        if paid and len(paid) < len(calls):
            said += f" ({len(calls) - len(paid)} of the {len(calls)} never do)"
        parts.append(said)
    text = "; ".join(parts)
    return f"Whether a compiled variant is worth its compile depends on N: {text}."


def _calls(paid: list[int]) -> str:
    """'from the first call', 'from the first or second call', 'from call 50', 'from call 7 to
    call 4,498'."""
    lo, hi = min(paid), max(paid)
    if hi <= 2:
        return "from the first call" if hi == 1 else "from the first or second call"
    return f"from call {lo:,}" if lo == hi else f"from call {lo:,} to call {hi:,}"


def compiled_reach(df: pd.DataFrame) -> str | None:
    """How far the compiled variants of the frameworks that also run eagerly (PyTorch's and
    TensorFlow's; JAX is jitted throughout) were timed against their simulation, those with an
    eager twin apart from those without one (TensorFlow's tf.function-compiled blocked
    strategies): 'PyTorch's and TensorFlow's compiled strategies that have an eager counterpart
    were timed up to N = 1,000,000, and TensorFlow's blocked-forward-function and
    blocked-pathwise-function, compiled with no eager counterpart, up to N = 10,000,000'; one
    clause where both reach the same N; None where none was timed."""
    timed = queries.gbm(df, status="ok").dropna(subset=["ratio_median"])
    eager_too = [
        fw for fw in registry.FRAMEWORKS if any(e for _, e in registry.compiled_variants(fw))
    ]
    groups = {True: {}, False: {}}  # has an eager twin: {(framework, strategy): largest N}
    for fw in eager_too:
        for name, eager in registry.compiled_variants(fw):
            n = timed.loc[(timed["framework"] == fw) & (timed["strategy"] == name), "paths"]
            if len(n):
                groups[eager is not None][(fw, name)] = int(n.max())
    if not any(groups.values()):
        return None

    def whose(found: dict) -> str:
        names = [FRAMEWORK_NAMES[fw] for fw in dict.fromkeys(fw for fw, _ in found)]
        return formats.listing([f"{n}'s" for n in names[:-1]] + [f"{names[-1]}'s"])

    top = {k: max(v.values()) for k, v in groups.items() if v}
    if len(top) == 1 or top[True] == top[False]:
        reach = formats.count(max(top.values()))
        every = whose(groups[True] | groups[False])
        return f"{every} compiled strategies were timed up to N = {reach}"
    said = (f"{whose(groups[True])} compiled strategies that have an eager counterpart were "
            f"timed up to N = {formats.count(top[True])}")  # fmt: skip
    alone = groups[False]
    names = formats.listing([name for _, name in alone])
    return (f"{said}, and {whose(alone)} {names}, compiled with no eager counterpart, up to "
            f"N = {formats.count(top[False])}")  # fmt: skip
