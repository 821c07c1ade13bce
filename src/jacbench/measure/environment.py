"""What a result depends on besides its case: versions, CPU, memory, allocator, commit.

Read without importing any framework (the parent of a sweep never imports one).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

import psutil

from jacbench.measure import harness
from jacbench.measure.worker import thread_environment


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


def git_commit() -> str:
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
    """The software and machine a row was measured on; part of every row's key."""
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


def metadata_record(env: dict[str, Any], cases: list, jobs: int, columns: list[str]) -> dict:
    """The sidecar written beside a results file."""
    return {
        **env,
        "environment_key": fingerprint(env),
        "git_commit": git_commit(),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "allocators": sorted({c.allocator for c in cases}),
        "cases": len(cases),
        "jobs": jobs,
        # Set in each worker's environment before any framework is imported.
        "thread_variables": {
            str(k): thread_environment(k) for k in sorted({c.threads for c in cases})
        },
        "columns": columns,
    }
