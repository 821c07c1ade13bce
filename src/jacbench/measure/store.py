"""The results file: one CSV row per case, appended whole, and its metadata sidecar.

Rows are appended one at a time with a single write, so a run killed midway leaves only whole
rows (a torn last line is cut off on the next start). One sweep at a time writes a file: it
holds the file's lock (measure.lock) from reading what is measured to its last row. Every reader
goes through here: a file that is not a jacbench results file, or one written with other
columns, is a UsageError; a key found twice (a file two sweeps wrote at once, before the lock)
reads as its last row, and one line on stderr says so.
"""

from __future__ import annotations

import csv
import io
import json
import os
import sys
from pathlib import Path
from typing import Any

from jacbench.errors import UsageError
from jacbench.measure import heap

SPEC_FIELDS = [
    "problem",
    "framework",
    "strategy",
    "target",
    "paths",
    "inputs",
    "batch",
    "outputs",
    "steps",
    "spot",
    "vol",
    "drift",
    "maturity",
    "seed",
    "dtype",
    "chunk_size",
    "threads",
    "allocator",
    "mem_cap",
    "timeout",
    "repeats",
    "ratio_processes",
    # Where the case computed: cuda (a GPU: PyTorch and JAX), or blank for the CPU (every row
    # of a file written before the column, and every CPU row since: its key is unchanged).
    "device",
]
METRIC_FIELDS = [
    "status",
    "message",
    "predicted_peak",
    "import_s",
    "inputs_s",
    "cold_s",
    "warm_n",
    "warm_median_s",
    "warm_min_s",
    "warm_max_s",
    # The target's time over its simulation baseline's, from calls made in pairs in the same
    # worker (see measure.worker), pooled over ratio_processes workers: the median, the spread
    # (the pairs' quartiles widened to the lowest and highest median of one worker), how many
    # pairs, and each worker's median ("4.02;3.87;4.4").
    "ratio_median",
    "ratio_lo",
    "ratio_hi",
    "ratio_pairs",
    "ratio_by_process",
    # The medians of the paired calls' own times, target and baseline, pooled like the ratios:
    # the ratio can be read against them, and they against the warm calls timed alone.
    "pair_target_median_s",
    "pair_baseline_median_s",
    # Each worker's median warm call ("0.0154;0.0497;0.0354": warm_median_s pools them) and the
    # median minor page faults of a call, warm and on each side of the pairs (see
    # measure.worker: glibc may give a call's memory back and the next one fault it in again).
    "warm_by_process",
    "warm_faults",
    "pair_target_faults",
    "pair_baseline_faults",
    "import_peak",
    "inputs_rss_before",
    "inputs_peak",
    "cold_rss_before",
    "cold_peak",
    "cold_peak_over_baseline",
    "warm_rss_before",
    "warm_peak",
    "warm_peak_over_baseline",
    "warm_peak_over_inputs",
    # What glibc's malloc holds before the first call, after it and after the warm calls
    # (mallinfo2, read in the worker; blank under jemalloc): bytes in use by the program
    # (uordblks + hblkhd) and bytes it freed that malloc keeps in its arenas (fordblks). See
    # measure.heap.
    "inputs_heap_in_use",
    "inputs_heap_free_kept",
    "cold_heap_in_use",
    "cold_heap_free_kept",
    "warm_heap_in_use",
    "warm_heap_free_kept",
    "watched_peak_rss",
    "hwm_reset",
    "max_rel_error",
    "wall_s",
    # The measuring method the row was taken with (see METHOD); blank in an older file: 1.
    "method",
    # The allocator variables its workers ran with beyond those of its allocator (malloc_text):
    # glibc's thresholds fixed, where the case is timed in several processes (heap.STEADY).
    "malloc_env",
    # On a GPU (blank on the CPU): device memory allocated before the first call, and the peak of
    # the cold and warm calls (PyTorch's reset per phase, JAX's since the worker started: it has
    # no reset). See measure.gpu_memory.
    "inputs_device_in_use",
    "cold_device_peak",
    "warm_device_peak",
    # A target the second question timed (its registry role question_timed): its calls timed as
    # the question did, time.time() around the call and nothing waited for, their count and
    # median. On a GPU warm_median_s is the same calls waited for; on the CPU the two agree.
    "unsynced_n",
    "unsynced_median_s",
    # A target whose first call compiles (measure.compile_cost): one more call after the warm
    # ones, built again with the compiler's caches empty, and it less the fastest warm call,
    # the compile cost without the first call's allocation.
    "recompile_s",
    "compile_s",
]
# The measuring method of the rows a sweep writes now. A rerun measures again every case whose
# row was taken with an older one and puts the new row in its place (see put_row), so a file
# is whole at every moment of a re-measure. 1: the two sides of a pair timed back to back, the
# warm calls those of the case's first worker only. 2: a quick side called once untimed before
# its timed call (measure.worker.SETTLE_BELOW_S), the warm calls of all the case's workers
# pooled (warm_by_process), the page faults of each call counted. 3: as 2, and a case timed in
# several processes under plain glibc runs with the allocator's thresholds fixed (heap.STEADY,
# the row's malloc_env); for every other case 3 changed nothing, so its row of method 2 stands
# (see current). 4: a JAX case's inputs waited for before its first call (strategies.devices.
# jax_put): under 3 the copy of the normals landed in the first call, its time and memory; for
# the other frameworks 4 changed nothing, so their rows of 3 stand.
METHOD = 4
COLUMNS = ["key", "env", *SPEC_FIELDS, *METRIC_FIELDS]
# The columns that hold numbers (bytes are floats: they can pass 2^53 only in theory); a blank
# cell is None. The rest are text, but hwm_reset, a truth value.
INT_COLUMNS = ("paths", "inputs", "batch", "outputs", "steps", "seed", "chunk_size", "threads",
               "mem_cap", "repeats", "ratio_processes", "warm_n", "ratio_pairs",
               "method", "unsynced_n")  # fmt: skip
FLOAT_COLUMNS = ("spot", "vol", "drift", "maturity", "timeout", "predicted_peak", "import_s",
                 "inputs_s", "cold_s", "warm_median_s", "warm_min_s", "warm_max_s",
                 "ratio_median", "ratio_lo", "ratio_hi", "pair_target_median_s",
                 "pair_baseline_median_s", "warm_faults", "pair_target_faults",
                 "pair_baseline_faults", "import_peak", "inputs_rss_before",
                 "inputs_peak", "cold_rss_before", "cold_peak", "cold_peak_over_baseline",
                 "warm_rss_before", "warm_peak", "warm_peak_over_baseline",
                 "warm_peak_over_inputs", "inputs_heap_in_use", "inputs_heap_free_kept",
                 "cold_heap_in_use", "cold_heap_free_kept",
                 "warm_heap_in_use", "warm_heap_free_kept", "watched_peak_rss", "max_rel_error",
                 "wall_s", "inputs_device_in_use", "cold_device_peak", "warm_device_peak",
                 "unsynced_median_s", "recompile_s", "compile_s")  # fmt: skip


def _header(path: Path) -> list[str]:
    with open(path, newline="") as f:
        return next(csv.reader(f), [])


def older(header: list[str]) -> bool:
    """Whether a header is this version's with some columns missing, in this version's order:
    a file written before those columns existed (they read as blank, and the first row
    appended rewrites the file with every column)."""
    return (
        header[:2] == ["key", "env"]
        and len(header) < len(COLUMNS)
        and header == [c for c in COLUMNS if c in set(header)]
    )


def upgrade(path: Path) -> None:
    """Rewrite an older file (see older) with this version's header, its rows unchanged and
    the new columns blank; atomically, so a kill leaves the old file or the new one."""
    if not path.exists() or path.stat().st_size == 0 or _header(path) == COLUMNS:
        return
    _rewrite(path, read_rows(path))  # checked, the new columns blank


def _rewrite(path: Path, rows: list[dict[str, Any]]) -> None:
    """Write the file anew, this version's header and the rows, atomically."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    _write_atomically(path, buf.getvalue())


def check(path: Path) -> None:
    """UsageError unless path is a results file of this version (an empty file is one)."""
    path = Path(path)
    if not path.exists():
        raise UsageError(f"no results at {path}: run 'jacbench sweep' first")
    if path.is_dir():
        raise UsageError(f"{path} is a folder, not a results CSV")
    if path.stat().st_size == 0:
        return
    try:
        header = _header(path)
    except (UnicodeDecodeError, csv.Error):
        header = []
    if header == COLUMNS or older(header):
        return
    if {"key", "env", "framework", "strategy", "status"} <= set(header):
        raise UsageError(
            f"{path} was written by another version of jacbench (other columns): move it away, "
            "or measure again into it with 'jacbench sweep --fresh'"
        )
    raise UsageError(f"{path} is not a jacbench results file (its first line is not the header "
                     "'jacbench sweep' writes)")  # fmt: skip


def repair(path: Path) -> None:
    """Cut a torn last line (a run killed while writing) back to the last newline."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with open(path, "rb+") as f:
        f.seek(-1, os.SEEK_END)
        if f.read(1) == b"\n":
            return
        data = path.read_bytes()
        f.truncate(data.rfind(b"\n") + 1)


def read_rows(path: Path) -> list[dict[str, str]]:
    """Rows of a results CSV (whole rows only), one per key: the last row of a key found more
    than once (said on stderr, see note_repeats); UsageError if it is not a results file."""
    check(path)
    blank = dict.fromkeys(COLUMNS, "")
    with open(path, newline="") as f:
        rows = [blank | r for r in csv.DictReader(f) if r.get("key") and None not in r]
    last: dict[str, dict[str, str]] = {}
    for r in rows:
        last.pop(r["key"], None)  # the later row takes the key, in its own place
        last[r["key"]] = r
    note_repeats(path, len(rows) - len(last))
    return list(last.values())


# The files (path, size, modification time) whose repeated keys were already reported, so that
# a file read several times by one command is reported once.
_REPORTED: set[tuple[str, int, int]] = set()


def note_repeats(path: Path, repeated: int) -> None:
    """Say in one line on stderr that a results file holds rows whose key an earlier row has,
    and that the last of each is read; once per state of the file."""
    if repeated <= 0:
        return
    st = Path(path).stat()
    state = (str(Path(path).resolve()), st.st_size, st.st_mtime_ns)
    if state in _REPORTED:
        return
    _REPORTED.add(state)
    print(
        f"jacbench: warning: {path} has {repeated} row(s) repeating an earlier row's key "
        "(two sweeps wrote it at once?); the last row of each key is read",
        file=sys.stderr,
        flush=True,
    )


def typed_rows(path: Path) -> list[dict[str, Any]]:
    """Rows with numbers as numbers (None where blank) and hwm_reset as a bool."""
    out = []
    for row in read_rows(path):
        r: dict[str, Any] = dict(row)
        for k in INT_COLUMNS:
            r[k] = int(float(row[k])) if row[k] else None
        for k in FLOAT_COLUMNS:
            r[k] = float(row[k]) if row[k] else None
        r["hwm_reset"] = row["hwm_reset"] == "True"
        out.append(r)
    return out


def row_method(row) -> int:
    """The measuring method of a row, as read (text) or typed (a number, or None, NaN or pd.NA
    where blank; see METHOD): 1 where the file predates the column."""
    return _count(row.get("method"))


def current(method: int, allocator: str, ratio_processes, framework: str = "") -> bool:
    """Whether a row of this method is current for a case of this framework, allocator and
    count of processes: of METHOD for JAX; otherwise of 3 where 3's change (heap.steadies)
    touches the case, else of 2."""
    if framework == "jax":
        return method >= 4
    if heap.steadies(allocator, ratio_processes):
        return method >= 3
    return method >= 2


def row_current(row) -> bool:
    """current, for a results row (read or typed)."""
    return current(row_method(row), row.get("allocator"), _count(row.get("ratio_processes")),
                   row.get("framework") or "")  # fmt: skip


def _count(value) -> int:
    """A whole number as read (text) or typed; 1 where blank (None, NaN, pd.NA, '')."""
    try:
        return int(float(value))
    except (TypeError, ValueError):
        return 1


def malloc_text(steady: bool) -> str:
    """The row's malloc_env: the variables heap.STEADY sets, or nothing."""
    return " ".join(f"{k}={v}" for k, v in heap.STEADY.items()) if steady else ""


def methods(path: Path) -> dict[str, int]:
    """Each case's key in a results file (none if there is no file yet) and the method its row
    was measured with."""
    if not Path(path).exists():
        return {}
    return {r["key"]: row_method(r) for r in read_rows(path)}


def put_row(path: Path, row: dict[str, Any]) -> None:
    """Append the row of a case the file does not hold; a case measured again (with a newer
    method) replaces its row where it stands, the file rewritten atomically."""
    path = Path(path)
    rows = read_rows(path) if path.exists() else []
    if all(r["key"] != row["key"] for r in rows):
        append_row(path, row)
        return
    new = {k: ("" if v is None else v) for k, v in row.items()}
    _rewrite(path, [new if r["key"] == row["key"] else r for r in rows])


def append_row(path: Path, row: dict[str, Any]) -> None:
    """Append one row with a single write (header first if the file is new)."""
    upgrade(path)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, extrasaction="ignore", lineterminator="\n")
    if not path.exists() or path.stat().st_size == 0:
        writer.writeheader()
    writer.writerow({k: ("" if v is None else v) for k, v in row.items()})
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, buf.getvalue().encode())
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_atomically(path: Path, text: str) -> None:
    """Write a temporary file and rename it over the target: a kill leaves one or the other."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically."""
    _write_atomically(path, json.dumps(data, indent=1, default=str))
