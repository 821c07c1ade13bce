"""One Jacobian computed in this process and checked against the closed form (the jacobian
command): no harness, no cap, for trying a strategy out."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from jacbench.errors import UsageError
from jacbench.problems import make_case
from jacbench.strategies import registry


def jacobian(framework: str, name: str, problem: str, params: dict, output: str | None) -> str:
    """Compute, check, optionally save to an .npz; the line to print."""
    strategy = registry.get(framework, name)
    strategy.check(problem, params["dtype"])
    if output and not Path(output).parent.is_dir():
        raise UsageError(f"cannot write {output}: the folder {Path(output).parent} does not exist")
    case = make_case(problem, params, streamed=strategy.blocked)
    start = time.perf_counter()
    result = strategy.build(case)()
    elapsed = time.perf_counter() - start
    error = strategy.error(case, result)
    if problem == "gbm":
        size = f"N={params['paths']} M={params['steps']}"
        arrays = {"jacobian": result.jacobian, "terminal": result.terminal}
    else:
        size = f"{problem} n={params['inputs']}" + (
            f" B={params['batch']}" if params["batch"] else ""
        )
        arrays = {"jacobian": result.jacobian, "x": case.x}
    if output:
        np.savez(output, **arrays)
    against = "closed form from its own paths" if strategy.faithful else "closed form"
    return (
        f"{strategy.key}  {size} {params['dtype']}  "
        f"time {elapsed:.4f} s (first call, set-up and compilation included)  "
        f"max relative error {error:.2e} vs {against}"
    )
