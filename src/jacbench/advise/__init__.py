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
import os
from pathlib import Path

from jacbench.advise import batched, fit, output
from jacbench.advise.run import Progress, Request, StrategyRun, finite
from jacbench.constants import FRAMEWORK_NAMES
from jacbench.report.advice import (
    FILE,
    Advice,
    Boundary,
    Check,
    Function,
    Measured,
    Row,
    Rule,
    Strategy,
    StrategyRow,
)

ADVICE = FILE
CODE = "jacobian.py"
JOURNAL = "rows.jsonl"


def _with_baseline(rows: list[Row], function: dict[int, float]) -> tuple[StrategyRow, ...]:
    """Each row with the function's own warm time at its size and the strategy's in calls of
    the function (evaluations), where both were measured."""
    out = []
    for r in rows:
        f_s = function.get(r.n)
        evaluations = r.warm_median_s / f_s if r.ok and f_s and r.warm_median_s else None
        out.append(StrategyRow.from_json({**r.to_json(), "function_s": f_s,
                                          "evaluations": evaluations}))  # fmt: skip
    return tuple(out)


def _strategy(run: StrategyRun, prediction: fit.Prediction | None,
              function: dict[int, float]) -> Strategy:  # fmt: skip
    r = run.record
    out = Strategy(name=r.name, mode=r.mode, call=r.call, description=r.description,
                   per_row=r.per_row, compiled=r.compiled, reference=r.reference,
                   status=run.status, reason=run.reason,
                   rows=_with_baseline(run.rows, function))  # fmt: skip
    if prediction is None:
        return out
    warm = prediction.fits["warm"]
    return dataclasses.replace(
        out,
        predicted_s=prediction.warm_s,
        predicted_interval_s=(prediction.low_s, finite(prediction.high_s)),
        predicted_cold_s=prediction.cold_s,
        predicted_peak_bytes=prediction.peak_bytes,
        predicted_spread=finite(prediction.spread),
        exponent=warm.slope,
        exponent_interval=(finite(warm.slope_low), finite(warm.slope_high)),
        flags=tuple(prediction.flags),
        flags_said=tuple(fit.FLAGS[f] for f in prediction.flags),
        fits={k: f.fitted() for k, f in prediction.fits.items()},
    )


def _function_times(baseline: StrategyRun | None) -> dict[int, float]:
    if baseline is None:
        return {}
    return {r.n: r.warm_median_s for r in baseline.ok_rows}


def decide(advice: Advice, req: Request, runs: list[StrategyRun],
           baseline: StrategyRun | None = None) -> Advice:  # fmt: skip
    """The advice with the predictions at the target for the strategies that passed (fitted
    from req.fit_from on), and the pick among them by this run's own spreads (fit.pick)."""
    from jacbench.report.margins import FLOOR_S

    predictions = {}
    bytes_per_n = advice.data_bytes / req.first if advice.data_bytes else None
    for run in runs:
        rows = [r for r in run.ok_rows if r.n >= req.fit_from]
        if run.status == "ok" and rows:
            predictions[run.record.name] = fit.predict(
                run.record.name, rows, req.at, FLOOR_S, bytes_per_n
            )
    chosen = fit.pick(list(predictions.values()), req.mem_cap, FLOOR_S, req.at)
    pick = None if chosen is None else output.pick_record(chosen, predictions, req)
    if pick and predictions[pick.strategy].measured_s < FLOOR_S:
        # its calls measured the framework's overhead, not its growth
        pick = dataclasses.replace(pick, overhead=True)
    function = _function_times(baseline)
    return dataclasses.replace(
        advice,
        strategies=tuple(_strategy(r, predictions.get(r.record.name), function) for r in runs),
        pick=pick,
        rule=Rule(level=fit.LEVEL, floor_s=FLOOR_S, far=fit.FAR, margin=1.0),
        baseline=None if baseline is None else Function(
            call=baseline.record.call, status=baseline.status, rows=tuple(baseline.rows)),
    )  # fmt: skip


def _check_names(advice: Advice) -> list[str]:
    """The strategies --check measures again: the pick, those tied with it, then the next
    fastest by what ranked them, CHECK_TOP in all."""
    from jacbench.advise.run import CHECK_TOP

    pick = advice.pick
    names = [pick.strategy, *pick.tied]
    predicted = pick.basis == "predicted"
    ranked = sorted(
        (s for s in advice.strategies if s.status == "ok" and s.predicted_s),
        key=lambda s: s.predicted_s if predicted else s.rows[-1].warm_median_s,
    )
    names += [s.name for s in ranked if s.name not in names]
    return names[:CHECK_TOP]


def recheck(advice: Advice, rows: dict[str, list[Row]]) -> Advice:
    """The advice with its pick made again from the strategies measured at the target
    (fit.checked): the pick becomes it, what was predicted kept beside; the pick's own
    measurement (its median worker) as pick.measured, with the prediction over it."""
    from jacbench.report.margins import FLOOR_S

    found = fit.checked(rows, FLOOR_S)
    pick = advice.pick
    if found is None:
        first = next(iter(rows.values()))[-1]
        measured = Measured.from_json(first.to_json())
        return dataclasses.replace(advice, pick=dataclasses.replace(pick, measured=measured))
    changed = found.strategy != pick.strategy
    found = dataclasses.replace(
        found,
        failed={  # a leader that failed at the target in every worker, and how
            name: found_rows[-1].status
            for name, found_rows in rows.items()
            if found_rows and all(not r.ok for r in found_rows)
        },
        predicted_pick=pick.strategy,
        changed=changed,
        n=advice.target,
        rows={name: tuple(found_rows) for name, found_rows in rows.items()},
    )
    if changed:
        s = advice.strategy(found.strategy)
        pick = dataclasses.replace(
            pick, strategy=s.name, predicted_s=s.predicted_s,
            predicted_cold_s=s.predicted_cold_s, predicted_peak_bytes=s.predicted_peak_bytes,
            why=f"fastest measured at n={advice.target:,} by --check "
                f"(the prediction picked {found.predicted_pick})")  # fmt: skip
    mine = sorted((r for r in rows[pick.strategy] if r.ok), key=lambda r: r.warm_median_s)
    middle = mine[len(mine) // 2]
    low, high = advice.strategy(pick.strategy).predicted_interval_s
    within = low is not None and low <= middle.warm_median_s <= (high or 0)
    measured = Measured.from_json({
        **middle.to_json(),
        "time_ratio": pick.predicted_s / middle.warm_median_s,
        "peak_ratio": pick.predicted_peak_bytes / max(middle.peak_bytes, 1),
        "within_interval": within if output.usable(low, high) else None,  # else none to hold
    })  # fmt: skip
    pick = dataclasses.replace(pick, tied=found.tied, checked=found, measured=measured)
    return dataclasses.replace(advice, pick=pick)


def advise(req: Request, out: Path, progress: Progress = print) -> Advice:
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
        advice = decide(_advice(req, found, note), req, runs, baseline)
        if req.verify and advice.pick:
            rows = running.verify(req, found, _check_names(advice), progress, load=load)
            advice = recheck(advice, rows)
    finally:
        running.cleanup(scratch)
    advice = dataclasses.replace(advice, load=load.record(),
                                 code=output.code(advice) if advice.pick else "")  # fmt: skip
    write(advice, out)
    return advice


def _advice(req: Request, found: dict, note: str) -> Advice:
    """What advice.json says of the request, the function and the machine (found: the probe's
    findings)."""
    from jacbench.measure import environment

    batch, blocks, block_shape = batched.fields(found)
    boundary = found.get("boundary")
    return Advice(
        function=req.function,
        factory=req.factory,
        framework=found["framework"],
        order=req.order,
        inputs=found["inputs"],
        outputs=found["outputs"],
        rows_of_data=found.get("rows"),
        batch=batch,
        blocks=blocks,
        block_shape=block_shape,
        dtype=found["dtype"],
        sizes=tuple(sorted(set(req.sizes))),
        fit_from=req.fit_from,
        auto_sizes=req.auto or bool(req.fit_from),
        sizes_note=note,
        target=req.at,
        mem_cap_bytes=req.mem_cap,
        timeout_s=req.timeout,
        threads=req.threads,
        check=Check.of(found),
        function_s=found.get("function_s"),
        data_bytes=found.get("data_bytes"),  # the data's largest array at the probe's size
        probe_n=req.first,
        boundary=None if boundary is None else Boundary.from_json(boundary),
        environment=environment.environment(),
        cwd=os.getcwd(),
    )


def refit(advice: Advice) -> Advice:
    """The advice's predictions and pick made again from its rows, as this version fits them
    (nothing measured again); a --check's measurements are ranked again and kept."""
    from jacbench.strategies import generic

    req = Request(advice.function, advice.factory, advice.sizes, advice.target,
                  advice.mem_cap_bytes, order=advice.order, fit_from=advice.fit_from)  # fmt: skip
    runs = [
        StrategyRun(generic.find(advice.framework, s.name), s.status, s.reason, list(s.rows))
        for s in advice.strategies
    ]
    base = advice.baseline
    baseline = None
    if base:
        baseline = StrategyRun(generic.baseline(advice.framework), base.status, "",
                               list(base.rows))  # fmt: skip
    checked = advice.pick.checked if advice.pick else None
    found = decide(advice, req, runs, baseline)
    if checked and found.pick:
        found = recheck(found, {k: list(v) for k, v in checked.rows.items()})
    return dataclasses.replace(found, code=output.code(found) if found.pick else "")


def write(advice: Advice, out: Path) -> None:
    """advice.json and, where there is a pick, its code as jacobian.py (each written whole)."""
    out.mkdir(parents=True, exist_ok=True)
    advice.write(out / ADVICE)
    if advice.code:
        (out / CODE).write_text(advice.code)


def load(out: str | Path) -> Advice:
    """An advice directory's advice.json."""
    return Advice.read(out)
