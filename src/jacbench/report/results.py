"""Reading sweep results for the book: typed rows, selections, fits and summary tables."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from jacbench.measure import store
from jacbench.measure.targets import SimulationTarget


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
        rows, wide = [], []
        for r in store.typed_rows(path):  # UsageError if it is not a results file
            gbm = r.get("problem", "gbm") in ("gbm", "") and r.get("target") != "second"
            (rows if gbm else wide).append(r)
        return cls(path, rows, store.read_meta(path), wide)

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
        """The simulation baseline's own row (its time and memory)."""
        name = SimulationTarget(framework, execution).text
        return self.one(framework=framework, strategy=name, paths=paths, status="ok", **where)

    @staticmethod
    def ratio_to_simulation(row: dict) -> float | None:
        """A strategy's time over its simulation's in the same execution mode: the median of
        calls timed in pairs, side by side in the same worker (None if not measured)."""
        return row.get("ratio_median") if row["status"] == "ok" else None

    def sizes(self) -> list[int]:
        return sorted({r["paths"] for r in self.rows})


def ratio_text(row: dict, digits: int = 2) -> str:
    """'2.10× [1.95–2.30]': a strategy's time over its simulation's, measured side by side,
    with its spread (see measure.store); '–' where it was not measured."""
    if row.get("ratio_median") is None or row["status"] != "ok":
        return "–"
    lo, hi = row["ratio_lo"], row["ratio_hi"]
    return f"{row['ratio_median']:.{digits}f}× [{lo:.{digits}f}–{hi:.{digits}f}]"


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
