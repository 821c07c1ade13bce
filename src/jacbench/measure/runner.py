"""Running cases: each in capped worker processes, one results row each, resumably.

A case whose predicted peak is far above its cap is skipped on the model's word, unless it asks
to run despite the model (to record how long it ran and what it held when the cap stopped it).
A case whose cap is above half the machine's RAM runs alone, never beside another. A case with a
simulation baseline is timed against it in pairs, in its own worker and, if one call is quick
enough, in ratio_processes - 1 more (pyperf's way: the spread between processes shows too); those
workers time warm calls as well, and the row's warm times pool every worker's. Under plain glibc
the workers of such a case run with the allocator's thresholds fixed (measure.heap.STEADY):
left to adjust them, glibc put the same call at 15 ms in one worker and 50 ms in the next.
A rerun skips every case whose key (spec and environment) is already in the file, measured with
a method that is current for it (store.current); a row of an older method is measured again and
replaced where it stands. One sweep at a time writes a file (lock.locked).
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import psutil

from jacbench.constants import GIB, PATH_PROBLEMS, SKIP_ABOVE
from jacbench.errors import UsageError
from jacbench.measure import environment, harness, lock, store, worker
from jacbench.measure.case import Case
from jacbench.measure.dataset import Dataset

# A target slower than this per call is timed against its simulation in its own worker only:
# more workers would each repeat its cold call and its pairs for a ratio in the thousands.
MAX_CALL_FOR_MORE_PROCESSES_S = 10.0


def predicted_peak(case: Case) -> int | None:
    """The memory model's absolute peak for the case (None where the target has no model)."""
    model = case.target.memory(case.problem)
    if model is None:
        return None
    if case.problem in PATH_PROBLEMS:
        return model.peak(case.framework, case.paths, case.steps, case.dtype, case.chunk_size)
    return model.peak_moments(case.framework, case.inputs, case.batch, case.dtype)


def ratio_summary(
    per_process: list[list[float]], times: list[dict] | None = None
) -> dict[str, float | int | str]:
    """Median of the pooled paired ratios and their spread: the pairs' quartiles, widened to
    the lowest and highest median of a single worker (processes differ by more than the pairs
    within one do: allocator state, page faults); with the workers' records (times), the
    medians of the paired calls' own times, target and baseline, pooled the same way."""
    pooled = {}
    for side in ("target", "baseline"):
        values = [x for rec in times or [] for x in rec.get(f"pair_{side}_values") or []]
        if values:
            pooled[f"pair_{side}_median_s"] = statistics.median(values)
        faults = [x for rec in times or [] for x in rec.get(f"pair_{side}_fault_values") or []]
        if faults:
            pooled[f"pair_{side}_faults"] = statistics.median(faults)
    per_process = [v for v in per_process if v]
    values = [x for v in per_process for x in v]
    if not values:
        return {}
    if len(values) == 1:
        q1 = q3 = values[0]
    else:
        q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    medians = [statistics.median(v) for v in per_process]
    return {
        "ratio_median": statistics.median(values),
        "ratio_lo": min(q1, *medians),
        "ratio_hi": max(q3, *medians),
        "ratio_pairs": len(values),
        "ratio_by_process": ";".join(f"{m:.4g}" for m in medians),
        **pooled,
    }


def warm_pooled(records: list[dict]) -> dict[str, Any]:
    """The warm calls of every worker that timed some, pooled: their count, median, fastest and
    slowest, each worker's median ("0.0154;0.0497") and the median page faults of a call. Empty
    where no worker reported its calls' times."""
    per_process = [r["warm_values"] for r in records if r.get("warm_values")]
    if not per_process:
        return {}
    out: dict[str, Any] = worker.warm_summary([x for v in per_process for x in v])
    out["warm_by_process"] = ";".join(f"{statistics.median(v):.4g}" for v in per_process)
    faults = [x for r in records for x in r.get("warm_fault_values") or []]
    if faults:
        out["warm_faults"] = statistics.median(faults)
    return out


def measure_case(case: Case) -> dict[str, Any]:
    """Run one case through the harness (or skip it on the model's word); a full row."""
    row: dict[str, Any] = case.spec_row()
    predicted = predicted_peak(case)
    row["predicted_peak"] = predicted
    above = predicted is not None and predicted > SKIP_ABOVE * case.mem_cap
    if above and not case.run_despite_model:
        row.update(
            status="skipped-predicted",
            message=f"predicted peak {predicted / GIB:.1f} GiB is above {SKIP_ABOVE:g}x the cap "
            f"of {case.mem_cap / GIB:.1f} GiB",
        )
        return row
    limits = harness.Limits(mem_cap=case.mem_cap, timeout=case.timeout)
    try:
        rec = harness.run_worker(case.worker_spec(), limits, case.allocator, case.steady_heap)
    except UsageError as e:
        rec = {"status": "error", "message": str(e)}
    paired = [rec]
    quick = rec.get("warm_median_s", float("inf")) < MAX_CALL_FOR_MORE_PROCESSES_S
    if rec.get("status") == "ok" and case.ratio_processes > 1 and quick:
        paired += _more_processes(case, limits, rec)
    row.update({k: rec.get(k) for k in store.METRIC_FIELDS if k in rec})
    row["malloc_env"] = store.malloc_text(case.steady_heap)
    if rec.get("status") == "ok":
        row.update(warm_pooled(paired))
    row.update(ratio_summary([list(r.get("ratio_values") or []) for r in paired], paired))
    if above:
        note = f"run despite the model's predicted peak of {predicted / GIB:.1f} GiB"
        row["message"] = f"{row['message']}; {note}" if row.get("message") else note
    return row


def runs_alone(case: Case, ram: int | None = None) -> bool:
    """Whether the case must run with no other beside it: its cap is above half the RAM, so a
    second case could take what the first is allowed to reach."""
    ram = psutil.virtual_memory().total if ram is None else ram
    return case.mem_cap > ram // 2


def batches(cases: list, jobs: int, ram: int | None = None) -> list[tuple[list, int]]:
    """The cases (or (case, key) pairs) in their order as batches to run one after the other,
    each with the workers it may use: a case that runs alone is a batch of one, with one."""
    out: list[tuple[list, int]] = []
    together: list = []
    for item in cases:
        case = item[0] if isinstance(item, tuple) else item
        if runs_alone(case, ram):
            if together:
                out.append((together, jobs))
                together = []
            out.append(([item], 1))
        else:
            together.append(item)
    if together:
        out.append((together, jobs))
    return out


def measure_one(case: Case) -> dict[str, Any]:
    """A case asked for by hand (the measure command): an allocator that is not installed is
    a UsageError, not an error row."""
    harness.allocator_environment(case.allocator)
    return measure_case(case)


def _more_processes(case: Case, limits: harness.Limits, rec: dict) -> list[dict]:
    """The records of ratio_processes - 1 more workers making warm calls and, for a case with a
    baseline, pairs; a failed one is named in the message and contributes nothing."""
    values: list[dict] = []
    failed = []
    for _ in range(case.ratio_processes - 1):
        spec = case.worker_spec(extra=True)
        more = harness.run_worker(spec, limits, case.allocator, case.steady_heap)
        if more.get("status") == "ok" and more.get("warm_values"):
            values.append(more)
        else:
            failed.append(f"{more.get('status')}: {more.get('message', '')[:100]}")
    if failed:
        note = f"timed in {case.ratio_processes - len(failed)} of {case.ratio_processes} "
        note += "processes (" + "; ".join(failed) + ")"
        rec["message"] = f"{rec['message']}; {note}" if rec.get("message") else note
    return values


class _Progress:
    """tqdm on a terminal, plain lines elsewhere (CI logs)."""

    def __init__(self, total: int, quiet: bool = False):
        self.quiet = quiet
        self.bar = None
        self.done = 0
        self.total = total
        if not quiet and sys.stderr.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="case", dynamic_ncols=True)

    def start(self, case: Case) -> None:
        if self.bar:
            self.bar.set_description(case.label())

    def finish(self, case: Case, row: dict, skipped: bool = False) -> None:
        self.done += 1
        if self.bar:
            self.bar.update(1)
        elif not self.quiet:
            what = "already measured" if skipped else summary(row)
            print(f"[{self.done}/{self.total}] {case.label()}: {what}", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar:
            self.bar.close()


def summary(row: dict) -> str:
    """One line on a measured row, for progress output."""
    if row.get("status") != "ok":
        return f"{row.get('status')} ({(row.get('message') or '')[:120]})"
    mb = (row.get("cold_peak_over_baseline") or 0) / 2**20
    text = f"ok cold {row['cold_s']:.3f} s, warm {row['warm_median_s']:.4f} s, peak +{mb:.0f} MiB"
    if row.get("warm_device_peak") is not None:
        text += f", device peak {row['warm_device_peak'] / 2**20:.0f} MiB"
    if row.get("ratio_median") is not None:
        text += f", {row['ratio_median']:.2f}x its simulation"
    return text


def run_sweep(
    cases: Iterable[Case],
    out: Path,
    quiet: bool = False,
    fresh: bool = False,
    jobs: int = 1,
    wait: bool = False,
    stop_after: float | None = None,
) -> Path:
    """Measure every case not yet in out; write the metadata sidecar; return out.

    With stop_after (seconds), no case starts once that long has passed since the sweep began:
    the cases not started are left for a rerun, which measures them (a machine lent for a while).

    With jobs > 1, that many workers run at once (give each case threads * jobs <= cores, or
    the cases slow each other down), except that a case whose cap is above half the RAM runs
    alone (see batches); this process alone writes the rows, one at a time. Another sweep
    writing out is a UsageError naming it, or with wait, is waited for (lock.locked): two
    sweeps never measure into one file at once.
    """
    out = Path(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"cannot write {out}: {e.strerror}") from None
    with lock.locked(out, wait=wait):
        deadline = None if stop_after is None else time.monotonic() + stop_after
        _sweep_locked(list(cases), out, quiet, fresh, jobs, deadline)
    return out


def _sweep_locked(
    cases: list[Case], out: Path, quiet: bool, fresh: bool, jobs: int, deadline: float | None
) -> None:
    env = environment.environment()
    env_key = environment.fingerprint(env)
    if fresh and out.exists():
        out.unlink()
    if out.exists():
        store.check(out)
        store.repair(out)
    methods = store.methods(out)
    seen: set[str] = set()
    meta = environment.metadata_record(env, cases, jobs, store.COLUMNS)
    store.write_json(Dataset(out).meta, meta)
    progress = _Progress(len(cases), quiet)
    todo = []
    for case in cases:
        key = case.key(env_key)
        method = methods.get(key)
        if method is not None and store.current(
            method, case.allocator, case.ratio_processes, case.framework
        ):
            progress.finish(case, {}, skipped=True)
        elif key not in seen:
            seen.add(key)
            todo.append((case, key))
    again = sum(key in methods for _, key in todo)
    if again and not quiet:
        print(f"jacbench: {again} case(s) of {out} were measured with an older method "
              f"(before method {store.METHOD}): measured again, each row replaced where it "
              "stands", file=sys.stderr, flush=True)  # fmt: skip

    def measure(case: Case) -> dict[str, Any] | None:
        """The case's row, or None once the deadline has passed (the case is not started)."""
        if deadline is not None and time.monotonic() > deadline:
            return None
        return measure_case(case)

    left = 0
    try:
        for batch, workers in batches(todo, max(jobs, 1)):
            with ThreadPoolExecutor(max_workers=workers) as pool:
                pending = {}
                for case, key in batch:
                    progress.start(case)
                    pending[pool.submit(measure, case)] = (case, key)
                for future in as_completed(pending):
                    case, key = pending[future]
                    row = future.result()
                    if row is None:
                        left += 1
                        continue
                    row.update(key=key, env=env_key, method=store.METHOD)
                    store.put_row(out, row)
                    progress.finish(case, row)
    except KeyboardInterrupt:
        harness.kill_all()  # rows already written stay; a rerun measures the rest
        raise
    finally:
        progress.close()
    if left and not quiet:
        print(f"jacbench: the time given (--stop-after) ran out: {left} case(s) not started; "
              "the same command measures them", file=sys.stderr, flush=True)  # fmt: skip
