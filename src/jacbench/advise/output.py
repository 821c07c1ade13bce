"""What ``jacbench advise`` prints and writes: the pick's record, the code, the terminal table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jacbench.advise import batched, fit
from jacbench.report import formats
from jacbench.strategies import generic


def pick_record(chosen: fit.Pick, predictions: dict, req, margins: dict) -> dict[str, Any]:
    """advice.json's pick: the strategy for repeated calls, what it is predicted to cost at
    the target, those within the noise of it, and the pick for one call."""
    best = predictions[chosen.strategy]
    tied = ", ".join(chosen.tied)
    why = (
        f"fastest predicted warm call at n={req.at:,} whose predicted peak fits the "
        f"{formats.size(req.mem_cap)} cap"
        + (f"; within the noise ({margins['warm']:.2f}x): {tied}" if tied else "")
    )
    return {
        "strategy": chosen.strategy,
        "predicted_s": best.warm_s,
        "predicted_cold_s": best.cold_s,
        "predicted_peak_bytes": best.peak_bytes,
        "tied": list(chosen.tied),
        "why": why,
        "one_call": chosen.one_call,
        "one_call_tied": list(chosen.one_call_tied),
        "one_call_differs": chosen.one_call != chosen.strategy
        and chosen.strategy not in chosen.one_call_tied,
        "over_cap": {k: float(v) for k, v in chosen.excluded.items()},
    }


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


def code(advice: dict[str, Any]) -> str:
    """A self-contained module defining jacobian(theta, data) with the picked strategy."""
    pick = advice["pick"]
    record = generic.find(advice["framework"], pick["strategy"])
    what = "Hessian" if advice["order"] == 2 else "Jacobian"
    head = [
        f'"""The {what} of {advice["function"]}, as jacbench advise picked it: {record.name}.',
        "",
        f"At n = {advice['target']:,} it predicted {formats.time(pick['predicted_s'])} a call "
        f"and {formats.size(pick['predicted_peak_bytes'])} of peak memory.",
        '"""',
        "",
        *import_line(advice["function"]),
        "",
    ]
    return "\n".join(head) + record.code.strip("\n") + "\n"


def _cells(row: dict | None) -> tuple[str, str]:
    if row is None or row["status"] != "ok":
        return ("–", "–") if row is None else (row["status"], "")
    return formats.time(row["warm_median_s"]), formats.size(row["peak_bytes"])


def table(advice: dict[str, Any]) -> str:
    """The terminal table: per strategy its mode and status, warm time and peak at each size,
    the prediction at the target, the pick marked; then each failure's reason."""
    sizes = advice["sizes"]
    pick = advice.get("pick") or {}
    head = ["strategy", "mode", "status"]
    for n in sizes:
        head += [f"warm n={n:,}", "peak"]
    head += [f"predicted n={advice['target']:,}", "peak", ""]
    lines = [head]
    notes = []
    for s in advice["strategies"]:
        by_n = {r["n"]: r for r in s["rows"]}
        cells = [s["name"], s["mode"], s["status"]]
        for n in sizes:
            cells += _cells(by_n.get(n))
        cells += [formats.time(s["predicted_s"]), formats.size(s["predicted_peak_bytes"])]
        mark = "<- pick" if s["name"] == pick.get("strategy") else ""
        mark = mark or ("tied" if s["name"] in pick.get("tied", []) else "")
        lines.append([*cells, mark])
        if s["reason"]:
            notes.append(f"  {s['name']}: {s['reason']}")
    widths = [max(len(row[i]) for row in lines) for i in range(len(head))]
    text = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
            for row in lines]  # fmt: skip
    text.insert(1, "  ".join("-" * w for w in widths).rstrip())
    return "\n".join(text + ([""] + notes if notes else []))


def summary(advice: dict[str, Any]) -> str:
    """The pick in a few lines, with the one-call pick where it differs, and the check."""
    pick = advice.get("pick")
    check = advice["check"]
    if check.get("fd_status") != "ok":
        fd = f"finite-difference check {check.get('fd_status')}"
    elif check.get("fd_agree", 1.0) < 1.0:
        fd = (
            f"the reference agrees with float64 finite differences on "
            f"{check['fd_agree']:.1%} of the outputs (the rest by {check['fd_error']:.1e}: "
            "a kink near them, or a wrong derivative)"
        )
    else:
        fd = f"the reference agrees with float64 finite differences to {check['fd_error']:.1e}"
    lines = [f"checked against {check['reference']} at n={advice['sizes'][0]:,}; {fd}"]
    lines += batched.summary(advice)
    if not pick:
        lines.append(
            f"no strategy passed its checks within the {formats.size(advice['mem_cap_bytes'])} cap"
        )
        return "\n".join(lines)
    time, peak = formats.time(pick["predicted_s"]), formats.size(pick["predicted_peak_bytes"])
    lines.append(
        f"pick at n={advice['target']:,}: {pick['strategy']}, predicted {time} a call, {peak} peak"
    )
    lines.append(f"  why: {pick['why']}")
    if pick.get("overhead"):
        lines.append(
            f"  its calls at n={advice['sizes'][-1]:,} took under "
            f"{formats.time(advice['margins']['floor_s'])}: they measure the framework's "
            "overhead, and the prediction is a lower bound; measure larger --sizes"
        )
    if pick["one_call_differs"]:
        cold = _strategy(advice, pick["one_call"])["predicted_cold_s"]
        lines.append(
            f"  for one call (first call, compilation included): {pick['one_call']}, "
            f"predicted {formats.time(cold)}"
        )
    measured = pick.get("measured")
    if measured and measured["status"] == "ok":
        lines.append(
            f"  measured at n={measured['n']:,}: {formats.time(measured['warm_median_s'])} a call "
            f"(predicted/measured {measured['time_ratio']:.2f}), "
            f"{formats.size(measured['peak_bytes'])} peak ({measured['peak_ratio']:.2f})"
        )
    elif measured:
        lines.append(
            f"  measured at n={measured['n']:,}: {measured['status']}: {measured['message']}"
        )
    return "\n".join(lines)


def _strategy(advice: dict, name: str) -> dict:
    return next(s for s in advice["strategies"] if s["name"] == name)
