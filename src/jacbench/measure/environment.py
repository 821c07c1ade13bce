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
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import psutil

from jacbench.constants import GIB
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


# The vector extensions a framework's kernels are chosen by (oneDNN, Eigen and XLA dispatch on
# them), in the order of preference; the best one present is recorded.
ISA_FLAGS = ("avx512f", "avx2", "avx", "sse4_2")


def cpu_detail(cpuinfo: str | None = None) -> str:
    """What the model name may not say ('AMD EPYC' names several generations): vendor family
    and model numbers and the widest vector extension, 'family 25 model 17, avx512f'; '' where
    /proc/cpuinfo cannot be read."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            return ""
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    flags = set(fields.get("flags", "").split())
    isa = next((f for f in ISA_FLAGS if f in flags), "")
    parts = [f"family {fields['cpu family']} model {fields['model']}"
             if "cpu family" in fields and "model" in fields else "", isa]  # fmt: skip
    return ", ".join(p for p in parts if p)


def git_commit(where: Path | None = None) -> str:
    """The commit of the checkout holding where (this package by default) that measured, with
    '+changes' where its tracked code (src/) differs from that commit, so that the record does
    not credit the commit with code it did not hold; 'unknown' outside a checkout."""
    here = where or Path(__file__).resolve().parent
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, cwd=here, timeout=10)  # fmt: skip
        commit = out.stdout.strip()
        if not commit:
            return "unknown"
        # The code only: a sweep rewrites its own results file, tracked for the reference.
        diff = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", ":(top)src"],
                              capture_output=True, cwd=here, timeout=10)  # fmt: skip
        return commit + ("+changes" if diff.returncode == 1 else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


# nvidia-smi's fields for each GPU, as the sidecar records them.
GPU_QUERY = ("name", "driver_version", "memory.total")


def gpus(run=subprocess.run) -> list[dict[str, str]]:
    """The machine's NVIDIA GPUs as nvidia-smi lists them (name, driver_version, memory.total,
    and the CUDA version the driver supports); empty where there is none or no nvidia-smi."""
    try:
        out = run(["nvidia-smi", f"--query-gpu={','.join(GPU_QUERY)}", "--format=csv,noheader"],
                  capture_output=True, text=True, timeout=30)  # fmt: skip
        if out.returncode != 0:
            return []
        header = run(["nvidia-smi"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    cuda = header.split("CUDA Version:", 1)[1].split()[0] if "CUDA Version:" in header else ""
    rows = [[x.strip() for x in line.split(",")] for line in out.stdout.splitlines() if line]
    return [dict(zip(GPU_QUERY, r, strict=False)) | {"cuda_driver": cuda} for r in rows]


# A file holding the probe's record, made on this machine earlier in the same run (scripts/gpu-sweep
# probes once, to fail fast, and its sweeps' sidecars read that record instead of probing again).
PROBE_VARIABLE = "JACBENCH_DEVICE_PROBE"


def device_probe(timeout: float = 180) -> dict[str, Any]:
    """What PyTorch and JAX see of the GPU (measure.device_probe), from a child process: the
    parent of a sweep never imports a framework. An "error" entry where the probe failed."""
    made = os.environ.get(PROBE_VARIABLE)
    if made and Path(made).is_file():
        lines = [ln for ln in Path(made).read_text().splitlines() if ln.startswith("{")]
        if lines:
            return json.loads(lines[-1])
    try:
        out = subprocess.run([sys.executable, "-m", "jacbench.measure.device_probe"],
                             capture_output=True, text=True, timeout=timeout)  # fmt: skip
        lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
        if lines:
            return json.loads(lines[-1])
        tail = (out.stderr.strip().splitlines() or [""])[-1]
        return {"error": f"the probe exited with status {out.returncode}: {tail[:300]}"}
    except (OSError, subprocess.SubprocessError) as e:
        return {"error": f"{type(e).__name__}: {e}"}


def environment() -> dict[str, Any]:
    """The software and machine a row was measured on; part of every row's key (the GPU only
    where there is one, so that a CPU machine's key is what it was before GPUs were recorded)."""
    found = gpus()
    gpu = {"gpu": "; ".join(g["name"] for g in found)} if found else {}
    return {
        "python": platform.python_version(),
        "numpy": _version("numpy"),
        "torch": _version("torch"),
        "tensorflow": _version("tensorflow-cpu"),
        "jax": _version("jax"),
        "jaxlib": _version("jaxlib"),
        "cpu": _cpu_model(),
        "cpu_detail": cpu_detail(),
        "cores": os.cpu_count(),
        "ram_bytes": psutil.virtual_memory().total,
        "jemalloc": harness.jemalloc_path() or "not installed",
        **gpu,
    }


def fingerprint(env: dict[str, Any]) -> str:
    """Short hash of the environment: rows measured elsewhere are not reused. The memory counts
    in whole GiB: machines of one kind report totals a few KiB apart from one boot to the next
    (25,276,203,008 and 25,276,194,816 bytes), and a key that told them apart would measure a
    whole dataset again after a reboot. The CPU's generation (cpu_detail) is not keyed: see
    below."""
    # cpu_detail is recorded, not keyed: the reference dataset predates it, and keying on it
    # would make every row of it another machine's (to be measured again, 2.5 h) on any machine.
    keyed = {k: v for k, v in env.items() if k not in ("ram_bytes", "cpu_detail")}
    if env.get("ram_bytes") is not None:
        keyed["ram_gib"] = int(env["ram_bytes"]) // GIB
    return hashlib.sha256(json.dumps(keyed, sort_keys=True).encode()).hexdigest()[:12]


# The bandwidth probe's array: 32 rows of 2^20 float32 values (128 MiB), far past the caches.
BANDWIDTH_SHAPE = (32, 1 << 20)


def read_bandwidth(repeats: int = 5) -> dict[str, Any]:
    """The machine's read bandwidth as one numpy sum over the rows of a large float32 array
    reads it (one core, as numpy sums): bytes over the fastest of a few reads, in GB/s. The
    book's limit rows (limit:read) read the case's normals the same way."""
    import time

    import numpy as np

    a = np.ones(BANDWIDTH_SHAPE, dtype=np.float32)
    a.sum(axis=0)  # every page touched before the clock starts
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        a.sum(axis=0)
        best = min(best, time.perf_counter() - start)
    return {
        "gb_per_s": round(a.nbytes / best / 1e9, 2),
        "how": f"numpy's sum over the first axis of a {a.shape[0]} x {a.shape[1]} float32 array "
        f"({a.nbytes / 2**20:.0f} MiB), the fastest of {repeats} reads, when the sweep began",
    }


def machine_facts(on_gpu: bool) -> dict[str, Any]:
    """What a sidecar records of the machine that measured, beside its environment: the commit of
    its checkout, its read bandwidth and, for cases on a GPU, the GPU's facts (nvidia-smi's, and
    what the frameworks see of it). Read on that machine (a cluster's worker reads its own)."""
    facts = {"git_commit": git_commit(), "read_bandwidth": read_bandwidth()}
    if on_gpu:
        facts.update(gpus=gpus(), device_probe=device_probe())
    return facts


def metadata_record(
    env: dict[str, Any], cases: list, jobs: int, columns: list[str], facts: dict | None = None
) -> dict:
    """The sidecar written beside a results file; facts: those of the machine that measured
    (machine_facts), this one's where None."""
    on_gpu = bool({c.device for c in cases} - {"cpu"})
    facts = machine_facts(on_gpu) if facts is None else facts
    gpu = {k: facts[k] for k in ("gpus", "device_probe") if k in facts} if on_gpu else {}
    return {
        **env,
        "environment_key": fingerprint(env),
        "git_commit": facts["git_commit"],
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "allocators": sorted({c.allocator for c in cases}),
        "cases": len(cases),
        "jobs": jobs,
        # Set in each worker's environment before any framework is imported.
        "thread_variables": {
            str(k): thread_environment(k) for k in sorted({c.threads for c in cases})
        },
        "devices": sorted({c.device for c in cases}),
        "read_bandwidth": facts["read_bandwidth"],
        **gpu,
        "columns": columns,
    }
