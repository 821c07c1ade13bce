"""One read of the normals (numpy's sum over the steps) as a line on a time panel: the machine's
limit, drawn on the GBM's scaling figures and the limit chapter's."""

from __future__ import annotations

import pandas as pd

from jacbench.measure.targets import LimitTarget
from jacbench.report.data import records
from jacbench.report.queries import where


def read_rows(df: pd.DataFrame, dtype: str = "float32", allocator: str = "glibc") -> list[dict]:
    """The machine's limit for the GBM, one read of the normals (numpy's sum over the steps),
    by N."""
    rows = where(
        df,
        problem="gbm",
        target="limit",
        framework="numpy",
        strategy=LimitTarget("numpy", "read").text,
        dtype=dtype,
        allocator=allocator,
        status="ok",
    )
    return records(rows.sort_values("paths"))


# The machine's limit on every time panel: what one read of the normals takes (not to be
# confused with the cap's and the timeout's lines, drawn where cases failed).
READ_STYLE = {"color": "black", "lw": 1.4, "ls": (0, (5, 2)), "zorder": 3}
READ_LABEL = "one read of the normals"


def read_line(ax, df, dtype: str, allocator: str) -> None:
    """Draw one read of the normals on a time panel, where the rows hold it."""
    rows = read_rows(df, dtype, allocator)
    if rows:
        ax.plot([r["paths"] for r in rows], [r["warm_median_s"] for r in rows], **READ_STYLE)
