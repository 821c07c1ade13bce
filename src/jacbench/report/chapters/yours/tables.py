"""The tables of "Your function": one advice's strategies, and the basket's picks by inputs."""

from __future__ import annotations

import pandas as pd

from jacbench.report import formats
from jacbench.report.chapters.yours.facts import Advice, Series


def _mark(adv: Advice, name: str) -> str:
    if name == adv.picked:
        return "pick"
    return "tied" if name in adv.tied else ""


def strategies(adv: Advice) -> pd.DataFrame:
    """Per strategy: its warm time at each size fitted (headed by the size alone, its status
    where it stopped), the prediction at the target (time and peak), and the pick marked;
    first, the function itself where the advice timed it (modes are in the registry's table
    above)."""
    rows = []
    listed = [("the function itself", adv.baseline.rows, None)] if adv.baseline else []
    each = [*listed, *((s.name, s.rows, s) for s in adv.strategies)]
    for name, measured, s in each:
        by_n = {r.n: r for r in measured}
        row = {"strategy": name}
        for n in (n for n in adv.sizes if n >= adv.fit_from):  # where it stopped: its status
            r = by_n.get(n)
            row[f"{n:,}"] = (  # the size alone: the text above says these are warm calls
                formats.time(r.warm_median_s) if r and r.ok else (r.status if r else "–")
            )
        row[f"predicted at {adv.target:,}"] = formats.time(s and s.predicted_s)
        row["peak there"] = formats.size(s and s.predicted_peak_bytes)
        row[""] = _mark(adv, name)
        rows.append(row)
    return pd.DataFrame(rows)


def reasons(adv: Advice) -> pd.DataFrame:
    """Each strategy that did not pass, with why, in the advice's own words."""
    rows = [
        {"strategy": s.name, "status": s.status, "why": s.reason}
        for s in adv.strategies
        if s.status != "ok"
    ]
    return pd.DataFrame(rows, columns=["strategy", "status", "why"])


def series_picks(ser: Series, names: tuple[str, ...]) -> pd.DataFrame:
    """Per number of inputs: the named strategies' warm times at the series' size, the pick at
    the target and those tied with it."""
    rows = []
    for adv in ser.runs:
        row = {"inputs": adv.inputs}
        row.update({name: formats.time(adv.warm(name, ser.n)) for name in names})
        row.update({"pick": adv.picked or "–", "tied with it": ", ".join(adv.tied) or "–"})
        rows.append(row)
    return pd.DataFrame(rows)


def registry(frameworks: tuple[str, ...] = ("torch", "jax", "tensorflow")) -> pd.DataFrame:
    """Every generic strategy of the advice, order 1: framework, name, mode, the call it makes."""
    from jacbench.constants import FRAMEWORK_NAMES
    from jacbench.strategies import generic

    rows = [
        {
            "framework": FRAMEWORK_NAMES[r.framework],
            "strategy": r.name,
            "mode": r.mode,
            "call": r.call,
        }
        for fw in frameworks
        for r in generic.all_records(fw, order=1)
    ]
    return pd.DataFrame(rows)


def check(adv: Advice) -> pd.DataFrame:
    """The pick at the target: what was predicted (with its 95% interval), what was measured
    there, and their ratio."""
    m = adv.measured_at_target
    p = adv.pick
    interval = adv.interval
    return pd.DataFrame(
        [
            {
                "at n = " + f"{m.n:,}": "warm call",
                "predicted": formats.time(p.predicted_s),
                "95% interval": "–"
                if interval is None
                else f"{formats.time(interval[0])} to {formats.time(interval[1])}",
                "measured": formats.time(m.warm_median_s),
                "predicted / measured": f"{m.time_ratio:.2f}",
            },
            {
                "at n = " + f"{m.n:,}": "peak beyond the inputs",
                "predicted": formats.size(p.predicted_peak_bytes),
                "95% interval": "–",
                "measured": formats.size(m.peak_bytes),
                "predicted / measured": f"{m.peak_ratio:.2f}",
            },
        ]
    )


def checked(adv: Advice) -> pd.DataFrame:
    """What --check measured at the target: each strategy's median over its workers, the
    fastest and slowest of them, and which the advice picked from that."""
    found = adv.pick.checked if adv.pick else None
    rows = sorted(found.strategies.items(), key=lambda kv: kv[1].median_s) if found else []
    return pd.DataFrame(
        [
            {
                "strategy": name,
                "predicted": formats.time(adv.strategy(name).predicted_s),
                "measured (median of workers)": formats.time(v.median_s),
                "fastest to slowest worker": f"{formats.time(v.low_s)} to {formats.time(v.high_s)}",
                "": "pick" if name == adv.picked else ("tied" if name in adv.tied else ""),
            }
            for name, v in rows
        ]
    )
