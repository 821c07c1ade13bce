"""The problem's parameters as command-line arguments, shared by the commands that compute or
measure one case (jacbench jacobian, jacbench measure)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from jacbench.errors import UsageError
from jacbench.units import parse_size


def size_type(minimum: int = 1) -> Callable[[str], int]:
    """An argparse type for a size written 1e4, 10000 or 10_000."""

    def size(text: str) -> int:
        try:
            return parse_size(text, "the value", minimum)
        except UsageError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    size.__name__ = "size"
    return size


def add_problem_arguments(p: argparse.ArgumentParser) -> None:
    """Every problem's options. Each defaults to None, so that from_arguments can tell an
    option given from one left alone and refuse one its problem does not take."""
    from jacbench.constants import DTYPES
    from jacbench.problems.gbm import GBMParams
    from jacbench.problems.moments import MomentsParams

    d, m = GBMParams(), MomentsParams()
    p.add_argument(
        "--problem",
        default="gbm",
        help="gbm (default), asian (the average of the GBM's dates, a call at the money) or "
        "moments (--batch B: B rows of X)",
    )
    p.add_argument("--paths", type=size_type(), help=f"N, number of paths (gbm: {d.paths})")
    p.add_argument("--steps", type=size_type(), help=f"M, number of time steps (gbm: {d.steps})")
    for name in ("spot", "vol", "drift"):
        p.add_argument(f"--{name}", type=float, help=f"gbm: {getattr(d, name)}")
    p.add_argument("--maturity", type=float, help=f"T in years (gbm: {d.maturity})")
    p.add_argument("--seed", type=int, help=f"default {d.seed}")
    p.add_argument("--dtype", help=f"one of {', '.join(DTYPES)} (default {d.dtype})")
    p.add_argument(
        "--chunk-size",
        type=size_type(),
        help="batch of the chunked strategies; for the blocked ones, the MiB a block may use "
        f"(gbm: {d.chunk_size})",
    )
    p.add_argument("--inputs", type=size_type(), help=f"n, inputs (moments: {m.inputs})")
    p.add_argument(
        "--batch", type=size_type(0), help="B rows of X for per-sample Jacobians (moments: 0)"
    )


def add_device_argument(p: argparse.ArgumentParser, default: str | None = "cpu") -> None:
    from jacbench.constants import DEVICES

    where = "the CPU" if default == "cpu" else "each group's (the CPU where it names none)"
    p.add_argument("--device", default=default, choices=DEVICES,
                   help=f"where PyTorch and JAX compute (default: {where})")  # fmt: skip


def from_arguments(args: argparse.Namespace) -> tuple[str, dict]:
    """The problem the arguments name (gbm, asian, moments or moments-batch) and its parameters,
    validated; UsageError for an option its problem does not take (--inputs on the gbm)."""
    from dataclasses import asdict, fields

    from jacbench.problems import PARAMS

    if args.problem not in ("gbm", "asian", "moments"):
        raise UsageError(f"unknown problem {args.problem!r}; choose one of: gbm, asian, moments")
    problem = (
        args.problem
        if args.problem != "moments"
        else ("moments-batch" if args.batch else "moments")
    )
    cls = PARAMS[problem]
    takes = {f.name for f in fields(cls)}
    everyone = {"paths", "steps", "spot", "vol", "drift", "maturity", "seed", "dtype",
                "chunk_size", "inputs", "batch"}  # fmt: skip
    given = sorted(k for k in everyone - takes if getattr(args, k, None) is not None)
    if given:
        flag = "--" + given[0].replace("_", "-")
        valid = ", ".join("--" + k.replace("_", "-") for k in sorted(takes))
        raise UsageError(f"{flag} does not apply to the {args.problem} problem; it takes {valid}")
    chosen = {k: getattr(args, k) for k in takes if getattr(args, k, None) is not None}
    params = cls(**chosen).validate()
    return problem, asdict(params)
