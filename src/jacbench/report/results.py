"""Reading sweep results for the book: typed rows, selections, fits and summary tables."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from jacbench.measure.sweep import read_rows
from jacbench.strategies import registry

FAILED = ("memory-cap", "timeout", "skipped-predicted", "error")
_INT = (
    "paths",
    "inputs",
    "batch",
    "steps",
    "seed",
    "threads",
    "mem_cap",
    "chunk_size",
    "repeats",
    "warm_n",
)
_FLOAT = (
    "spot",
    "vol",
    "drift",
    "maturity",
    "timeout",
    "import_s",
    "inputs_s",
    "cold_s",
    "warm_median_s",
    "warm_min_s",
    "warm_max_s",
    "max_rel_error",
    "wall_s",
)
_BYTES = (
    "predicted_peak",
    "cold_rss_before",
    "cold_peak",
    "cold_peak_over_baseline",
    "warm_peak",
    "warm_peak_over_baseline",
    "warm_peak_over_inputs",
    "watched_peak_rss",
    "import_peak",
)


def _typed(row: dict[str, str]) -> dict:
    out: dict = dict(row)
    for k in _INT:
        out[k] = int(float(row[k])) if row.get(k) not in (None, "") else None
    for k in _FLOAT + _BYTES:
        out[k] = float(row[k]) if row.get(k) not in (None, "") else None
    out["hwm_reset"] = row.get("hwm_reset") == "True"
    return out


def _matching(rows: list[dict], where: dict) -> list[dict]:
    """Rows whose fields equal the given values (a tuple value means any of them)."""
    out = []
    for r in rows:
        ok = True
        for k, v in where.items():
            ok = r.get(k) in v if isinstance(v, tuple | list | set) else r.get(k) == v
            if not ok:
                break
        if ok:
            out.append(r)
    return out


@dataclass
class Results:
    """All rows of one results CSV and its metadata sidecar.

    ``rows`` holds the GBM Jacobian rows (strategies and simulations), ``wide`` the rest: the
    moments problems' Jacobians and every second-order method (GBM Greeks included).
    """

    path: Path
    rows: list[dict]
    meta: dict
    wide: list[dict] = field(default_factory=list)

    @classmethod
    def load(cls, path: str | Path) -> Results:
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"no results at {path}: run 'jacbench sweep' first")
        meta_path = path.with_suffix(".meta.json")
        meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
        rows, wide = [], []
        for r in read_rows(path):
            r = _typed(r)
            gbm = r.get("problem", "gbm") in ("gbm", "") and r.get("target") != "second"
            (rows if gbm else wide).append(r)
        return cls(path, rows, meta, wide)

    def select(self, **where) -> list[dict]:
        """GBM rows whose fields equal the given values (a tuple value means any of them)."""
        out = _matching(self.rows, where)
        return sorted(out, key=lambda r: (r["framework"], r["strategy"], r["paths"]))

    def select_wide(self, **where) -> list[dict]:
        """Rows of the moments problems and second-order methods, by size."""
        out = _matching(self.wide, where)
        size = lambda r: (r["inputs"] or 0, r["batch"] or 0, r["paths"] or 0)  # noqa: E731
        return sorted(out, key=lambda r: (r["framework"], r["strategy"], *size(r)))

    def one(self, **where) -> dict | None:
        rows = self.select(**where)
        return rows[0] if rows else None

    def simulation(self, framework: str, execution: str, paths: int, **where) -> dict | None:
        return self.one(
            framework=framework, strategy=f"simulation:{execution}", paths=paths, status="ok",
            **where,
        )  # fmt: skip

    def ratio_to_simulation(self, row: dict) -> float | None:
        """Warm median time of a strategy over the simulation's, same framework, execution, N."""
        if row["status"] != "ok" or row["target"] != "strategy":
            return None
        s = registry.get(row["framework"], row["strategy"])
        sim = self.simulation(
            row["framework"], s.execution, row["paths"], dtype=row["dtype"],
            allocator=row["allocator"],
        )  # fmt: skip
        if sim is None or not sim["warm_median_s"]:
            return None
        return row["warm_median_s"] / sim["warm_median_s"]

    def sizes(self) -> list[int]:
        return sorted({r["paths"] for r in self.rows})


def peak_bytes(row: dict) -> float | None:
    """Absolute peak resident memory of a measured case."""
    values = [row.get("cold_peak"), row.get("warm_peak")]
    values = [v for v in values if v]
    return max(values) if values else None


def peak_over_inputs(row: dict) -> float | None:
    """Peak over the resident memory before the first call (inputs and framework excluded)."""
    peak = peak_bytes(row)
    if peak is None or row.get("cold_rss_before") is None:
        return None
    return max(peak - row["cold_rss_before"], 0.0)


def loglog_slope(xs, ys) -> float | None:
    """Least-squares slope of log y against log x (None with fewer than two points)."""
    pts = [(x, y) for x, y in zip(xs, ys, strict=True) if x and y and x > 0 and y > 0]
    if len({x for x, _ in pts}) < 2:
        return None
    lx = np.log([p[0] for p in pts])
    ly = np.log([p[1] for p in pts])
    return float(np.polyfit(lx, ly, 1)[0])


def fmt_time(seconds: float | None) -> str:
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return "–"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


def fmt_bytes(n: float | None) -> str:
    if n is None:
        return "–"
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:.0f} B"


def outcome(row: dict) -> str:
    """A short word for a row: the time if ok, else what stopped it."""
    if row["status"] == "ok":
        return fmt_time(row["warm_median_s"])
    if row["status"] == "skipped-predicted":
        return f"skipped (needs {fmt_bytes(row['predicted_peak'])})"
    if row["status"] == "memory-cap":
        return f"memory cap ({fmt_bytes(row['mem_cap'])})"
    if row["status"] == "timeout":
        return f"timeout ({row['timeout']:.0f} s)"
    return "error"
