"""Results as a pandas DataFrame: one loader, every column's type declared.

Numbers are nullable (``Int64``, ``float64`` with NaN where a case did not get that far), the
status is a categorical over ``constants.STATUSES`` and ``hwm_reset`` a nullable boolean; the
rest are strings (``target`` says what was measured: strategy, simulation, limit, second,
callable or shapes). Columns derived for the chapters: ``form`` (how the simulation a strategy
or simulation row runs is written: array or steps; blank for other targets), ``peak`` (the
larger of the cold and warm peaks, absolute), ``peak_over_inputs`` (that peak over the
resident memory before the first call), ``overhead_bound`` (a warm call under OVERHEAD_S:
per-call overhead, not arithmetic, decides its time, so it is no ground for a ranking) and,
for the GBM's strategies, one baseline for comparisons across strategies:
``fastest_simulation_s`` (the warm median of the framework's fastest whole-array simulation
given the same normals at the same N, dtype and allocator on the same machine: no blocked one,
which draws its own) and ``ratio_to_fastest_simulation`` (the warm median over it). The metadata
sidecar is ``df.attrs["meta"]`` and the file ``df.attrs["path"]``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from jacbench.constants import STATUSES
from jacbench.measure import store, targets
from jacbench.measure.dataset import Dataset
from jacbench.strategies import catalog, registry

STATUS = pd.CategoricalDtype(list(STATUSES))
# A warm call shorter than this is mostly the framework's per-call overhead (dispatch, Python,
# allocation): measured, but not ranked by.
OVERHEAD_S = 1e-3
# env: the machine (report.machines); a ratio never divides one machine's time by another's.
_SAME = ["framework", "paths", "dtype", "allocator", "device", "env"]
# What a blank cell of a column means: a file written before the device column ran on the CPU.
BLANK_MEANS = {"device": "cpu"}


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
        # A key found twice (two sweeps wrote the file at once): its last row, as store reads.
        last = df.drop_duplicates("key", keep="last")
        store.note_repeats(path, len(df) - len(last))
        df = last
        # A file written before some columns existed (store.older): they read as blank.
        df = df.reindex(columns=store.COLUMNS, fill_value="")
        df = df.replace("", pd.NA).fillna(BLANK_MEANS)
        df = df.astype({c: t for c, t in types.items() if c not in ("status", "hwm_reset")})
        df["status"] = df["status"].astype(STATUS)
        df["hwm_reset"] = df["hwm_reset"].map({"True": True, "False": False}).astype("boolean")
    df = df.reset_index(drop=True)
    df["peak"] = df[["cold_peak", "warm_peak"]].max(axis=1, skipna=True)
    df["peak_over_inputs"] = (df["peak"] - df["cold_rss_before"]).clip(lower=0)
    quick = (df["warm_median_s"] < OVERHEAD_S).astype("boolean")
    df["overhead_bound"] = quick.mask(df["warm_median_s"].isna())  # no time: neither
    df["form"] = pd.Series([_form(f, s) for f, s in zip(df["framework"], df["strategy"],
                                                          strict=True)], index=df.index,
                           dtype="string")  # fmt: skip
    df = _fastest_simulation(df)
    df.attrs["path"] = str(path)
    df.attrs["meta"] = Meta(Dataset(path).metadata)
    return df


class Meta(dict):
    """The metadata sidecar as a frame carries it: read-only, and shared by the frames derived
    from it instead of copied. pandas deep-copies a frame's attrs into every frame an operation
    returns: 21,707 times in the GBM chapter, 0.7 s of its 14 s."""

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):  # pickled as a dict's items, not put back item by item
        return (Meta, (dict(self),))

    def _read_only(self, *args, **kwargs):
        raise TypeError("the results' metadata is read-only")

    __setitem__ = __delitem__ = __ior__ = _read_only
    clear = pop = popitem = setdefault = update = _read_only


def _form(framework: str, strategy: str) -> str:
    """How the simulation a strategy or simulation row runs is written (registry.FORMS), ""
    for any other target."""
    target = targets.parse(framework, strategy)
    if target.kind == "strategy":
        return target.record.form
    return catalog.form_of(target.name) if target.kind == "simulation" else ""


def _same_normals(framework: str, strategy: str) -> bool:
    """Whether a simulation row is a whole-array one given the case's normals (not blocked:
    those draw them, nor one of those that draw their own, strategies.draws). The loops over
    the steps have their own chapter, measured against the machine's limit."""
    target = targets.parse(framework, strategy)
    return target.kind == "simulation" and target.name in [
        e for e in registry.executions(framework)
        if not registry.is_blocked(e) and catalog.form_of(e) == "array"
    ]  # fmt: skip


def _fastest_simulation(df: pd.DataFrame) -> pd.DataFrame:
    """Add fastest_simulation_s and ratio_to_fastest_simulation (see the module's docstring)."""
    sims = df[(df["problem"] == "gbm") & (df["target"] == "simulation") & (df["status"] == "ok")]
    same = [_same_normals(f, s) for f, s in zip(sims["framework"], sims["strategy"], strict=True)]
    sims = sims[pd.Series(same, index=sims.index, dtype=bool)]
    fastest = (
        sims.groupby(_SAME, dropna=False)["warm_median_s"]
        .min()
        .rename("fastest_simulation_s")
        .reset_index()
    )
    out = df.merge(fastest, on=_SAME, how="left")
    out.index = df.index
    strategy = (out["problem"] == "gbm") & (out["target"] == "strategy")
    out.loc[~strategy, "fastest_simulation_s"] = float("nan")
    out["fastest_simulation_s"] = out["fastest_simulation_s"].astype("float64")
    out["ratio_to_fastest_simulation"] = out["warm_median_s"] / out["fastest_simulation_s"]
    out.attrs = df.attrs
    return out


def records(df: pd.DataFrame) -> list[dict]:
    """The rows as dicts with plain Python values, None where a cell is empty."""
    plain = df.astype(object).where(df.notna(), None)
    return plain.to_dict("records")
