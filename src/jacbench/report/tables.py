"""Tables the command line prints: a results file at one N, and the crossover's verdicts."""

from __future__ import annotations

from pathlib import Path

from jacbench.errors import UsageError
from jacbench.measure import crossover
from jacbench.report.publish import markdown_table
from jacbench.report.results import (
    Results,
    fmt_bytes,
    fmt_time,
    peak_bytes,
    peak_over_inputs,
    ratio_text,
)


def results_table(path: str | Path, paths: int, allocator: str = "glibc") -> str:
    """Every GBM row of a results file at N paths, as a Markdown table."""
    res = Results.load(path)
    rows = res.select(paths=paths, allocator=allocator)
    if not rows:
        raise UsageError(f"no rows at N={paths} under {allocator} in {path}")
    out = []
    for r in rows:
        ok = r["status"] == "ok"
        out.append(
            [
                r["framework"],
                r["strategy"],
                r["dtype"],
                r["status"] if ok else f"{r['status']}: {(r['message'] or '')[:70]}",
                fmt_time(r["cold_s"]) if ok else "–",
                fmt_time(r["warm_median_s"]) if ok else "–",
                ratio_text(r),
                fmt_bytes(peak_bytes(r)) if ok else "–",
                fmt_bytes(peak_over_inputs(r)) if ok else "–",
                f"{r['max_rel_error']:.1e}" if r.get("max_rel_error") is not None else "–",
            ]
        )
    header = ["framework", "strategy", "dtype", "status", "cold", "warm median",
              "time / simulation [spread]", "peak RSS", "peak beyond inputs",
              "max rel. error"]  # fmt: skip
    return markdown_table(header, out)


def crossover_report(frameworks: list[str], out: Path | None = None, **settings) -> str:
    """Measure the crossover (see measure.crossover.measure) and report its rows and, per
    framework, from which shape reverse mode wins."""
    rows = crossover.measure(frameworks, out=out, **settings)
    table = []
    for r in rows:
        ok = r["status"] == "ok"
        table.append(
            [r["framework"], r["mode"], f"{r['outputs']} x {r['inputs']}",
             r["status"] if ok else f"{r['status']}: {(r['message'] or '')[:60]}",
             fmt_time(r["warm_median_s"]) if ok else "–",
             f"{fmt_time(r['warm_min_s'])}–{fmt_time(r['warm_max_s'])}" if ok else "–",
             f"{r['max_rel_error']:.1e}" if r["max_rel_error"] is not None else "–"]
        )  # fmt: skip
    header = ["framework", "mode", "m x n", "status", "warm median", "warm min–max",
              "max rel. error"]  # fmt: skip
    lines = [markdown_table(header, table).rstrip("\n")]
    for fw in frameworks:
        mine = [r for r in rows if r["framework"] == fw]
        failed = [r for r in mine if r["status"] != "ok"]
        aspect = crossover.crossover(mine)
        if aspect is not None:
            lines.append(f"{fw}: reverse mode beats forward mode from m / n = {aspect:g} on")
        elif len(failed) == len(mine):
            lines.append(f"{fw}: no verdict, no case finished ({failed[0]['status']})")
        else:
            lines.append(f"{fw}: forward mode is as fast as reverse mode or faster at the widest "
                         "shape measured")  # fmt: skip
    return "\n".join(lines) + "\n"
