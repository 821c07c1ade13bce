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
    from jacbench.constants import DTYPES
    from jacbench.problems.gbm import GBMParams

    d = GBMParams()
    p.add_argument(
        "--problem", default="gbm", help="gbm (default) or moments (--batch B: B rows of X)"
    )
    p.add_argument("--paths", type=size_type(), default=d.paths, help="N, number of paths")
    p.add_argument("--steps", type=size_type(), default=d.steps, help="M, number of time steps")
    p.add_argument("--spot", type=float, default=d.spot)
    p.add_argument("--vol", type=float, default=d.vol)
    p.add_argument("--drift", type=float, default=d.drift)
    p.add_argument("--maturity", type=float, default=d.maturity, help="T in years")
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--dtype", default=d.dtype, help=f"one of {', '.join(DTYPES)}")
    p.add_argument(
        "--chunk-size",
        type=size_type(),
        default=d.chunk_size,
        help="batch of the chunked strategies; for the blocked ones, the MiB a block may use",
    )
    p.add_argument(
        "--inputs", type=size_type(), default=100_000, help="n, inputs of --problem moments"
    )
    p.add_argument(
        "--batch",
        type=size_type(0),
        default=0,
        help="B rows of X for per-sample Jacobians (moments)",
    )


def add_device_argument(p: argparse.ArgumentParser, default: str | None = "cpu") -> None:
    from jacbench.constants import DEVICES

    where = "the CPU" if default == "cpu" else "each group's (the CPU where it names none)"
    p.add_argument("--device", default=default, choices=DEVICES,
                   help=f"where PyTorch and JAX compute (default: {where})")  # fmt: skip


def from_arguments(args: argparse.Namespace) -> tuple[str, dict]:
    """The problem the arguments name (gbm, moments or moments-batch) and its parameters,
    validated."""
    from dataclasses import asdict, fields

    from jacbench.problems import PARAMS

    if args.problem not in ("gbm", "moments"):
        raise UsageError(f"unknown problem {args.problem!r}; choose one of: gbm, moments")
    problem = "gbm" if args.problem == "gbm" else ("moments-batch" if args.batch else "moments")
    cls = PARAMS[problem]
    params = cls(**{f.name: getattr(args, f.name) for f in fields(cls)}).validate()
    return problem, asdict(params)
