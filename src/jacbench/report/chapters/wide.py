"""Wide Jacobians and Hessians (chapter 5): warm ratios and the tall-to-wide crossover's two
sides."""

from __future__ import annotations

import pandas as pd

from jacbench.report import formats


def warm_ratio(slow: pd.Series | None, fast: pd.Series | None) -> str:
    """The first row's warm time over the second's, '3.4×'; NOT_MEASURED where either row is
    missing or did not finish."""
    if slow is None or fast is None or slow["status"] != "ok" or fast["status"] != "ok":
        return formats.NOT_MEASURED
    if formats.missing(slow["warm_median_s"]) or formats.missing(fast["warm_median_s"]):
        return formats.NOT_MEASURED
    return formats.times(slow["warm_median_s"] / fast["warm_median_s"])


def crossover_sides(rows: list[dict]) -> str:
    """On which side of m = n each mode wins, counted over the shapes where both modes ran:
    'reverse mode is faster at 4 of the 4 wide shapes (m < n), forward mode at 3 of the 4 tall
    ones (m > n)'; NOT_MEASURED where no shape has both."""
    by_shape: dict[tuple[int, int], dict[str, float]] = {}
    for r in rows:
        if r.get("status", "ok") == "ok":
            by_shape.setdefault((r["outputs"], r["inputs"]), {})[r["mode"]] = r["warm_median_s"]
    both = {s: t for s, t in by_shape.items() if "forward" in t and "reverse" in t}
    if not both:
        return formats.NOT_MEASURED
    wide = [t["reverse"] < t["forward"] for (m, n), t in both.items() if m < n]
    tall = [t["forward"] < t["reverse"] for (m, n), t in both.items() if m > n]
    return (
        f"reverse mode is faster at {sum(wide)} of the {len(wide)} wide shapes (m < n), "
        f"forward mode at {sum(tall)} of the {len(tall)} tall ones (m > n)"
    )
