"""``jacbench advise``: the book's treatment for a reader's own function.

Every generic strategy (strategies.generic) of the function's framework is measured at a few
sizes in capped workers and checked against the framework's plain reverse loop (advise.run);
each one's time and peak are fitted against n and carried to the reader's size, and the fastest
that fits the memory cap is picked, with those tied with it by the book's noise rule
(advise.fit); the result is ``DIR/advice.json`` with the code to paste (advise.output).
Sits between publish and report: it reads the book's margins (report.margins), and the chapter
"Your function" reads what it writes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from jacbench.advise import batched, fit, output
from jacbench.advise.run import Progress, Request, StrategyRun, finite
from jacbench.constants import FRAMEWORK_NAMES

ADVICE = "advice.json"
CODE = "jacobian.py"
JOURNAL = "rows.jsonl"
# What the probe found of the reference derivative, kept in advice.json's "check".
CHECK = ("reference", "fd_status", "fd_error", "fd_agree", "fd_directions", "fd_step")


def book_margins(framework: str) -> tuple[float, float, int]:
    """The book's margins for warm medians and first calls of the framework (report.margins,
    from the reference dataset and its other sessions), and how many sessions measured them;
    UNMEASURED where the checkout has no reference dataset."""
    from jacbench.report import dataset, margins

    root = Path(__file__).resolve().parents[3]
    results = dataset.results_path(root)
    if not results.exists():
        return margins.UNMEASURED, margins.UNMEASURED, 1
    from jacbench.report import data

    found = margins.measure(data.load(results), dataset.other_sessions(results))
    return found.of("warm", framework), found.of("cold", framework), found.sessions


def _strategy(run: StrategyRun, prediction: fit.Prediction | None) -> dict[str, Any]:
    r = run.record
    out: dict[str, Any] = {
        "name": r.name, "mode": r.mode, "call": r.call, "description": r.description,
        "per_row": r.per_row, "compiled": r.compiled, "reference": r.reference,
        "status": run.status, "reason": run.reason, "rows": run.rows,
        "predicted_s": None, "predicted_cold_s": None, "predicted_peak_bytes": None,
    }  # fmt: skip
    if prediction is not None:
        out.update(
            predicted_s=prediction.warm_s,
            predicted_cold_s=prediction.cold_s,
            predicted_peak_bytes=prediction.peak_bytes,
            predicted_spread=finite(prediction.spread),
            fits={k: f.to_json() for k, f in prediction.fits.items()},
        )
    return out


def decide(req: Request, runs: list[StrategyRun], framework: str) -> dict[str, Any]:
    """Predictions at the target for the strategies that passed, and the pick among them."""
    predictions = {
        run.record.name: fit.predict(run.record.name, run.ok_rows, req.at)
        for run in runs
        if run.status == "ok" and run.ok_rows
    }
    warm_margin, cold_margin, sessions = book_margins(framework)
    from jacbench.report.margins import FLOOR_S

    chosen = fit.pick(list(predictions.values()), req.mem_cap, warm_margin, cold_margin, FLOOR_S)
    margins = {"warm": warm_margin, "cold": cold_margin, "sessions": sessions, "floor_s": FLOOR_S}
    pick = None if chosen is None else output.pick_record(chosen, predictions, req, margins)
    if pick and predictions[pick["strategy"]].measured_s < FLOOR_S:
        pick["overhead"] = True  # its calls measured the framework's overhead, not its growth
    return {
        "strategies": [_strategy(run, predictions.get(run.record.name)) for run in runs],
        "pick": pick,
        "margins": margins,
    }


def advise(req: Request, out: Path, progress: Progress = print) -> dict[str, Any]:
    """Measure, check, predict and pick; write DIR/advice.json, DIR/jacobian.py and the rows
    as they come (DIR/rows.jsonl). UsageError before anything is written for bad input."""
    from jacbench.advise import run as running
    from jacbench.measure import environment

    req.check()
    scratch = running.fresh_reference_dir()
    reference = scratch / "reference.npy"
    try:
        progress(f"checking {req.function} with {req.factory}({min(req.sizes):,})")
        found = running.probe(req, reference)
        running.chosen(req, found["framework"])  # an unknown --strategies name: refused now
        out.mkdir(parents=True, exist_ok=True)
        journal = out / JOURNAL
        journal.unlink(missing_ok=True)
        name = FRAMEWORK_NAMES[found["framework"]]
        progress(
            f"{name}: {found['inputs']:,} inputs, {found['outputs']:,} outputs at "
            f"n={min(req.sizes):,}; measuring at n = "
            + ", ".join(f"{n:,}" for n in sorted(set(req.sizes)))
        )
        runs = running.measure(req, found, reference, progress, journal)
    finally:
        running.cleanup(scratch)
    advice: dict[str, Any] = {
        "function": req.function,
        "factory": req.factory,
        "framework": found["framework"],
        "order": req.order,
        "inputs": found["inputs"],
        "outputs": found["outputs"],
        "rows_of_data": found.get("rows"),
        **batched.fields(found),
        "dtype": found["dtype"],
        "sizes": sorted(set(req.sizes)),
        "target": req.at,
        "mem_cap_bytes": req.mem_cap,
        "timeout_s": req.timeout,
        "threads": req.threads,
        "check": {k: found.get(k) for k in CHECK},
        "environment": environment.environment(),
        "cwd": os.getcwd(),
    }
    advice.update(decide(req, runs, found["framework"]))
    if req.verify and advice["pick"] and req.at not in advice["sizes"]:
        advice["pick"]["measured"] = running.verify(req, found, advice["pick"], progress)
    advice["code"] = output.code(advice) if advice["pick"] else ""
    write(advice, out)
    return advice


def refit(advice: dict[str, Any]) -> dict[str, Any]:
    """The advice's predictions and pick made again from its rows, as this version fits them
    (nothing measured again); the pick's measurement at the target is kept where it measured
    the same strategy, its ratios to the new prediction recomputed."""
    from jacbench.advise.run import StrategyRun
    from jacbench.strategies import generic

    req = Request(advice["function"], advice["factory"], tuple(advice["sizes"]),
                  advice["target"], advice["mem_cap_bytes"], order=advice["order"])  # fmt: skip
    runs = [
        StrategyRun(
            generic.find(advice["framework"], s["name"]), s["status"], s["reason"], s["rows"]
        )  # fmt: skip
        for s in advice["strategies"]
    ]
    measured = (advice.get("pick") or {}).get("measured")
    measured_of = (advice.get("pick") or {}).get("strategy")
    found = {**advice, **decide(req, runs, advice["framework"])}
    if measured and found["pick"] and found["pick"]["strategy"] == measured_of:
        if measured["status"] == "ok":
            measured["time_ratio"] = found["pick"]["predicted_s"] / measured["warm_median_s"]
            peak = max(measured["peak_bytes"], 1)
            measured["peak_ratio"] = found["pick"]["predicted_peak_bytes"] / peak
        found["pick"]["measured"] = measured
    found["code"] = output.code(found) if found["pick"] else ""
    return found


def write(advice: dict[str, Any], out: Path) -> None:
    """advice.json and, where there is a pick, its code as jacobian.py (each written whole)."""
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / (ADVICE + ".tmp")
    tmp.write_text(json.dumps(advice, indent=1, default=str) + "\n")
    tmp.replace(out / ADVICE)
    if advice.get("code"):
        (out / CODE).write_text(advice["code"])


def load(out: str | Path) -> dict[str, Any]:
    """An advice directory's advice.json."""
    return json.loads((Path(out) / ADVICE).read_text())
