"""Which devices a case can run on. Every strategy runs on the CPU; "cuda" needs an NVIDIA GPU.

Found without importing a framework (the parent of a sweep never imports one): the NVIDIA
driver lists its GPUs under /proc/driver/nvidia/gpus, and nvidia-smi -L names them.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from jacbench.errors import UnsupportedConfiguration, UsageError

DEVICES = ("cpu", "cuda")
DRIVER_GPUS = Path("/proc/driver/nvidia/gpus")


def gpus() -> list[str]:
    """The NVIDIA GPUs of this machine, by name ([] when there is none)."""
    exe = shutil.which("nvidia-smi")
    if exe:
        try:
            out = subprocess.run([exe, "-L"], capture_output=True, text=True, timeout=20)
            names = [ln.strip() for ln in out.stdout.splitlines() if ln.startswith("GPU ")]
            if out.returncode == 0 and names:
                return names
        except (OSError, subprocess.SubprocessError):
            pass
    if DRIVER_GPUS.is_dir():
        return sorted(p.name for p in DRIVER_GPUS.iterdir())
    return []


def check(device: str) -> None:
    """UsageError unless cases can be measured on the device here."""
    if device not in DEVICES:
        raise UsageError(f"unknown device {device!r}; choose one of: {', '.join(DEVICES)}")
    if device == "cpu":
        return
    if not gpus():
        raise UsageError(
            "--device cuda: no GPU is present on this machine (no NVIDIA driver: "
            f"{DRIVER_GPUS} is missing and nvidia-smi finds none); measure on --device cpu"
        )
    raise UnsupportedConfiguration(
        "--device cuda: this machine has a GPU, but jacbench's strategies place their inputs "
        "on the CPU only so far; measure on --device cpu"
    )
