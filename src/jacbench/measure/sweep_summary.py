"""A results file as a plain-text table for a terminal: one line per row, the times and memory a
note quotes (scripts/gpu-sweep prints it at the end of a run).

Run as ``python -m jacbench.measure.sweep_summary RESULTS.csv [--require-ok]``: with
--require-ok it exits with status 1 unless every row is ok (the smoke check of a GPU run).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from jacbench.constants import MIB, PROBLEMS
from jacbench.errors import UsageError
from jacbench.measure import store
from jacbench.problems import SIZE

COLUMNS = ("problem", "framework", "strategy", "size", "device", "status", "warm", "unsynced",
           "x sim", "dev peak", "host +", "error")  # fmt: skip


def _time(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} us"
    return f"{seconds * 1e3:.2f} ms" if seconds < 1 else f"{seconds:.2f} s"


def _size(n: int | None) -> str:
    """10^k as 1e{k}, any other size with thousands separators."""
    n = int(n or 0)
    k = len(str(n)) - 1
    return f"1e{k}" if n >= 10 and n == 10**k else f"{n:,}"


def _mib(value: float | None) -> str:
    return "-" if value is None else f"{value / MIB:,.0f} MiB"


def line(r: dict[str, Any]) -> tuple[str, ...]:
    """One typed row (store.typed_rows) as the table's cells."""
    peaks = [p for p in (r.get("cold_device_peak"), r.get("warm_device_peak")) if p is not None]
    return (
        r["problem"],
        r["framework"],
        r["strategy"],
        _size(r.get(SIZE.get(r["problem"], "paths"))),
        r.get("device") or "cpu",  # blank: the CPU's
        r["status"],
        _time(r.get("warm_median_s")),
        _time(r.get("unsynced_median_s")),
        "-" if r.get("ratio_median") is None else f"{r['ratio_median']:.2f}",
        _mib(max(peaks) if peaks else None),
        _mib(r.get("warm_peak_over_inputs")),
        "-" if r.get("max_rel_error") is None else f"{r['max_rel_error']:.1e}",
    )


def table(path: Path) -> str:
    """Every row of a results file, by problem, framework, strategy and size, aligned, with a
    first line counting the rows by status and, below, the message of each row not ok."""
    rows = store.typed_rows(Path(path))
    order = {p: i for i, p in enumerate(PROBLEMS)}
    rows.sort(key=lambda r: (order.get(r["problem"], 9), r["framework"], r["strategy"],
                             r.get(SIZE.get(r["problem"], "paths")) or 0))  # fmt: skip
    cells = [COLUMNS, *(line(r) for r in rows)]
    widths = [max(len(c[i]) for c in cells) for i in range(len(COLUMNS))]
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    head = f"{path}: {len(rows)} rows (" + ", ".join(f"{v} {k}" for k, v in counts.items()) + ")"
    body = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
            for row in cells]  # fmt: skip
    notes = [f"{r['framework']}/{r['strategy']} {_size(r.get(SIZE.get(r['problem'], 'paths')))}: "
             f"{r['status']}: {(r.get('message') or '')[:200]}"
             for r in rows if r["status"] != "ok"]  # fmt: skip
    return "\n".join([head, *body, *notes])


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0].startswith("-"):
        print("usage: python -m jacbench.measure.sweep_summary RESULTS.csv [--require-ok]",
              file=sys.stderr)  # fmt: skip
        return 2
    try:
        print(table(Path(argv[0])))
        rows = store.read_rows(Path(argv[0]))
    except UsageError as e:
        print(f"jacbench: error: {e}", file=sys.stderr)
        return 2
    if "--require-ok" in argv[1:]:
        bad = [r for r in rows if r["status"] != "ok"]
        if bad or not rows:
            print(f"jacbench: {len(bad)} of {len(rows)} row(s) not ok", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
