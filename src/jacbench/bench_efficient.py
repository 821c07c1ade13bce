"""Benchmark: the efficient strategies (forward mode, pathwise) against the simulation alone.

Each case runs in its own worker process (python -m jacbench.measure.worker), so one case's
memory cannot inflate another's. Prints a Markdown table: warm median time and warm peak memory
over baseline, each as a ratio to the simulation in the same framework and execution mode.

    python -m jacbench.bench_efficient --paths 1000000 --steps 52 [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from jacbench.measure.worker import launch_environment
from jacbench.strategies import registry

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


def measure(spec: dict, timeout: float) -> dict:
    """One case in a fresh worker; a crash or timeout becomes a record with a status."""
    cmd = [sys.executable, "-m", "jacbench.measure.worker", json.dumps(spec)]
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, env=launch_environment(spec)
        )
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "message": f"no result within {timeout:.0f} s"}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        tail = proc.stderr.strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
        return {"status": "error", "message": tail[0]}
    return json.loads(lines[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--paths", type=int, default=1_000_000)
    ap.add_argument("--steps", type=int, default=52)
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--frameworks", default=",".join(EFFICIENT))
    ap.add_argument("--json", help="also write every record to this file")
    args = ap.parse_args(argv)

    params = {"paths": args.paths, "steps": args.steps, "dtype": args.dtype}
    base = {"params": params, "threads": args.threads, "repeats": args.repeats}
    records = []
    print(
        f"N={args.paths} M={args.steps} {args.dtype}, {args.threads} threads; "
        "ratios against the simulation alone in the same execution mode",
        flush=True,
    )
    header = (
        "| framework | strategy | execution | cold s | warm median s | time ratio "
        "| warm peak over inputs MB | memory ratio | max rel. error |"
    )
    print(header + "\n|" + "---|" * 9, flush=True)
    for framework in args.frameworks.split(","):
        sims: dict[str, dict] = {}
        for name in EFFICIENT[framework]:
            strategy = registry.get(framework, name)
            if strategy.execution not in sims:
                spec = {
                    **base,
                    "target": {"framework": framework, "simulation": strategy.execution},
                }
                sims[strategy.execution] = rec = measure(spec, args.timeout)
                rec.update(framework=framework, strategy="simulation", execution=strategy.execution)
                records.append(rec)
                print(_row(rec, None), flush=True)
            spec = {**base, "target": {"framework": framework, "strategy": name}}
            rec = measure(spec, args.timeout)
            rec.update(framework=framework, strategy=name, execution=strategy.execution)
            records.append(rec)
            print(_row(rec, sims[strategy.execution]), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)
    return 0


def _row(rec: dict, sim: dict | None) -> str:
    cells = [rec["framework"], rec["strategy"], rec["execution"]]
    if rec.get("status") != "ok":
        return (
            "| " + " | ".join(cells + [rec.get("status", "?"), rec.get("message", "")[:80]]) + " |"
        )
    mb = rec["warm_peak_over_inputs"] / 2**20
    if sim and sim.get("status") == "ok":
        t_ratio = f"{rec['warm_median_s'] / sim['warm_median_s']:.2f}"
        sim_mem = max(sim["warm_peak_over_inputs"], 1)
        m_ratio = f"{rec['warm_peak_over_inputs'] / sim_mem:.2f}"
    else:
        t_ratio = m_ratio = "1" if sim is None else "n/a"
    err = rec.get("max_rel_error")
    cells += [
        f"{rec['cold_s']:.3f}",
        f"{rec['warm_median_s']:.4f}",
        t_ratio,
        f"{mb:.0f}",
        m_ratio,
        "" if err is None else f"{err:.1e}",
    ]
    return "| " + " | ".join(cells) + " |"


if __name__ == "__main__":
    raise SystemExit(main())
