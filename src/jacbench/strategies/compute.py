"""One Jacobian computed in this process and checked against the closed form (the jacobian
command): no harness, no cap, for trying a strategy out."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from jacbench.constants import PATH_PROBLEMS
from jacbench.errors import UsageError
from jacbench.problems import make_case
from jacbench.strategies import devices, registry


def jacobian(
    framework: str, name: str, problem: str, params: dict, output: str | None, device: str = "cpu"
) -> str:
    """Compute on the device, check, optionally save to an .npz; the line to print."""
    strategy = registry.get(framework, name)
    strategy.check(problem, params["dtype"], device)
    if output and not Path(output).parent.is_dir():
        raise UsageError(f"cannot write {output}: the folder {Path(output).parent} does not exist")
    case = make_case(problem, params, streamed=strategy.blocked or strategy.drawn, device=device)
    devices.configure(framework, device)
    start = time.perf_counter()
    result = devices.synchronized(strategy.build(case), framework, device)()
    elapsed = time.perf_counter() - start
    result = devices.to_host(result)
    error = strategy.error(case, result)
    where = "" if device == "cpu" else f" on {device}"
    if problem in PATH_PROBLEMS:
        size = f"{'' if problem == 'gbm' else problem + ' '}N={params['paths']} M={params['steps']}"
        arrays = {"jacobian": result.jacobian, "terminal": result.terminal}
    else:
        size = f"{problem} n={params['inputs']}" + (
            f" B={params['batch']}" if params["batch"] else ""
        )
        arrays = {"jacobian": result.jacobian, "x": case.x}
    if output:
        np.savez(output, **arrays)
    own = strategy.faithful or strategy.drawn
    against = "closed form from its own paths" if own else "closed form"
    return (
        f"{strategy.key}  {size} {params['dtype']}{where}  "
        f"time {elapsed:.4f} s (first call, set-up and compilation included)  "
        f"max relative error {error:.2e} vs {against}"
    )
