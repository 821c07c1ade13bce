"""Tables the command line prints (Markdown, for a terminal or an issue): a results file at
one N, and the crossover's verdicts. The book's tables are DataFrames made in its notebooks."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from jacbench.errors import UsageError
from jacbench.measure import crossover
from jacbench.report import data, queries
from jacbench.report.formats import error, ratio_with_spread, size, time


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown pipe table."""
    esc = [[str(c).replace("|", "\\|") for c in r] for r in [header, *rows]]
    lines = ["| " + " | ".join(esc[0]) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in esc[1:]]
    return "\n".join(lines) + "\n"


def results_table(path: str | Path, paths: int, allocator: str = "glibc") -> str:
    """Every GBM row of a results file at N paths, as a Markdown table."""
    df = data.load(path)
    # The tall rows: GBM strategies and simulations, and callables (no problem of their own).
    tall = df[df["problem"].fillna("gbm").isin(["gbm"]) & (df["target"] != "second")]
    rows = queries.where(tall, paths=paths, allocator=allocator)
    rows = rows.sort_values(["framework", "strategy", "dtype"])
    if rows.empty:
        raise UsageError(f"no rows at N={paths} under {allocator} in {path}")
    out = []
    for _, r in rows.iterrows():
        ok = r["status"] == "ok"
        message = "" if pd.isna(r["message"]) else r["message"]
        out.append(
            [
                r["framework"],
                r["strategy"],
                r["dtype"],
                r["status"] if ok else f"{r['status']}: {message[:70]}",
                time(r["cold_s"]) if ok else "–",
                time(r["warm_median_s"]) if ok else "–",
                ratio_with_spread(r),
                size(r["peak"]) if ok else "–",
                size(r["peak_over_inputs"]) if ok else "–",
                error(r["max_rel_error"]),
            ]
        )
    header = [
        "framework",
        "strategy",
        "dtype",
        "status",
        "cold",
        "warm median",
        "time / simulation [spread]",
        "peak RSS",
        "peak beyond inputs",
        "max rel. error",
    ]
    return markdown_table(header, out)


def crossover_report(rows: list[dict], frameworks: list[str]) -> str:
    """The crossover's rows (measure.crossover.measure) as a table and, per framework, from
    which shape reverse mode wins: formatting only."""
    table = []
    for r in rows:
        ok = r["status"] == "ok"
        table.append(
            [
                r["framework"],
                r["mode"],
                f"{r['outputs']} x {r['inputs']}",
                r["status"] if ok else f"{r['status']}: {(r['message'] or '')[:60]}",
                time(r["warm_median_s"]) if ok else "–",
                f"{time(r['warm_min_s'])}–{time(r['warm_max_s'])}" if ok else "–",
                error(r["max_rel_error"]),
            ]
        )
    header = [
        "framework",
        "mode",
        "m x n",
        "status",
        "warm median",
        "warm min–max",
        "max rel. error",
    ]
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
            lines.append(
                f"{fw}: forward mode is as fast as reverse mode or faster at the widest "
                "shape measured"
            )
    return "\n".join(lines) + "\n"
