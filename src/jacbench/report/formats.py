"""How numbers read in the book: times, bytes, ratios, and what became of a case."""

from __future__ import annotations

import pandas as pd

NOT_MEASURED = "not measured in this profile"


def missing(x) -> bool:
    """Whether a value is absent: None, NaN or pandas' NA."""
    return x is None or (not isinstance(x, str | pd.Series | pd.DataFrame) and bool(pd.isna(x)))


def time(seconds) -> str:
    """'340 µs', '12.5 ms', '3.21 s'; '–' where there is no time."""
    if missing(seconds):
        return "–"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


def duration(seconds) -> str:
    """time() below a minute, then '4 min 10 s': how long something ran; '–' where it has no
    time."""
    if missing(seconds) or seconds < 60:
        return time(seconds)
    minutes, rest = divmod(round(float(seconds)), 60)
    return f"{minutes} min {rest} s"


def size(n) -> str:
    """Bytes in binary units: '1.6 GiB'; '–' where there is no figure."""
    if missing(n):
        return "–"
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:.0f} B"


def count(n) -> str:
    """An integer with thousands separators: '10,000'."""
    return "–" if missing(n) else f"{int(n):,}"


def error(x) -> str:
    """A relative error: '1.2e-07'; '–' where there is none."""
    return "–" if missing(x) else f"{x:.1e}"


def span(values, fmt) -> str:
    """The smallest and largest of values as fmt prints them: 'a to b', or 'a' where the two
    print the same."""
    lo, hi = fmt(min(values)), fmt(max(values))
    return lo if lo == hi else f"{lo} to {hi}"


def times(x, digits: int = 1) -> str:
    """A ratio: '2.1×'; '–' where there is none."""
    return "–" if missing(x) else f"{x:.{digits}f}×"


def ratio_with_spread(row: pd.Series | None, digits: int = 2) -> str:
    """'2.10× [1.95–2.30]': a strategy's time over its simulation's, measured side by side,
    with its spread (see measure.store); '–' where it was not measured."""
    if row is None or row["status"] != "ok" or missing(row["ratio_median"]):
        return "–"
    lo, hi = row["ratio_lo"], row["ratio_hi"]
    return f"{row['ratio_median']:.{digits}f}× [{lo:.{digits}f}–{hi:.{digits}f}]"


def outcome(row: pd.Series | None) -> str:
    """A short phrase for a row: its warm time if ok, else what stopped it."""
    if row is None:
        return NOT_MEASURED
    status = row["status"]
    if status == "ok":
        return time(row["warm_median_s"])
    if status == "skipped-predicted":
        return f"skipped (needs {size(row['predicted_peak'])})"
    if status == "memory-cap":
        return f"memory cap ({size(row['mem_cap'])})"
    if status == "timeout":
        return f"timeout ({row['timeout']:.0f} s)"
    return "error"


def listing(items: list[str]) -> str:
    """Items as a sentence lists them: 'a', 'a and b', 'a, b and c'; '' for none."""
    items = list(items)
    return ", ".join(items[:-1]) + f" and {items[-1]}" if len(items) > 1 else "".join(items)


def fold(x: float) -> str:
    """A factor as prose writes it: '1,233×' from ten up, '8.5×' below."""
    return f"{x:,.0f}×" if x >= 10 else f"{x:.1f}×"


def decimal(x) -> str:
    """A count that need not be whole, one decimal: '6.6'; '–' where there is none."""
    return "–" if missing(x) else f"{x:.1f}"


def percent(x) -> str:
    """A share as a whole percentage: '98%'; '–' where there is none."""
    return "–" if missing(x) else f"{x:.0%}"


def calls(span) -> str:
    """A break-even's range of calls (picks.overtakes_within): "4 to 11", "10 on or never"
    where it may never come, the one call where both ends agree."""
    if span is None or missing(span[0]):
        return "–"
    low, high = span
    if high is None:
        return f"{low:,} on or never"
    return f"{low:,}" if low == high else f"{low:,} to {high:,}"
