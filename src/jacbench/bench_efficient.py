"""Benchmark: the efficient strategies (forward mode, pathwise) against the simulation alone.

Every case goes through the sweep's harness (a fresh capped worker per case, cold and warm
calls, peak memory), and each strategy is timed against its simulation in the same execution
mode side by side: calls in pairs in the same worker, repeated in --ratio-processes workers.
Rows go to a results CSV (resumable; --fresh to measure again) and a Markdown table is printed.

    python -m jacbench.bench_efficient --paths 1e6 --threads 2 --repeats 20 --warm-budget 2
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from jacbench.errors import UsageError
from jacbench.measure import environment, harness, runner, store
from jacbench.measure.case import Case
from jacbench.measure.targets import SimulationTarget
from jacbench.strategies import registry
from jacbench.units import parse_bytes, parse_size

EFFICIENT = {
    "torch": ["jvp", "jacfwd", "functional-forward", "pathwise", "compiled-jvp"],
    "tensorflow": [
        "forward-accumulator",
        "forward-accumulator-function",
        "forward-accumulator-xla",
        "pathwise",
        "pathwise-function",
        "pathwise-xla",
    ],
    "jax": ["jvp", "jacfwd", "pathwise"],
    "numpy": ["analytic"],
}


def cases(frameworks: list[str], **settings) -> list[Case]:
    """Each framework's efficient strategies, each preceded by its simulation baseline."""
    out: list[Case] = []
    for fw in frameworks:
        for name in EFFICIENT[fw]:
            sim = SimulationTarget(fw, registry.get(fw, name).execution).text
            for strategy in (sim, name):
                case = Case(framework=fw, strategy=strategy, **settings)
                if case not in out:
                    out.append(case)
    return out


def table(rows: list[dict]) -> str:
    """Markdown: warm time and the paired ratio to the simulation with its spread, and the
    peak beyond the inputs over the simulation's (from its own row)."""
    sims = {(r["framework"], r["strategy"]): r for r in rows if r["target"] == "simulation"}
    lines = [
        "| framework | strategy | status | cold s | warm median s | time / simulation [spread] "
        "(pairs; by worker) | peak beyond inputs MiB | memory / simulation | max rel. error |",
        "|" + "---|" * 9,
    ]
    for r in rows:
        cells = [r["framework"], r["strategy"], r["status"]]
        if r["status"] != "ok":
            cells += [(r.get("message") or "")[:80]] + [""] * 5
        else:
            mib = float(r["warm_peak_over_inputs"]) / 2**20
            ratio, memory = "", ""
            if r.get("ratio_median") not in (None, ""):
                ratio = (f"{float(r['ratio_median']):.2f} [{float(r['ratio_lo']):.2f}, "
                         f"{float(r['ratio_hi']):.2f}] ({r['ratio_pairs']}; "
                         f"{r['ratio_by_process'].replace(';', ', ')})")  # fmt: skip
                sim = sims.get((r["framework"], _baseline(r)))
                if sim and sim["status"] == "ok":
                    base = max(float(sim["warm_peak_over_inputs"]), 1.0)
                    memory = f"{float(r['warm_peak_over_inputs']) / base:.2f}"
            err = r.get("max_rel_error")
            err = f"{float(err):.1e}" if err not in (None, "") else ""
            cold, warm = f"{float(r['cold_s']):.3f}", f"{float(r['warm_median_s']):.4f}"
            cells += [cold, warm, ratio, f"{mib:.0f}", memory, err]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _baseline(row: dict) -> str:
    return SimulationTarget(
        row["framework"], registry.get(row["framework"], row["strategy"]).execution
    ).text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--paths", default="1e6", help="N paths (default 1e6)")
    ap.add_argument("--steps", default="52")
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--warm-budget", type=float, default=2.0, help="seconds of warm calls")
    ap.add_argument("--ratio-processes", type=int, default=3)
    ap.add_argument("--mem-cap", help="kill a case above this RSS (default: min(8GiB, RAM/2))")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--frameworks", default=",".join(EFFICIENT))
    ap.add_argument("--out", default="results/bench-efficient.csv", help="the results CSV")
    ap.add_argument("--fresh", action="store_true", help="discard the file's rows first")
    args = ap.parse_args(argv)
    try:
        frameworks = [f for f in args.frameworks.split(",") if f]
        for fw in frameworks:
            if fw not in EFFICIENT:
                raise UsageError(f"unknown framework {fw!r}; choose one of: {', '.join(EFFICIENT)}")
        todo = cases(
            frameworks,
            paths=parse_size(args.paths, "--paths"),
            steps=parse_size(args.steps, "--steps"),
            dtype=args.dtype,
            threads=args.threads,
            repeats=args.repeats,
            warm_budget_s=args.warm_budget,
            ratio_processes=args.ratio_processes,
            mem_cap=parse_bytes(args.mem_cap) if args.mem_cap else harness.default_mem_cap(),
            timeout=args.timeout,
        )
        out = runner.run_sweep(todo, Path(args.out), fresh=args.fresh)
    except UsageError as e:
        print(f"bench_efficient: error: {e}", file=sys.stderr)
        return 2
    env = environment.fingerprint(environment.environment())
    by_key = {r["key"]: r for r in store.read_rows(out)}
    print(table([by_key[c.key(env)] for c in todo if c.key(env) in by_key]), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
