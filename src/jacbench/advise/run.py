"""Measure every generic strategy on a reader's function, check them, and pick one.

The parent never imports the reader's module or a framework. A probe worker checks the contract
at the smallest size and saves the reference derivative (measure.user_probe); then each
applicable strategy runs at each size, smallest first, in its own capped worker (measure.harness).
At the smallest size every result is checked against the reference: one that disagrees is
``wrong``, and a per-row strategy that disagrees while the others agree is ``refused`` (the rows
are coupled). A strategy that fails at one size is not run at the larger ones. Every row is
appended to ``DIR/rows.jsonl`` as it is measured; ``DIR/advice.json`` is written at the end.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jacbench.advise import batched
from jacbench.advise.sizes import BUDGET_CALLS, MAX_AUTO, START, Load
from jacbench.constants import TOLERANCE
from jacbench.errors import UsageError
from jacbench.measure.harness import Limits, default_mem_cap, run_worker
from jacbench.problems import user
from jacbench.report.advice import Row
from jacbench.strategies import generic

STATUSES = ("ok", "wrong", "memory-cap", "timeout", "error", "refused")
# The name a worker measures the function itself under (a call of f, no derivative).
BASELINE = "function"
# --check: the strategies measured again at the target, each in this many workers, interleaved.
CHECK_TOP = 3
CHECK_ROUNDS = 3
# Each worker: at least 3 warm calls (measure.worker), more while this budget lasts.
WARM_BUDGET_S = 1.0
REPEATS = 5
# Calls a worker makes at one size: the first and at least three warm ones.
CALLS = 4
# How a framework says it could not allocate (XLA's RESOURCE_EXHAUSTED, torch's and Python's
# out-of-memory errors): a memory failure, like a kill at the cap.
OUT_OF_MEMORY = ("resource_exhausted", "out of memory", "memoryerror", "failed to allocate")


@dataclass(frozen=True)
class Request:
    """What the reader asked: their function and factory, the sizes to measure, the size to
    predict and pick at, and the limits of each worker."""

    function: str
    factory: str
    sizes: tuple[int, ...] = ()  # (): chosen from the function's own time (auto_sizes)
    target: int | None = None  # None: the largest size measured
    mem_cap: int = field(default_factory=default_mem_cap)
    timeout: float = 120.0
    strategies: tuple[str, ...] = ()  # () for every applicable one
    framework: str | None = None
    order: int = 1
    threads: int = field(default_factory=lambda: os.cpu_count() or 1)
    verify: bool = False  # measure the pick at the target afterwards
    batch: bool = False  # theta (B, d) of B samples: per-sample Jacobians (advise.batched)
    # Each worker's calls: at least 3 warm calls (measure.worker), up to repeats while the
    # budget lasts. The tests ask for the fewest; a reader gets the defaults.
    repeats: int = REPEATS
    warm_budget_s: float = WARM_BUDGET_S
    # The smallest size the fits read: rows below it check the strategies (at the probe's size)
    # but measure too little work to fit (0: every size).
    fit_from: int = 0

    @property
    def auto(self) -> bool:
        return not self.sizes

    @property
    def first(self) -> int:
        """The size the probe checks the function at."""
        return min(self.sizes) if self.sizes else START

    @property
    def at(self) -> int:
        return self.target or max(self.sizes)

    def check(self) -> None:
        """UsageError for what can be refused before any worker starts."""
        user.check_findable(user.parse_name(self.function, "FUNCTION"))
        user.check_findable(user.parse_name(self.factory, "FACTORY"))
        if any(n < 1 for n in self.sizes) or (self.target is not None and self.target < 1):
            raise UsageError("a size n must be at least 1")
        if self.timeout <= 0:
            raise UsageError(f"--timeout must be positive, got {self.timeout}")
        if self.batch and self.order != 1:
            raise UsageError("--batch takes per-sample Jacobians, not Hessians (--hessian)")
        if self.framework and self.framework not in generic.GENERIC_FRAMEWORKS:
            raise UsageError(
                f"unknown framework {self.framework!r}; choose one of: "
                + ", ".join(generic.GENERIC_FRAMEWORKS)
            )


Progress = Callable[[str], None]


def _params(req: Request, n: int, dtype: str = "float32", reference: str = "") -> dict:
    return {"function": req.function, "factory": req.factory, "n": n, "order": req.order,
            "dtype": dtype, "reference": reference, "batch": req.batch}  # fmt: skip


def probe(req: Request, reference: Path) -> dict[str, Any]:
    """The probe worker's findings at the smallest size; UsageError (one line) when the
    contract is broken or the probe could not finish."""
    n = req.first
    spec = {"probe": _params(req, n, reference=str(reference)), "threads": req.threads}
    if req.auto:  # the probe also finds where the function's own call takes the floor
        from jacbench.report.margins import FLOOR_S

        spec["probe"]["grow"] = {"floor_s": FLOOR_S, "budget_s": req.timeout / BUDGET_CALLS,
                                 "max_n": req.target or MAX_AUTO}  # fmt: skip
    found = run_worker(spec, Limits(req.mem_cap, req.timeout))
    if found["status"] == "contract":
        raise UsageError(found["message"])
    if found["status"] != "ok":
        raise UsageError(
            f"checking FUNCTION at n={n:,} stopped: {found['status']}: {found['message']}"
        )
    if req.framework and req.framework != found["framework"]:
        raise UsageError(
            f"--framework {req.framework}, but FACTORY({n}) gives {found['framework']} tensors"
        )
    return found


def chosen(req: Request, framework: str) -> list[generic.Generic]:
    """The records to measure: the framework's of the order, or those --strategies names."""
    records = batched.records(framework) if req.batch else generic.all_records(framework, req.order)
    if not req.strategies:
        return records
    by_name = {r.name: r for r in records}
    unknown = [s for s in req.strategies if s not in by_name]
    if unknown:
        import difflib

        near = difflib.get_close_matches(unknown[0], list(by_name), n=1)
        hint = f" (did you mean {near[0]}?)" if near else ""
        raise UsageError(
            f"unknown strategy {unknown[0]!r} for {framework}{hint}; choose from: "
            + ", ".join(by_name)
        )
    return [by_name[s] for s in req.strategies]


def per_row_refusal(found: dict) -> str | None:
    """Why per-row strategies cannot apply to the function, or None when they can."""
    m, rows = found["outputs"], found.get("rows")
    if rows is None:
        return "data holds no tensor whose rows the outputs could follow"
    if m != rows:
        return f"the function has {m:,} outputs and data {rows:,} rows: not one output per row"
    return None


def _row(n: int, rec: dict) -> Row:
    """One size's measurement as advice.json keeps it, from its worker's record."""
    keep = ("warm_median_s", "warm_min_s", "warm_max_s", "warm_n", "cold_s", "max_rel_error")
    # The warm calls' peak beyond the inputs (memory the allocator keeps between calls
    # included): what each call needs. The first call's also holds what compiling and the
    # framework's lazy imports took once; it is kept beside.
    ok = rec["status"] == "ok"
    return Row(n=n, status=rec["status"], message=rec.get("message", ""),
               **{k: rec.get(k) for k in keep},
               peak_bytes=int(rec.get("warm_peak_over_inputs") or 0) if ok else None,
               cold_peak_bytes=rec.get("cold_peak_over_baseline") if ok else None,
               wall_s=rec.get("wall_s"))  # fmt: skip


def _status(row: Row, tolerance: float) -> tuple[str, str]:
    """The strategy's status and reason from one row."""
    err = row.max_rel_error
    if err is not None and not err <= tolerance:
        return "wrong", f"differs from the reference by {err:.1e} (tolerance {tolerance:.0e})"
    if row.ok:
        return "ok", ""
    first = (row.message or row.status).strip().splitlines()[0]
    status = row.status
    if status == "error" and any(w in first.lower() for w in OUT_OF_MEMORY):
        status = "memory-cap"  # the framework refused an allocation before the cap was reached
    return status, f"at n={row.n:,}: {first[:240]}"


def _too_slow(rows: list[Row], n: int, timeout: float, growth: float = 1.0) -> str | None:
    """Why a strategy is not run at n: its first call (as long as at the last size: compiling
    does not grow with n) and CALLS more, each growing as n**growth from the last size, would
    outlast the worker's limit."""
    last = rows[-1]
    if not last.ok:
        return None
    call = last.warm_median_s * (n / last.n) ** growth
    needed = last.cold_s + CALLS * call
    if needed <= timeout:
        return None
    grows = "n" if growth == 1 else f"n^{growth:g}"
    return (
        f"not run at n={n:,}: a call took {last.warm_median_s:.2f} s at n={last.n:,}; "
        f"growing as {grows}, its {CALLS} calls there would take about {needed:,.0f} s, past "
        f"the {timeout:.0f} s limit"
    )


def growth(record: generic.Generic, found: dict) -> float:
    """How a strategy's time grows with n at least, for deciding whether to run it: as n^2 for
    reverse mode over a function with one output per row (a pass per output, each over every
    row); as n otherwise."""
    if found.get("batch"):  # a batched record grows with B; the dense loop over it as B^2
        return 1.0 if record.batched else 2.0
    tall = found.get("rows") == found["outputs"]
    return 2.0 if record.mode == "reverse" and tall and record.order == 1 else 1.0


@dataclass
class StrategyRun:
    record: generic.Generic
    status: str = "ok"
    reason: str = ""
    rows: list[Row] = field(default_factory=list)

    @property
    def ok_rows(self) -> list[Row]:
        return [r for r in self.rows if r.ok]


def _refuse_coupled(runs: list[StrategyRun]) -> None:
    """Per-row strategies that disagree with the reference while a full one agrees: refused,
    the rows being coupled."""
    full_agree = any(r.status == "ok" and not r.record.per_row for r in runs)
    for run in runs:
        if run.record.per_row and run.status == "wrong" and full_agree:
            err = run.rows[0].max_rel_error
            run.status = "refused"
            run.reason = (
                f"rows are coupled: one row at a time gives a Jacobian {err:.1e} away from "
                "the full one (an output depends on other rows: a batch mean, a control "
                "variate, a normalisation)"
            )


def _measured(spec: dict, limits: Limits, load: Load | None = None) -> dict:
    """One worker's record. Every row is timed in its own process and compared with rows of
    other processes, so glibc runs with its two thresholds fixed (measure.heap.STEADY): left
    to adjust them, it returns a call's freed arrays to the kernel in one process and keeps
    them in the next, and a comparison would measure that, not the strategies."""
    if load is not None:
        load.sample()
    return run_worker(spec, limits, steady=True)


def _journal(journal: Path | None, name: str, row: Row) -> None:
    if journal is not None:
        with journal.open("a") as fh:
            fh.write(json.dumps({"strategy": name, **row.to_json()}) + "\n")


def measure(req: Request, found: dict, reference: Path, progress: Progress,
            journal: Path | None = None,
            load: Load | None = None) -> tuple[list[StrategyRun], StrategyRun]:  # fmt: skip
    """Every chosen strategy at every size, smallest first, each in its own worker; and the
    function itself at each size (the baseline its rows are read against)."""
    runs = [StrategyRun(r) for r in chosen(req, found["framework"])]
    function = StrategyRun(generic.baseline(found["framework"]))
    refusal = per_row_refusal(found) if req.order == 1 else "per-row strategies are Jacobians"
    for run in runs:
        if run.record.per_row and refusal:
            run.status, run.reason = "refused", refusal
    tolerance = TOLERANCE[found["dtype"]]
    limits = Limits(req.mem_cap, req.timeout)
    sizes = sorted(set(req.sizes))
    total = sum(r.status == "ok" for r in runs) * len(sizes)
    done = 0
    for i, n in enumerate(sizes):
        row = _row(n, _measured(_spec(req, found, BASELINE, n), limits, load))
        function.rows.append(row)
        _journal(journal, BASELINE, row)
        progress(f"the function itself n={n:,}: {_said(row, row.status)}")
        for run in runs:
            if run.status != "ok":
                continue
            done += 1
            if i and (why := _too_slow(run.rows, n, req.timeout, growth(run.record, found))):
                run.rows.append(Row(n=n, status="timeout", message=why, ran=False))
                run.status, run.reason = "timeout", why
                progress(f"[{done}/{total}] {run.record.name} n={n:,}: not run (too slow)")
                continue
            checked = n == req.first  # the probe's size: where its reference was saved
            spec = _spec(req, found, run.record.name, n, str(reference) if checked else "")
            row = _row(n, _measured(spec, limits, load))
            run.rows.append(row)
            run.status, run.reason = _status(row, tolerance)
            _journal(journal, run.record.name, row)
            progress(f"[{done}/{total}] {run.record.name} n={n:,}: {_said(row, run.status)}")
        if n == req.first:
            _refuse_coupled(runs)
    return runs, function


def _spec(req: Request, found: dict, name: str, n: int, reference: str = "") -> dict:
    return {
        "target": {"framework": found["framework"], "name": f"generic:{name}"},
        "problem": "user",
        "params": _params(req, n, found["dtype"], reference),
        "threads": req.threads,
        "repeats": req.repeats,
        "warm_budget_s": req.warm_budget_s,
    }


def verify(req: Request, found: dict, names: list[str], progress: Progress,
           rounds: int = CHECK_ROUNDS,
           load: Load | None = None) -> dict[str, list[Row]]:  # fmt: skip
    """The strategies named measured at the target, each in rounds workers, interleaved (one
    of each, in turn, then again, the order rotated each round), so that a disturbance of the
    machine falls on them alike: each one's rows."""
    n = req.at
    limits = Limits(req.mem_cap, req.timeout)
    found_rows: dict[str, list[Row]] = {name: [] for name in names}
    progress(f"checking at n={n:,}: " + ", ".join(names) + f", {rounds} workers each, in turn")
    for r in range(rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            if found_rows[name] and not found_rows[name][-1].ok:
                continue  # failed once at the target: not tried again
            row = _row(n, _measured(_spec(req, found, name, n), limits, load))
            found_rows[name].append(row)
            progress(f"  [{r + 1}/{rounds}] {name} n={n:,}: {_said(row, row.status)}")
    return found_rows


def _said(row: Row, status: str) -> str:
    if status != "ok":
        return status
    peak = (row.peak_bytes or 0) / 2**20
    return f"ok, {row.warm_median_s * 1e3:,.1f} ms warm, {peak:,.0f} MiB peak"


def fresh_reference_dir() -> Path:
    return Path(tempfile.mkdtemp(prefix="jacbench-advise-"))


def cleanup(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def finite(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isinf(x)) else x
