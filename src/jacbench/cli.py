"""The jacbench command line.

Errors a user can cause print one line and exit with status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence

from jacbench.errors import UsageError

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """argparse that reports a bad argument as one line (no usage dump) with status 2."""

    def error(self, message: str):  # type: ignore[override]
        raise UsageError(message)


def _add_gbm_arguments(p: argparse.ArgumentParser) -> None:
    from jacbench.problems.gbm import DTYPES, GBMParams

    d = GBMParams()
    p.add_argument("--problem", default="gbm", help="problem to differentiate (default: gbm)")
    p.add_argument("--paths", type=int, default=d.paths, help="N, number of paths")
    p.add_argument("--steps", type=int, default=d.steps, help="M, number of time steps")
    p.add_argument("--spot", type=float, default=d.spot)
    p.add_argument("--vol", type=float, default=d.vol)
    p.add_argument("--drift", type=float, default=d.drift)
    p.add_argument("--maturity", type=float, default=d.maturity, help="T in years")
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--dtype", default=d.dtype, help=f"one of {', '.join(DTYPES)}")
    p.add_argument(
        "--chunk-size", type=int, default=d.chunk_size, help="batch of the chunked strategies"
    )


def gbm_params(args: argparse.Namespace):
    """GBMParams from parsed arguments, validated (UsageError on bad input)."""
    from jacbench.problems.gbm import GBMParams

    if args.problem != "gbm":
        raise UsageError(f"unknown problem {args.problem!r}; choose one of: gbm")
    return GBMParams(
        paths=args.paths,
        steps=args.steps,
        spot=args.spot,
        vol=args.vol,
        drift=args.drift,
        maturity=args.maturity,
        seed=args.seed,
        dtype=args.dtype,
        chunk_size=args.chunk_size,
    ).validate()


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="jacbench", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("strategies", help="list the registered strategies")
    p.add_argument("--json", action="store_true", help="JSON records instead of a table")
    p.set_defaults(func=cmd_strategies)

    p = sub.add_parser("jacobian", help="compute one Jacobian and check it against the closed form")
    p.add_argument("--framework", required=True)
    p.add_argument("--strategy", required=True)
    _add_gbm_arguments(p)
    p.add_argument("--output", help="write jacobian (N, 2) and terminal (N,) to this .npz")
    p.set_defaults(func=cmd_jacobian)
    return parser


def cmd_strategies(args: argparse.Namespace) -> int:
    from jacbench.strategies.registry import STRATEGIES

    if args.json:
        print(json.dumps([s.record() for s in STRATEGIES], indent=2))
        return 0
    rows = [("framework", "name", "mode", "batching", "compiled", "dtypes", "description")]
    for s in STRATEGIES:
        compiled = s.execution if s.compiled else "no"
        rows.append(
            (s.framework, s.name, s.mode, s.batching, compiled, ",".join(s.dtypes), s.description)
        )
    widths = [max(len(r[i]) for r in rows) for i in range(6)]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)) + "  " + r[6])
    return 0


def cmd_jacobian(args: argparse.Namespace) -> int:
    import numpy as np

    from jacbench.problems import gbm
    from jacbench.strategies import registry

    strategy = registry.get(args.framework, args.strategy)
    params = gbm_params(args)
    strategy.check(params.dtype)
    case = gbm.make_case(params)
    start = time.perf_counter()
    result = strategy.build(case)()
    elapsed = time.perf_counter() - start
    if strategy.faithful:
        reference = gbm.jacobian_from_terminal(params, result.terminal)
        against = "closed form from its own paths"
    else:
        reference = gbm.jacobian_closed_form(case)
        against = "closed form"
    error = gbm.relative_error(result.jacobian, reference)
    if args.output:
        np.savez(args.output, jacobian=result.jacobian, terminal=result.terminal)
    print(
        f"{strategy.key}  N={params.paths} M={params.steps} {params.dtype}  "
        f"time {elapsed:.4f} s (first call, set-up and compilation included)  "
        f"max relative error {error:.2e} vs {against}"
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return args.func(args)
    except UsageError as e:
        print(f"jacbench: error: {e}", file=sys.stderr)
        return EXIT_USAGE
