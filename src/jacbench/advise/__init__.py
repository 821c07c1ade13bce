"""``jacbench advise``: the book's treatment for a reader's own function.

Every generic strategy (strategies.generic) of the function's framework is measured at a few
sizes in capped workers, beside the function itself, and checked against the framework's plain
reverse loop (advise.run); the sizes, unless given, grow from the function's own time until its
call takes the floor. Each strategy's time and peak are fitted against n with a prediction
interval and carried to the reader's size, and the fastest that fits the memory cap is picked,
with those it does not beat by the book's rule on this run's own spreads (advise.fit); --check
measures the leaders again at the target, interleaved, and picks from that. The result is
``DIR/advice.json`` with the code to paste (advise.output). Sits between publish and report: it
ranks by report.margins' rule, and the chapter "Your function" reads what it writes.
"""

from __future__ import annotations

import dataclasses
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


def _with_baseline(rows: list[dict], function: dict[int, float]) -> list[dict]:
    """Each row with the function's own warm time at its size and the strategy's in calls of
    the function (evaluations), where both were measured."""
    out = []
    for r in rows:
        f_s = function.get(r["n"])
        ok = r["status"] == "ok" and f_s and r.get("warm_median_s")
        evaluations = r["warm_median_s"] / f_s if ok else None
        out.append({**r, "function_s": f_s, "evaluations": evaluations})
    return out


def _strategy(run: StrategyRun, prediction: fit.Prediction | None,
              function: dict[int, float]) -> dict[str, Any]:  # fmt: skip
    r = run.record
    out: dict[str, Any] = {
        "name": r.name, "mode": r.mode, "call": r.call, "description": r.description,
        "per_row": r.per_row, "compiled": r.compiled, "reference": r.reference,
        "status": run.status, "reason": run.reason, "rows": _with_baseline(run.rows, function),
        "predicted_s": None, "predicted_cold_s": None, "predicted_peak_bytes": None,
    }  # fmt: skip
    if prediction is not None:
        warm = prediction.fits["warm"]
        out.update(
            predicted_s=prediction.warm_s,
            predicted_interval_s=[prediction.low_s, finite(prediction.high_s)],
            predicted_cold_s=prediction.cold_s,
            predicted_peak_bytes=prediction.peak_bytes,
            predicted_spread=finite(prediction.spread),
            exponent=warm.slope,
            exponent_interval=[finite(warm.slope_low), finite(warm.slope_high)],
            flags=list(prediction.flags),
            flags_said=[fit.FLAGS[f] for f in prediction.flags],
            fits={k: f.to_json() for k, f in prediction.fits.items()},
        )
    return out


def _function_times(baseline: StrategyRun | None) -> dict[int, float]:
    if baseline is None:
        return {}
    return {r["n"]: r["warm_median_s"] for r in baseline.ok_rows}


def decide(req: Request, runs: list[StrategyRun], framework: str,
           baseline: StrategyRun | None = None,
           data_bytes: int | None = None) -> dict[str, Any]:  # fmt: skip
    """Predictions at the target for the strategies that passed (fitted from req.fit_from
    on), and the pick among them by this run's own spreads (fit.pick)."""
    from jacbench.report.margins import FLOOR_S

    predictions = {}
    bytes_per_n = data_bytes / req.first if data_bytes else None
    for run in runs:
        rows = [r for r in run.ok_rows if r["n"] >= req.fit_from]
        if run.status == "ok" and rows:
            predictions[run.record.name] = fit.predict(
                run.record.name, rows, req.at, FLOOR_S, bytes_per_n
            )
    chosen = fit.pick(list(predictions.values()), req.mem_cap, FLOOR_S, req.at)
    rule = {"level": fit.LEVEL, "floor_s": FLOOR_S, "far": fit.FAR, "margin": 1.0}
    pick = None if chosen is None else output.pick_record(chosen, predictions, req)
    if pick and predictions[pick["strategy"]].measured_s < FLOOR_S:
        pick["overhead"] = True  # its calls measured the framework's overhead, not its growth
    function = _function_times(baseline)
    found: dict[str, Any] = {
        "strategies": [_strategy(r, predictions.get(r.record.name), function) for r in runs],
        "pick": pick,
        "rule": rule,
    }
    if baseline is not None:
        found["baseline"] = {"call": baseline.record.call, "status": baseline.status,
                             "rows": baseline.rows}  # fmt: skip
    return found


def _check_names(advice: dict[str, Any]) -> list[str]:
    """The strategies --check measures again: the pick, those tied with it, then the next
    fastest by what ranked them, CHECK_TOP in all."""
    from jacbench.advise.run import CHECK_TOP

    pick = advice["pick"]
    names = [pick["strategy"], *pick["tied"]]
    key = "predicted_s" if pick.get("basis", "predicted") == "predicted" else None
    ranked = sorted(
        (s for s in advice["strategies"] if s["status"] == "ok" and s["predicted_s"]),
        key=lambda s: s[key] if key else s["rows"][-1]["warm_median_s"],
    )
    names += [s["name"] for s in ranked if s["name"] not in names]
    return names[:CHECK_TOP]


def recheck(advice: dict[str, Any], rows: dict[str, list[dict]]) -> None:
    """The pick made again from the strategies measured at the target (fit.checked): the
    advice's pick becomes it, what was predicted kept beside; the pick's own measurement
    (its median worker) as pick["measured"], with the prediction over it."""
    from jacbench.report.margins import FLOOR_S

    found = fit.checked(rows, FLOOR_S)
    pick = advice["pick"]
    if found is None:
        first = next(iter(rows.values()))[-1]
        pick["measured"] = first
        return
    found["failed"] = {  # a leader that failed at the target in every worker, and how
        name: found_rows[-1]["status"]
        for name, found_rows in rows.items()
        if found_rows and all(r["status"] != "ok" for r in found_rows)
    }
    found["predicted_pick"] = pick["strategy"]
    found["changed"] = found["strategy"] != pick["strategy"]
    found["n"] = advice["target"]
    found["rows"] = rows
    if found["changed"]:
        s = next(x for x in advice["strategies"] if x["name"] == found["strategy"])
        pick.update(strategy=s["name"], predicted_s=s["predicted_s"],
                    predicted_cold_s=s["predicted_cold_s"],
                    predicted_peak_bytes=s["predicted_peak_bytes"],
                    why=f"fastest measured at n={advice['target']:,} by --check "
                        f"(the prediction picked {found['predicted_pick']})")  # fmt: skip
    pick["tied"] = found["tied"]
    pick["checked"] = found
    mine = sorted((r for r in rows[pick["strategy"]] if r["status"] == "ok"),
                  key=lambda r: r["warm_median_s"])  # fmt: skip
    measured = dict(mine[len(mine) // 2])
    measured["time_ratio"] = pick["predicted_s"] / measured["warm_median_s"]
    measured["peak_ratio"] = pick["predicted_peak_bytes"] / max(measured["peak_bytes"], 1)
    low, high = next(x for x in advice["strategies"] if x["name"] == pick["strategy"])[
        "predicted_interval_s"]  # fmt: skip
    within = low is not None and low <= measured["warm_median_s"] <= (high or 0)
    measured["within_interval"] = within if output.usable(low, high) else None  # else none to hold
    pick["measured"] = measured


def advise(req: Request, out: Path, progress: Progress = print) -> dict[str, Any]:
    """Measure, check, predict and pick; write DIR/advice.json, DIR/jacobian.py and the rows
    as they come (DIR/rows.jsonl). UsageError before anything is written for bad input."""
    from jacbench.advise import run as running
    from jacbench.advise import sizes as sizes_
    from jacbench.report.margins import FLOOR_S

    req.check()
    load = sizes_.Load()
    load.sample(1.0)  # before anything of the advice's runs
    scratch = running.fresh_reference_dir()
    reference = scratch / "reference.npy"
    note = ""
    try:
        progress(f"checking {req.function} with {req.factory}({req.first:,})")
        found = running.probe(req, reference)
        running.chosen(req, found["framework"])  # an unknown --strategies name: refused now
        if req.auto:
            start = found.get("floor_n", req.first)  # where the function took the floor
            took = found.get("floor_n_s", found["function_s"])
            data = found.get("data_bytes")
            sizes, note = sizes_.auto_sizes(start, took, req.timeout, FLOOR_S, req.target,
                                            data / req.first if data else None)  # fmt: skip
            measured = tuple(sorted({req.first, *sizes}))
            req = dataclasses.replace(req, sizes=measured, fit_from=min(sizes))
        out.mkdir(parents=True, exist_ok=True)
        journal = out / JOURNAL
        journal.unlink(missing_ok=True)
        name = FRAMEWORK_NAMES[found["framework"]]
        fitted = [n for n in sorted(set(req.sizes)) if n >= req.fit_from]
        progress(
            f"{name}: {found['inputs']:,} inputs, {found['outputs']:,} outputs at "
            f"n={req.first:,}, the function {found['function_s'] * 1e3:.3g} ms a call; "
            "fitting n = "
            + ", ".join(f"{n:,}" for n in fitted)
            + (f" (checked at n={req.first:,})" if req.first not in fitted else "")
        )
        runs, baseline = running.measure(req, found, reference, progress, journal, load)
        advice = _advice(req, found, note)
        advice.update(decide(req, runs, found["framework"], baseline, found.get("data_bytes")))
        if req.verify and advice["pick"]:
            rows = running.verify(req, found, _check_names(advice), progress, load=load)
            recheck(advice, rows)
    finally:
        running.cleanup(scratch)
    advice["load"] = load.record()
    advice["code"] = output.code(advice) if advice["pick"] else ""
    write(advice, out)
    return advice


def _advice(req: Request, found: dict, note: str) -> dict[str, Any]:
    """What advice.json says of the request, the function and the machine."""
    from jacbench.measure import environment

    return {
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
        "fit_from": req.fit_from,
        "auto_sizes": req.auto or bool(req.fit_from),
        "sizes_note": note,
        "target": req.at,
        "mem_cap_bytes": req.mem_cap,
        "timeout_s": req.timeout,
        "threads": req.threads,
        "check": {k: found.get(k) for k in CHECK},
        "function_s": found.get("function_s"),
        "data_bytes": found.get("data_bytes"),  # the data's largest array at the probe's size
        "probe_n": req.first,
        "boundary": found.get("boundary"),
        "environment": environment.environment(),
        "cwd": os.getcwd(),
    }


def refit(advice: dict[str, Any]) -> dict[str, Any]:
    """The advice's predictions and pick made again from its rows, as this version fits them
    (nothing measured again); a --check's measurements are ranked again and kept."""
    from jacbench.advise.run import StrategyRun
    from jacbench.strategies import generic

    req = Request(advice["function"], advice["factory"], tuple(advice["sizes"]),
                  advice["target"], advice["mem_cap_bytes"], order=advice["order"],
                  fit_from=advice.get("fit_from", 0))  # fmt: skip
    runs = [
        StrategyRun(
            generic.find(advice["framework"], s["name"]), s["status"], s["reason"], s["rows"]
        )  # fmt: skip
        for s in advice["strategies"]
    ]
    base = advice.get("baseline")
    baseline = None
    if base:
        baseline = StrategyRun(generic.baseline(advice["framework"]), base["status"], "",
                               base["rows"])  # fmt: skip
    checked = ((advice.get("pick") or {}).get("checked") or {}).get("rows")
    found = {**advice, **decide(req, runs, advice["framework"], baseline,
                                advice.get("data_bytes"))}  # fmt: skip
    if checked and found["pick"]:
        recheck(found, checked)
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
