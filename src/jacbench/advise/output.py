"""What ``jacbench advise`` prints and writes: the pick's record, the code, the terminal table."""

from __future__ import annotations

import math
from pathlib import Path

from jacbench.advise import batched, fit
from jacbench.report import formats
from jacbench.report.advice import Advice, Checked, Pick, Row, Strategy
from jacbench.strategies import generic

# The printed code's warning where the probe found the function jumps (a barrier, a digital).
JUMPS_WARNING = (
    "",
    "Not for a price's Greeks: the function jumps, and averaged over rows this Jacobian misses",
    "the boundary term of the paths that cross the jump (jacbench advise's bump and reprice",
    "differed beyond its standard error). Smooth the payoff, or bump and reprice the price.",
)
# An interval wider than this factor (or an exponent's wider than its log) says nothing usable.
WIDE = 100.0


def pick_record(chosen: fit.Pick, predictions: dict[str, fit.Prediction], req) -> Pick:
    """advice.json's pick: the strategy for repeated calls, what it is predicted to cost at
    the target (with its interval), what ranked it, those it does not beat, and the pick for
    one call."""
    best = predictions[chosen.strategy]
    tied = ", ".join(chosen.tied)
    flagged = sorted({f for p in predictions.values() for f in p.flags})
    if chosen.basis == "predicted":
        why = f"fastest predicted warm call at n={req.at:,}"
    else:
        why = (
            f"fastest warm median at n={best.measured_n:,}, the largest size measured (the "
            f"predictions at n={req.at:,} are flagged: "
            + "; ".join(fit.FLAGS[f] for f in flagged)
            + ")"
        )
    why += f", its peak within the {formats.size(req.mem_cap)} cap"
    if tied:
        what = ("the interval of their quotient reaches 1" if chosen.basis == "predicted"
                else "their fastest and slowest calls meet")  # fmt: skip
        why += f"; not told apart from it ({what}): {tied}"
    return Pick(
        strategy=chosen.strategy,
        basis=chosen.basis,
        predicted_s=best.warm_s,
        predicted_interval_s=(best.low_s, None if best.high_s == float("inf") else best.high_s),
        predicted_cold_s=best.cold_s,
        predicted_peak_bytes=best.peak_bytes,
        flags=tuple(best.flags),
        tied=tuple(chosen.tied),
        why=why,
        one_call=chosen.one_call,
        one_call_tied=tuple(chosen.one_call_tied),
        one_call_differs=chosen.one_call != chosen.strategy
        and chosen.strategy not in chosen.one_call_tied,
        over_cap={k: float(v) for k, v in chosen.excluded.items()},
    )


def import_line(function: str) -> list[str]:
    """The lines that bring the reader's function in as f."""
    from jacbench.problems import user

    name = user.parse_name(function)
    if not name.is_file:
        return [f"from {name.where} import {name.attr} as f"]
    folder = str(Path(name.where).resolve().parent)
    return [
        "import sys",
        "",
        f"sys.path.insert(0, {folder!r})",
        f"from {name.module} import {name.attr} as f  # noqa: E402",
    ]


def code(advice: Advice) -> str:
    """A self-contained module defining jacobian(theta, data) with the picked strategy."""
    pick = advice.pick
    record = generic.find(advice.framework, pick.strategy)
    what = "Hessian" if advice.order == 2 else "Jacobian"
    if advice.batch:
        what = "per-sample Jacobians (B, m', d)"
    head = [
        f'"""The {what} of {advice.function}, as jacbench advise picked it: {record.name}.',
        "",
        f"At n = {advice.target:,} it predicted {formats.time(pick.predicted_s)} a call "
        f"and {formats.size(pick.predicted_peak_bytes)} of peak memory.",
        *JUMPS_WARNING * bool(advice.boundary and advice.boundary.jumps),
        '"""',
        "",
        *import_line(advice.function),
        "",
    ]
    return "\n".join(head) + record.code.strip("\n") + "\n"


def usable(low: float | None, high: float | None) -> bool:
    """Whether an interval says something: both ends known and no wider than WIDE."""
    return low is not None and high is not None and high <= WIDE * low


def _interval(s: Strategy) -> str:
    low, high = s.predicted_interval_s or (None, None)
    if not s.predicted_s:
        return "–"
    if not usable(low, high):
        return f"{formats.time(s.predicted_s)} (no usable interval)"
    return f"{formats.time(s.predicted_s)} ({formats.time(low)}–{formats.time(high)})"


def _exponent(s: Strategy) -> str:
    k = s.exponent
    low, high = s.exponent_interval or (None, None)
    if k is None:
        return "–"
    if low is None or high is None or high - low > math.log(WIDE):
        return f"{k:.2f} (no usable interval)"
    return f"{k:.2f} ({low:.2f}–{high:.2f})"


def _checked(s: Strategy, checked: Checked | None) -> str:
    found = checked.strategies.get(s.name) if checked else None
    return "" if not found else formats.time(found.median_s)


def table(advice: Advice) -> str:
    """The terminal table: per strategy its mode and status, warm time at each size, in calls
    of the function at the largest, the exponent and the prediction at the target with their
    intervals, the predicted peak, what --check measured there, the pick marked; then each
    failure's reason."""
    sizes = advice.sizes
    pick = advice.pick
    checked = pick.checked if pick else None
    largest = sizes[-1]
    head = ["strategy", "mode", "status", *(f"n={n:,}" for n in sizes), "x f",
            "exponent (95%)", f"predicted n={advice.target:,} (95%)", "peak"]  # fmt: skip
    if checked:
        head.append(f"checked n={advice.target:,}")
    head.append("")
    lines = [head]
    base = advice.baseline
    if base:
        by_n = {r.n: r for r in base.rows}
        lines.append(["the function itself", "", base.status,
                      *(_time(by_n.get(n)) for n in sizes), "1",
                      *[""] * (len(head) - 4 - len(sizes))])  # fmt: skip
    notes = []
    for s in advice.strategies:
        by_n = {r.n: r for r in s.rows}
        at_largest = by_n[largest].evaluations if largest in by_n else None
        cells = [s.name, s.mode, s.status, *(_time(by_n.get(n)) for n in sizes),
                 f"{at_largest:,.3g}" if at_largest else "–", _exponent(s), _interval(s),
                 formats.size(s.predicted_peak_bytes)]  # fmt: skip
        if checked:
            cells.append(_checked(s, checked))
        mark = "<- pick" if pick and s.name == pick.strategy else ""
        mark = mark or ("tied" if pick and s.name in pick.tied else "")
        lines.append([*cells, mark])
        if s.reason:
            notes.append(f"  {s.name}: {s.reason}")
        if s.flags:
            flagged = "; ".join(fit.FLAGS[f] for f in s.flags)
            notes.append(f"  {s.name}: prediction {flagged}")
    widths = [max(len(row[i]) for row in lines) for i in range(len(head))]
    text = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
            for row in lines]  # fmt: skip
    text.insert(1, "  ".join("-" * w for w in widths).rstrip())
    if advice.fit_from:
        notes.insert(0, f"  fitted from n={advice.fit_from:,}; smaller sizes check the "
                        "derivatives and are not fitted")  # fmt: skip
    return "\n".join(text + ([""] + notes if notes else []))


def _time(row: Row | None) -> str:
    if row is None:
        return "–"
    return formats.time(row.warm_median_s) if row.ok else row.status


def _fd_line(advice: Advice) -> str:
    check = advice.check
    if check.fd_status != "ok":
        fd = f"finite-difference check {check.fd_status}"
    elif (1.0 if check.fd_agree is None else check.fd_agree) < 1.0:
        fd = (
            f"the reference agrees with float64 finite differences on "
            f"{check.fd_agree:.1%} of the outputs (the rest by {check.fd_error:.1e}: "
            "a kink near them, or a wrong derivative)"
        )
    else:
        fd = f"the reference agrees with float64 finite differences to {check.fd_error:.1e}"
    return f"checked against {check.reference} at n={advice.sizes[0]:,}; {fd}"


def _machine_lines(advice: Advice) -> list[str]:
    lines = []
    load = advice.load
    if load and load.busy and load.during_mean is not None:
        lines.append(
            f"the machine was busy: other processes kept {load.during_mean:.1f} of its "
            f"{load.cores} cores busy on average between the workers (at most "
            f"{load.during_max:.1f}); times are slower and noisier than on a quiet machine"
        )
    elif load and load.busy:  # an advice of the first version: the minute's load average before
        lines.append(
            f"the machine's load average was {load.before:.1f} on {load.cores} cores as "
            "this began (its own earlier work included): times may be slower and noisier"
        )
    if advice.sizes_note:
        lines.append(f"sizes: {advice.sizes_note}")
    return lines


def boundary_lines(advice: Advice) -> list[str]:
    """Where the per-row derivative misses a boundary term: what was found, and what to do."""
    found = advice.boundary
    if not (found and found.jumps):
        return []
    rows = advice.rows_of_data or advice.outputs
    lines = [f"the function jumps: averaged over its {rows:,} rows, the per-row derivative is not "
             "the derivative of the mean output"]  # fmt: skip
    for x in found.inputs:
        if x.jumps:
            lines.append(
                f"  input {x.input}: per-row mean {x.per_row_mean:.4g}, bump and reprice "
                f"{x.bumped_mean:.4g} (standard error {x.standard_error:.2g}, step "
                f"{x.step:.3g})"
            )
    lines.append(
        "  the Jacobians here are right row by row, but a row that crosses a barrier or a "
        "digital's strike carries a boundary term they miss: for a price's Greeks do not "
        "average them; smooth the payoff (a conditional expectation over the last step, a "
        "Brownian bridge for a barrier), use likelihood ratios, or bump and reprice"
    )
    return lines


def summary(advice: Advice) -> str:
    """The pick in a few lines, with its interval, the one-call pick where it differs, what
    --check measured, and what the run found of the function and the machine."""
    pick = advice.pick
    lines = [_fd_line(advice), *batched.summary(advice), *_machine_lines(advice)]
    lines += boundary_lines(advice)
    if not pick:
        lines.append(
            f"no strategy passed its checks within the {formats.size(advice.mem_cap_bytes)} cap"
        )
        return "\n".join(lines)
    s = advice.strategy(pick.strategy)
    peak = formats.size(pick.predicted_peak_bytes)
    lines.append(
        f"pick at n={advice.target:,}: {pick.strategy}, predicted {_interval(s)} a call "
        f"(95% interval), {peak} peak"
    )
    lines.append(f"  why: {pick.why}")
    if pick.overhead:
        lines.append(
            f"  its calls at n={advice.sizes[-1]:,} took under "
            f"{formats.time(advice.rule.floor_s)}: they measure the framework's "
            "overhead, and the prediction is a lower bound; measure larger --sizes"
        )
    if pick.one_call_differs:
        cold = advice.strategy(pick.one_call).predicted_cold_s
        lines.append(
            f"  for one call (first call, compilation included): {pick.one_call}, "
            f"predicted {formats.time(cold)}"
        )
    lines += _checked_lines(pick)
    return "\n".join(lines)


def _checked_lines(pick: Pick) -> list[str]:
    checked, measured = pick.checked, pick.measured
    lines = []
    if checked:
        each = ", ".join(
            f"{k} {formats.time(v.median_s)} ({formats.time(v.low_s)}–"
            f"{formats.time(v.high_s)}, {v.workers} workers)"
            for k, v in sorted(checked.strategies.items(), key=lambda kv: kv[1].median_s)
        )
        lines.append(f"  checked at n={checked.n:,}, in turn: {each}")
        if checked.failed:
            failed = ", ".join(f"{k} ({v})" for k, v in checked.failed.items())
            lines.append(f"  failed at n={checked.n:,}: {failed}")
        if checked.changed:
            lines.append(f"  re-picked: {checked.strategy} (the prediction picked "
                         f"{checked.predicted_pick})")  # fmt: skip
        elif checked.tied:
            lines.append(f"  measured, not told apart from it: {', '.join(checked.tied)}")
    if measured and measured.ok:
        inside = measured.within_interval
        lines.append(
            f"  measured at n={measured.n:,}: {formats.time(measured.warm_median_s)} a call "
            f"(predicted/measured {measured.time_ratio:.2f}"
            + ("" if inside is None else (", inside" if inside else ", outside") + " the interval")
            + f"), {formats.size(measured.peak_bytes)} peak ({measured.peak_ratio:.2f})"
        )
    elif measured:
        lines.append(f"  measured at n={measured.n:,}: {measured.status}: {measured.message}")
    return lines
