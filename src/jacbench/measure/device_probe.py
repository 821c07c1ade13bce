"""What PyTorch and JAX see of the machine's GPU: versions, CUDA, the device's name.

Run as ``python -m jacbench.measure.device_probe [--require cuda]``; prints one JSON record. It
imports the frameworks, so the parent of a sweep runs it as a child process
(measure.environment.device_probe) and never imports them itself. With --require cuda it exits
with status 1, after printing, unless both frameworks reach a GPU: a broken environment stops a
GPU sweep before it measures anything.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def _torch() -> dict[str, Any]:
    try:
        import torch
    except ImportError as e:
        return {"error": f"{type(e).__name__}: {e}"}
    out: dict[str, Any] = {
        "version": torch.__version__,
        "cuda": torch.version.cuda,
        "cuda_available": torch.cuda.is_available(),
    }
    if out["cuda_available"]:
        props = torch.cuda.get_device_properties(0)
        out.update(
            device=torch.cuda.get_device_name(0),
            capability=".".join(map(str, torch.cuda.get_device_capability(0))),
            memory_bytes=props.total_memory,
            cudnn=torch.backends.cudnn.version(),
            device_count=torch.cuda.device_count(),
        )
    return out


def _jax() -> dict[str, Any]:
    try:
        import jax
        import jaxlib
    except ImportError as e:
        return {"error": f"{type(e).__name__}: {e}"}
    out: dict[str, Any] = {
        "version": jax.__version__,
        "jaxlib": jaxlib.__version__,
        "default_backend": jax.default_backend(),
    }
    gpus = []
    for platform in ("cuda", "gpu"):  # the CUDA plugin's platform, and its older alias
        try:
            gpus = jax.devices(platform)
            break
        except RuntimeError:
            continue
    out["gpus"] = [f"{d.platform}:{d.device_kind}" for d in gpus]
    return out


def probe() -> dict[str, dict[str, Any]]:
    """Each GPU framework's versions and view of the GPU (an "error" where it is missing)."""
    return {"torch": _torch(), "jax": _jax()}


def problems(found: dict[str, dict[str, Any]]) -> list[str]:
    """Why a GPU sweep cannot run, one line each: a framework missing or without a GPU."""
    out = []
    torch, jax = found.get("torch", {}), found.get("jax", {})
    if "error" in torch or not torch.get("cuda_available"):
        out.append(f"PyTorch reaches no GPU: {torch.get('error') or 'cuda not available'}")
    if "error" in jax or not jax.get("gpus"):
        out.append(f"JAX reaches no GPU: {jax.get('error') or 'no gpu device'}")
    return out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    found = probe()
    print(json.dumps(found, default=str))
    if argv[:2] == ["--require", "cuda"]:
        for line in problems(found):
            print(f"jacbench: {line}", file=sys.stderr)
        return 1 if problems(found) else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
