"""Resumable sweeps: expand a profile into cases, run each in the harness, one CSV row per case.

Rows are appended one at a time with a single write, so a sweep killed midway leaves only whole
rows (a torn last line is cut off on the next start). A rerun skips every case whose key (spec
and environment) is already in the file, so a killed sweep rerun ends with each case once.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import json
import os
import platform
import subprocess
import sys
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, fields
from importlib import metadata, resources
from pathlib import Path
from typing import Any

import psutil
import yaml

from jacbench.errors import UsageError
from jacbench.measure import harness, model
from jacbench.measure.worker import thread_environment
from jacbench.problems.gbm import GBMParams
from jacbench.problems.moments import MomentsParams
from jacbench.strategies import registry

SPEC_FIELDS = [
    "problem",
    "framework",
    "strategy",
    "target",
    "paths",
    "inputs",
    "batch",
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
    "watched_peak_rss",
    "hwm_reset",
    "max_rel_error",
    "wall_s",
]
COLUMNS = ["key", "env", *SPEC_FIELDS, *METRIC_FIELDS]
# Columns added since the first results files: a file without them is upgraded in place (the
# new columns blank in its rows, which are all gbm rows), so its measurements are kept.
ADDED_COLUMNS = ("inputs", "batch")
# A problem's size columns: what "N" means in a case's label.
SIZE = {"gbm": "paths", "moments": "inputs", "moments-batch": "inputs"}


@dataclass(frozen=True)
class Case:
    """One measurement: a target at a size, with its threads, allocator and caps."""

    framework: str
    # a registered name, "second:<method>", "simulation:<execution>" or "callable:<mod:func>"
    strategy: str
    paths: int = 1000  # gbm: N paths
    inputs: int = 0  # moments: n inputs
    batch: int = 0  # moments-batch: B rows
    steps: int = 52
    dtype: str = "float32"
    chunk_size: int = 256
    threads: int = 1
    spot: float = 100.0
    vol: float = 0.2
    drift: float = 0.03
    maturity: float = 1.0
    seed: int = 1234
    allocator: str = "glibc"
    mem_cap: int = field(default_factory=harness.default_mem_cap)
    timeout: float = 300.0
    repeats: int = 5
    warm_budget_s: float = 10.0
    problem: str = "gbm"

    @property
    def target(self) -> str:
        if self.strategy.startswith("callable:"):
            return "callable"
        if self.strategy.startswith("simulation:"):
            return "simulation"
        if self.strategy.startswith("second:"):
            return "second"
        return "strategy"

    def model_params(self) -> dict[str, Any]:
        """The problem's parameters, as the worker builds its GBMParams or MomentsParams."""
        cls = GBMParams if self.problem == "gbm" else MomentsParams
        return {f.name: getattr(self, f.name) for f in fields(cls)}

    def spec_row(self) -> dict[str, Any]:
        return {
            "problem": self.problem,
            "framework": self.framework,
            "strategy": self.strategy,
            "target": self.target,
            **self.model_params(),
            "threads": self.threads,
            "allocator": self.allocator,
            "mem_cap": self.mem_cap,
            "timeout": self.timeout,
            "repeats": self.repeats,
        }

    def key(self, env: str) -> str:
        text = json.dumps([self.spec_row(), env], sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @property
    def size(self) -> int:
        return getattr(self, SIZE[self.problem])

    def label(self) -> str:
        size = f"N={self.paths:,}" if self.problem == "gbm" else f"n={self.inputs:,}"
        if self.batch:
            size += f" B={self.batch}"
        what = "" if self.problem == "gbm" else f"{self.problem} "
        return f"{what}{self.framework}/{self.strategy} {size} {self.dtype} {self.allocator}"

    def worker_spec(self) -> dict:
        params = self.model_params()
        kind, _, rest = self.strategy.partition(":")
        return harness.spec_for(
            framework=None if kind == "callable" else self.framework,
            strategy=self.strategy if self.target == "strategy" else None,
            simulation=rest if kind == "simulation" else None,
            callable_=rest if kind == "callable" else None,
            second=rest if kind == "second" else None,
            problem=self.problem,
            params=params,
            threads=self.threads,
            repeats=self.repeats,
            warm_budget_s=self.warm_budget_s,
        )


def predicted_peak(case: Case) -> int | None:
    """The memory model's prediction for a registered strategy or second-order method (None
    for simulations and callables)."""
    if case.target not in ("strategy", "second"):
        return None
    if case.problem == "gbm":
        return model.predict(case.framework, case.strategy, case.paths, case.steps, case.dtype,
                             case.chunk_size)  # fmt: skip
    return model.predict_moments(case.framework, case.strategy, case.inputs, case.batch, case.dtype)


def measure_case(case: Case) -> dict[str, Any]:
    """Run one case through the harness (or skip it on the model's word); a full row."""
    row: dict[str, Any] = case.spec_row()
    predicted = predicted_peak(case)
    row["predicted_peak"] = predicted
    if predicted is not None and predicted > 1.5 * case.mem_cap:
        row.update(
            status="skipped-predicted",
            message=f"predicted peak {predicted / harness.GIB:.1f} GiB is above 1.5x the cap "
            f"of {case.mem_cap / harness.GIB:.1f} GiB",
        )
        return row
    try:
        limits = harness.Limits(mem_cap=case.mem_cap, timeout=case.timeout)
        rec = harness.run_worker(case.worker_spec(), limits, case.allocator)
    except UsageError as e:
        rec = {"status": "error", "message": str(e)}
    row.update({k: rec.get(k) for k in METRIC_FIELDS if k in rec})
    return row


# --- environment and metadata --------------------------------------------------------------


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _git_commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            cwd=Path(__file__).resolve().parent,
            timeout=10,
        )
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def environment() -> dict[str, Any]:
    """What a result depends on besides its spec (the parent imports no framework for this)."""
    return {
        "python": platform.python_version(),
        "numpy": _version("numpy"),
        "torch": _version("torch"),
        "tensorflow": _version("tensorflow-cpu"),
        "jax": _version("jax"),
        "jaxlib": _version("jaxlib"),
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "ram_bytes": psutil.virtual_memory().total,
        "jemalloc": harness.jemalloc_path() or "not installed",
    }


def fingerprint(env: dict[str, Any]) -> str:
    """Short hash of the environment: rows measured elsewhere are not reused."""
    return hashlib.sha256(json.dumps(env, sort_keys=True).encode()).hexdigest()[:12]


# --- the results file ------------------------------------------------------------------------


def _repair(path: Path) -> None:
    """Cut a torn last line (a sweep killed while writing) back to the last newline."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with open(path, "rb+") as f:
        f.seek(-1, os.SEEK_END)
        if f.read(1) == b"\n":
            return
        data = path.read_bytes()
        f.truncate(data.rfind(b"\n") + 1)


def _check_header(path: Path) -> None:
    """Upgrade a file from before ADDED_COLUMNS; UsageError if it has other columns."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with open(path, newline="") as f:
        header = next(csv.reader(f), [])
    if header == [c for c in COLUMNS if c not in ADDED_COLUMNS]:
        _upgrade(path)
        return
    if header != COLUMNS:
        raise UsageError(
            f"{path} was written with other columns (another version of jacbench); "
            "use --fresh to measure again or --out for a new file"
        )


def _upgrade(path: Path) -> None:
    """Rewrite a results file with today's columns (new ones blank), atomically."""
    rows = read_rows(path)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(buf.getvalue())
    os.replace(tmp, path)


def read_rows(path: Path) -> list[dict[str, str]]:
    """Rows of a results CSV (whole rows only)."""
    if not path.exists():
        return []
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f) if r.get("key") and None not in r]


def append_row(path: Path, row: dict[str, Any]) -> None:
    """Append one row with a single write (header first if the file is new)."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, extrasaction="ignore", lineterminator="\n")
    new = not path.exists() or path.stat().st_size == 0
    if new:
        writer.writeheader()
    writer.writerow({k: ("" if v is None else v) for k, v in row.items()})
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, buf.getvalue().encode())
        os.fsync(fd)
    finally:
        os.close(fd)


# --- profiles ----------------------------------------------------------------------------------


def profile_names() -> list[str]:
    files = resources.files("jacbench") / "profiles"
    return sorted(p.name[:-5] for p in files.iterdir() if p.name.endswith(".yaml"))


def load_profile(name_or_path: str) -> dict:
    """A profile by name (shipped with jacbench) or by path to a YAML file."""
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") and path.exists():
        text = path.read_text()
    elif name_or_path in profile_names():
        text = (resources.files("jacbench") / "profiles" / f"{name_or_path}.yaml").read_text()
    else:
        raise UsageError(
            f"unknown profile {name_or_path!r}; choose one of: {', '.join(profile_names())} "
            "or give a path to a .yaml file"
        )
    data = yaml.safe_load(text)
    if not isinstance(data, dict) or "groups" not in data:
        raise UsageError(f"profile {name_or_path!r} has no 'groups' list")
    return data


def _strategy_names(framework: str, spec: Any, problem: str = "gbm") -> list[str]:
    """The group's names that exist in this framework for the problem ("all": every
    registered strategy of the problem; second-order methods are named "second:<method>")."""
    from jacbench.second import registry as second

    if spec in (None, "all"):
        return [s.name for s in registry.by_framework(framework, problem)]
    names = [spec] if isinstance(spec, str) else list(spec)
    executions = {s.execution for s in registry.by_framework(framework, "gbm")}
    registered = {s.name for s in registry.by_framework(framework, problem)}
    methods = {m.name for m in second.by_framework(framework, problem)}
    keep = []
    for n in names:
        kind, _, rest = n.partition(":")
        if (
            kind == "callable"
            or (kind == "simulation" and problem == "gbm" and rest in executions)
            or (kind == "second" and rest in methods)
            or n in registered
        ):
            keep.append(n)
    return keep


def _check_group(group: dict, frameworks: list[str], problem: str) -> None:
    """UsageError for an unknown problem or a strategy name that no framework of the group
    has for the group's problem."""
    if problem not in SIZE:
        raise UsageError(f"unknown problem {problem!r} in a profile group; choose one of: "
                         f"{', '.join(SIZE)}")  # fmt: skip
    spec = group.get("strategies")
    if spec in (None, "all"):
        return
    for n in [spec] if isinstance(spec, str) else spec:
        if not any(n in _strategy_names(fw, [n], problem) for fw in frameworks):
            raise UsageError(
                f"profile strategy {n!r} exists in none of {', '.join(frameworks)} for problem "
                f"{problem}; see 'jacbench strategies'"
            )


def _sizes(g: dict, problem: str, overrides: dict) -> list[dict[str, int]]:
    """The group's sizes as Case fields: paths for gbm, inputs (and batch) for moments."""
    if problem == "gbm":
        return [{"paths": int(float(n))} for n in overrides.get("paths") or g.get("paths", [1000])]
    inputs = overrides.get("inputs") or g.get("inputs", [1000])
    batches = g.get("batch", [8] if problem == "moments-batch" else [0])
    return [{"inputs": int(float(n)), "batch": int(b)} for n in inputs for b in batches]


def _dtypes(framework: str, name: str) -> tuple[str, ...]:
    if ":" in name:
        return ("float32", "float64")
    return registry.get(framework, name).dtypes


def expand(profile: dict, overrides: dict | None = None) -> list[Case]:
    """Every case of a profile, with command-line overrides applied to all groups."""
    overrides = {k: v for k, v in (overrides or {}).items() if v is not None}
    defaults = dict(profile.get("defaults", {}))
    cases: list[Case] = []
    seen = set()
    for group in profile["groups"]:
        g = {**defaults, **group}
        problem = g.get("problem", "gbm")
        if overrides.get("problems") and problem not in overrides["problems"]:
            continue
        frameworks = overrides.get("frameworks") or g.get("frameworks") or list(registry.FRAMEWORKS)
        frameworks = [frameworks] if isinstance(frameworks, str) else list(frameworks)
        allocators = overrides.get("allocators") or g.get("allocators", ["glibc"])
        _check_group(g, list(g.get("frameworks") or registry.FRAMEWORKS), problem)
        for fw in frameworks:
            if fw not in g.get("frameworks", frameworks):
                continue
            names = _strategy_names(fw, g.get("strategies"), problem)
            if overrides.get("strategies"):
                names = [n for n in names if n in overrides["strategies"]]
            for name in names:
                if g.get("exclude") and f"{fw}/{name}" in g["exclude"]:
                    continue
                for size in _sizes(g, problem, overrides):
                    for dtype in g.get("dtypes", ["float32"]):
                        if dtype not in _dtypes(fw, name):
                            continue
                        for alloc in allocators:
                            case = Case(
                                framework=fw,
                                strategy=name,
                                problem=problem,
                                **size,
                                steps=int(g.get("steps", 52)),
                                dtype=dtype,
                                chunk_size=int(g.get("chunk_size", 256)),
                                threads=int(overrides.get("threads") or g.get("threads", 1)),
                                allocator=alloc,
                                mem_cap=harness.parse_bytes(
                                    overrides.get("mem_cap")
                                    or g.get("mem_cap")
                                    or harness.default_mem_cap()
                                ),
                                timeout=float(overrides.get("timeout") or g.get("timeout", 300)),
                                repeats=int(g.get("repeats", 5)),
                                warm_budget_s=float(g.get("warm_budget_s", 10)),
                            )
                            if case not in seen:
                                seen.add(case)
                                cases.append(case)
    return cases


# --- the sweep -------------------------------------------------------------------------------


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
            what = "already measured" if skipped else _summary(row)
            print(f"[{self.done}/{self.total}] {case.label()}: {what}", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar:
            self.bar.close()


def _summary(row: dict) -> str:
    if row.get("status") != "ok":
        return f"{row.get('status')} ({row.get('message', '')[:120]})"
    mb = (row.get("cold_peak_over_baseline") or 0) / 2**20
    return f"ok cold {row['cold_s']:.3f} s, warm {row['warm_median_s']:.4f} s, peak +{mb:.0f} MiB"


def run_sweep(
    cases: Iterable[Case], out: Path, quiet: bool = False, fresh: bool = False, jobs: int = 1
) -> Path:
    """Measure every case not yet in out; write the metadata sidecar; return out.

    With jobs > 1, that many workers run at once (give each case threads * jobs <= cores, or
    the cases slow each other down); this process alone writes the rows, one at a time.
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    env = environment()
    env_key = fingerprint(env)
    if fresh and out.exists():
        out.unlink()
    _repair(out)
    _check_header(out)
    done = {r["key"] for r in read_rows(out)}
    cases = list(cases)
    meta = {
        **env,
        "environment_key": env_key,
        "git_commit": _git_commit(),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "allocators": sorted({c.allocator for c in cases}),
        "cases": len(cases),
        "jobs": jobs,
        # Set in each worker's environment before any framework is imported.
        "thread_variables": {
            str(k): thread_environment(k) for k in sorted({c.threads for c in cases})
        },
        "columns": COLUMNS,
    }
    harness.write_json(out.with_suffix(".meta.json"), meta)
    progress = _Progress(len(cases), quiet)
    todo = []
    for case in cases:
        key = case.key(env_key)
        if key in done:
            progress.finish(case, {}, skipped=True)
        else:
            done.add(key)
            todo.append((case, key))
    try:
        with ThreadPoolExecutor(max_workers=max(jobs, 1)) as pool:
            pending = {}
            for case, key in todo:
                progress.start(case)
                pending[pool.submit(measure_case, case)] = (case, key)
            for future in as_completed(pending):
                case, key = pending[future]
                row = future.result()
                row.update(key=key, env=env_key)
                append_row(out, row)
                progress.finish(case, row)
    except KeyboardInterrupt:
        harness.kill_all()  # rows already written stay; a rerun measures the rest
        raise
    finally:
        progress.close()
    return out


def iter_status(rows: Iterable[dict]) -> Iterator[tuple[str, str]]:
    for r in rows:
        yield f"{r['framework']}/{r['strategy']}", r["status"]
