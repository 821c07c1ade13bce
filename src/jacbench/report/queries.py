"""Questions the chapters ask of a results DataFrame (see report.data), answered once.

Every query takes the DataFrame that ``data.load`` returns and leaves it unchanged. A query
for one row returns a ``pandas.Series`` or None where no row answers it; chapters say "not
measured in this profile" for None rather than fail, because a profile (or a reader's own
sweep) may leave any case out.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from jacbench.measure.targets import SimulationTarget, parse
from jacbench.report import formats
from jacbench.strategies import catalog, registry

# The conditions the chapters compare strategies under unless they say otherwise.
BASE = {"dtype": "float32", "allocator": "glibc"}


def where(df: pd.DataFrame, **conditions) -> pd.DataFrame:
    """Rows whose columns equal the given values (a tuple, list or set means any of them)."""
    mask = pd.Series(True, index=df.index)
    for column, value in conditions.items():
        if isinstance(value, tuple | list | set):
            mask &= df[column].isin(list(value)).fillna(False).astype(bool)
        else:
            mask &= (df[column] == value).fillna(False).astype(bool)
    return df[mask]


def gbm(
    df: pd.DataFrame, target: str | tuple = "strategy", form: str | None = "array", **conditions
) -> pd.DataFrame:
    """The GBM Jacobian rows of one kind of target (strategies by default; "simulation" for
    the baselines), of the whole-array form unless another (or None: every form) is given,
    under the base conditions unless others are given, sorted by framework, strategy and N."""
    shaped = {} if form is None else {"form": form}
    rows = where(df, problem="gbm", target=target, **{**BASE, **shaped, **conditions})
    return rows.sort_values(["framework", "strategy", "paths"])


def without_draws(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows less the simulations that measure drawing the random numbers (strategies.draws)
    and those returning the whole path (registry.path_of): neither is the yardstick the
    figures draw (the path-returning ones have chapter 4's table of yardsticks)."""
    names = zip(rows["framework"], rows["strategy"], strict=True)
    drawing = [(t := parse(*n)).kind == "simulation"
               and (catalog.is_draw(t.name) or registry.path_of(t.name) is not None)
               for n in names]  # fmt: skip
    return rows[~pd.Series(drawing, index=rows.index, dtype=bool)]


def wide(df: pd.DataFrame, problem: str = "moments", **conditions) -> pd.DataFrame:
    """Rows of a moments problem (Jacobians and second-order methods), by size."""
    rows = where(df, problem=problem, **{**BASE, **conditions})
    return rows.sort_values(["framework", "strategy", "inputs", "batch", "paths"])


def second_order(
    df: pd.DataFrame, problem: str, kind: str | tuple | None = None, **conditions
) -> pd.DataFrame:
    """The second-order methods' rows of a problem (GBM Greeks, moments Hessians), each with its
    method's own name (``method``) and its kind (``kind``: dense, hvp, diagonal, greeks); kind
    keeps one kind, or any of a tuple."""
    rows = where(df, problem=problem, target="second", **{**BASE, **conditions}).sort_values(
        ["framework", "strategy", "inputs", "batch", "paths"]
    )
    rows = rows.assign(
        method=pd.Series(
            [short_name(r) for _, r in rows.iterrows()], index=rows.index, dtype=object
        ),
        kind=pd.Series([kind_of(r) for _, r in rows.iterrows()], index=rows.index, dtype=object),
    )
    return rows if kind is None else where(rows, kind=kind)


def _first(rows: pd.DataFrame) -> pd.Series | None:
    return rows.iloc[0] if len(rows) else None


def one(df: pd.DataFrame, **conditions) -> pd.Series | None:
    """The first row that meets the conditions, or None."""
    return _first(where(df, **conditions))


def value(row: pd.Series | None, column: str):
    """A row's value in a column, or None where there is no row or no value."""
    if row is None or formats.missing(row[column]):
        return None
    return row[column]


def number(row: pd.Series | None, column: str, ok_only: bool = False) -> float | None:
    """A row's value in a column as a float, or None where there is none (or, with ok_only,
    where the case did not finish): what a chapter's facts hold."""
    if row is None or (ok_only and row["status"] != "ok"):
        return None
    found = value(row, column)
    return None if found is None else float(found)


def fastest(rows: pd.DataFrame) -> pd.Series | None:
    """The correct row with the smallest warm median time (the first of equals), or None."""
    ok = rows[(rows["status"] == "ok").fillna(False).astype(bool)]
    return _first(ok.sort_values("warm_median_s", kind="stable"))


def best(
    df: pd.DataFrame, framework: str, paths: int, candidates_only: bool = True
) -> pd.Series | None:
    """The fastest correct strategy of a framework at N (warm median); by default one that a
    recommendation may pick (the registry's candidates: the question's programs left out)."""
    rows = gbm(df, framework=framework, paths=paths, status="ok")
    return fastest(candidates(rows) if candidates_only else rows)


def candidates(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows whose strategy or method a recommendation may pick (the registry's candidate
    role: not the question's programs, not a loop recording a graph it never uses)."""
    names = zip(rows["framework"], rows["strategy"], strict=True)
    pick = pd.Series([parse(*name).record.candidate for name in names], index=rows.index)
    return rows[pick.astype(bool)]


def simulation(
    df: pd.DataFrame, framework: str, execution: str, paths: int, **conditions
) -> pd.Series | None:
    """The simulation baseline's own row (its time and memory) in one execution mode, under the
    base conditions unless others are given (gbm)."""
    name = SimulationTarget(framework, execution).text
    rows = gbm(df, "simulation", **conditions)
    return one(rows, framework=framework, strategy=name, paths=paths, status="ok")


def simulation_of(df: pd.DataFrame, row: pd.Series, **conditions) -> pd.Series | None:
    """The simulation a strategy's row is compared with: same framework, execution mode, N
    (under the base conditions unless others are given)."""
    execution = parse(row["framework"], row["strategy"]).record.execution
    return simulation(df, row["framework"], execution, int(row["paths"]), **conditions)


def ratio(row: pd.Series | None) -> float | None:
    """A strategy's time over its simulation's in the same execution mode, from calls timed
    side by side in the same workers (None if the row failed or the ratio was not measured)."""
    if row is None or row["status"] != "ok" or pd.isna(row["ratio_median"]):
        return None
    return float(row["ratio_median"])


def largest_common(df: pd.DataFrame, framework: str, strategies: list[str]) -> int | None:
    """The largest N at which every named strategy of a framework ran correctly."""
    sizes = None
    for name in strategies:
        ok = set(gbm(df, framework=framework, strategy=name, status="ok")["paths"].astype(int))
        sizes = ok if sizes is None else sizes & ok
    return max(sizes) if sizes else None


def largest_ok(
    df: pd.DataFrame, framework: str, strategy: str, problem: str = "gbm"
) -> pd.Series | None:
    """A strategy's row at the largest size it ran correctly: N for the GBM, n for the moments
    problems."""
    conditions = {"framework": framework, "strategy": strategy, "status": "ok"}
    rows = gbm(df, **conditions) if problem == "gbm" else wide(df, problem, **conditions)
    return rows.iloc[-1] if len(rows) else None


def loglog_slope(xs, ys) -> float | None:
    """Least-squares slope of log y against log x over positive pairs (None with fewer than two
    distinct x)."""
    pts = [
        (float(x), float(y))
        for x, y in zip(xs, ys, strict=True)
        if pd.notna(x) and pd.notna(y) and x > 0 and y > 0
    ]
    if len({x for x, _ in pts}) < 2:
        return None
    return float(np.polyfit(np.log([p[0] for p in pts]), np.log([p[1] for p in pts]), 1)[0])


def short_name(row: pd.Series) -> str:
    """The row's strategy or method by its own name (no kind prefix)."""
    return parse(row["framework"], row["strategy"]).name


def kind_of(row: pd.Series) -> str:
    """'forward mode', 'reverse mode', or a second-order method's kind."""
    target = parse(row["framework"], row["strategy"])
    if target.kind == "second":
        return target.record.kind
    return target.record.mode + " mode"
