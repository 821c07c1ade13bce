"""Results as a pandas DataFrame: one loader, every column's type declared.

Numbers are nullable (``Int64``, ``float64`` with NaN where a case did not get that far), the
status is a categorical over ``constants.STATUSES`` and ``hwm_reset`` a nullable boolean; the
rest are strings (``target`` says what was measured: strategy, simulation, second, callable
or shapes). Two columns are derived for the chapters: ``peak`` (the larger of the cold and warm
peaks, absolute) and ``peak_over_inputs`` (that peak over the resident memory before the first
call). The metadata sidecar is ``df.attrs["meta"]`` and the file ``df.attrs["path"]``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from jacbench.constants import STATUSES
from jacbench.measure import store

STATUS = pd.CategoricalDtype(list(STATUSES))


def dtypes() -> dict[str, object]:
    """The declared type of every column of a results file."""
    out: dict[str, object] = {c: "string" for c in store.COLUMNS}
    out.update({c: "Int64" for c in store.INT_COLUMNS})
    out.update({c: "float64" for c in store.FLOAT_COLUMNS})
    out["status"] = STATUS
    out["hwm_reset"] = "boolean"
    return out


def load(path: str | Path) -> pd.DataFrame:
    """The rows of a results CSV (UsageError if it is not one), typed, with derived columns."""
    path = Path(path)
    store.check(path)
    types = dtypes()
    if path.stat().st_size == 0:
        df = pd.DataFrame({c: pd.Series(dtype=t) for c, t in types.items()})
    else:
        # Whole rows only: a row cut short by a killed run has too few fields.
        df = pd.read_csv(path, dtype={c: "string" for c in store.COLUMNS}, keep_default_na=False)
        df = df[df["key"].fillna("") != ""]
        df = df.replace("", pd.NA)
        df = df.astype({c: t for c, t in types.items() if c not in ("status", "hwm_reset")})
        df["status"] = df["status"].astype(STATUS)
        df["hwm_reset"] = df["hwm_reset"].map({"True": True, "False": False}).astype("boolean")
    df = df.reset_index(drop=True)
    df["peak"] = df[["cold_peak", "warm_peak"]].max(axis=1, skipna=True)
    df["peak_over_inputs"] = (df["peak"] - df["cold_rss_before"]).clip(lower=0)
    df.attrs["path"] = str(path)
    df.attrs["meta"] = store.read_meta(path)
    return df


def records(df: pd.DataFrame) -> list[dict]:
    """The rows as dicts with plain Python values, None where a cell is empty."""
    plain = df.astype(object).where(df.notna(), None)
    return plain.to_dict("records")
