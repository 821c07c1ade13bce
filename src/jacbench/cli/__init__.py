"""The jacbench command line.

Each command parses its arguments and calls one function of the package. Errors a user can
cause print one line and exit with status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from jacbench.cli.cluster import add_cluster
from jacbench.errors import BuildStopped, UsageError
from jacbench.problems import arguments
from jacbench.report import dataset
from jacbench.units import parse_size

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """argparse that reports a bad argument as one line (no usage dump) with status 2."""

    def error(self, message: str):  # type: ignore[override]
        raise UsageError(message)


def _split(text: str | None) -> list[str] | None:
    return [x.strip() for x in text.split(",") if x.strip()] if text else None


def _sizes(text: str | None, option: str) -> list[int] | None:
    values = _split(text)
    return [parse_size(v, option) for v in values] if values else None


def _add_limits(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mem-cap", help="kill a case above this RSS (default: min(8GiB, RAM/2))")
    p.add_argument("--timeout", type=float, help="kill a case after this many seconds")


def build_parser() -> argparse.ArgumentParser:
    from jacbench.cli.advise import add_advise
    from jacbench.cli.book import (
        _add_book,
        _add_check_html,
        _add_notebook,
        _add_pdf,
        _add_reference,
    )

    parser = _Parser(prog="jacbench", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    _add_strategies(sub)
    _add_jacobian(sub)
    _add_measure(sub)
    _add_sweep(sub)
    _add_table(sub)
    _add_crossover(sub)
    _add_book(sub)
    _add_reference(sub)
    _add_notebook(sub)
    _add_check_html(sub)
    add_advise(sub, _add_limits)
    _add_pdf(sub)
    return parser


# What a command that builds says when the build stops (exit status 1).
STOPPED = {"book": "book build stopped", "notebook": "notebook stopped", "pdf": "pdf stopped"}


def main(argv: Sequence[str] | None = None) -> int:
    args = None
    try:
        args = build_parser().parse_args(argv)
        return args.func(args)
    except UsageError as e:
        print(f"jacbench: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except BuildStopped as e:
        what = STOPPED.get(getattr(args, "command", ""), "stopped")
        print(f"jacbench: {what}: {e}", file=sys.stderr)
        return 1


def _add_strategies(sub) -> None:
    """The strategies command's options."""
    p = sub.add_parser("strategies", help="list the registered strategies")
    p.add_argument("--json", action="store_true", help="JSON records instead of a table")
    p.set_defaults(func=cmd_strategies)


def cmd_strategies(args: argparse.Namespace) -> int:
    from jacbench.strategies.listing import listing

    print(listing(as_json=args.json))
    return 0


def _add_jacobian(sub) -> None:
    """The jacobian command's options."""
    p = sub.add_parser("jacobian", help="compute one Jacobian and check it against the closed form")
    p.add_argument("--framework", required=True)
    p.add_argument("--strategy", required=True)
    arguments.add_problem_arguments(p)
    arguments.add_device_argument(p)
    p.add_argument(
        "--output",
        help="write jacobian (N, 2) and terminal (N,) to this .npz (moments: jacobian (3, n), x)",
    )
    p.set_defaults(func=cmd_jacobian)


def cmd_jacobian(args: argparse.Namespace) -> int:
    from jacbench.strategies import compute

    problem, params = arguments.from_arguments(args)
    print(compute.jacobian(args.framework, args.strategy, problem, params, args.output,
                           args.device))  # fmt: skip
    return 0


def _reference_defaults():
    """The defaults of the reference dataset's profile (a profiles.Group): threads, repeats,
    warm_budget_s, ..."""
    from jacbench.measure import profiles

    return profiles.load_profile(dataset.PROFILE).defaults


def _add_measure(sub) -> None:
    """The measure command's options."""
    p = sub.add_parser("measure", help="measure one case in an isolated, memory-capped worker")
    p.add_argument("--framework")
    p.add_argument(
        "--strategy",
        help="a strategy, second:METHOD or simulation:EXECUTION (see 'jacbench strategies')",
    )
    p.add_argument("--callable", help="measure module:function (called with no arguments)")
    arguments.add_problem_arguments(p)
    arguments.add_device_argument(p)
    _add_limits(p)
    p.add_argument("--allocator", default="glibc", help="glibc, glibc-mmap or jemalloc (and the "
                   "allocator experiment's glibc-arena1, glibc-trim; glibc-heap: no block "
                   "mapped)")  # fmt: skip
    # A case measured by hand gets the reference dataset's settings, so that it is the row the
    # book shows (where the profile gives that case no settings of its own).
    ref = _reference_defaults()
    for flag, kind, key, what in (
        ("--threads", int, "threads", "threads of the framework's pools"),
        ("--repeats", int, "repeats", "at most this many warm calls (and pairs)"),
        ("--warm-budget", float, "warm_budget_s", "seconds of warm calls, past which no more are "
         "made than the minimum (3 calls, 3 pairs)"),
    ):  # fmt: skip
        value = getattr(ref, key)
        where = f"default {value}, as in the reference dataset's profile ({dataset.PROFILE})"
        p.add_argument(flag, type=kind, default=value, help=f"{what}: {where}")
    p.add_argument(
        "--ratio-processes",
        type=int,
        default=1,
        help="workers timing a strategy against its simulation, side by side "
        "(default 1; the profile asks for 3 at N = 10^5 and 10^6)",
    )
    p.set_defaults(func=cmd_measure)


def cmd_measure(args: argparse.Namespace) -> int:
    from jacbench.measure import runner
    from jacbench.measure.case import Case
    from jacbench.measure.targets import CallableTarget

    if args.callable:
        from jacbench.problems import user

        target = CallableTarget(args.callable)
        user.check_findable(user.parse_name(target.name, "--callable"))
        framework, strategy = "callable", target.text
    elif args.framework and args.strategy:
        framework, strategy = args.framework, args.strategy
    else:
        raise UsageError("give --framework and --strategy, or --callable module:function")
    problem, params = arguments.from_arguments(args)
    case = Case(framework=framework, strategy=strategy, problem=problem, **params,
                threads=args.threads, allocator=args.allocator, mem_cap=args.mem_cap,
                device=args.device,
                timeout=_reference_defaults().timeout if args.timeout is None else args.timeout,
                repeats=args.repeats, warm_budget_s=args.warm_budget,
                ratio_processes=args.ratio_processes)  # fmt: skip
    print(json.dumps(runner.measure_one(case), default=str))
    return 0


def _add_sweep(sub) -> None:
    """The sweep command's options."""
    p = sub.add_parser("sweep", help="measure a profile's cases into a results CSV (resumable)")
    p.add_argument("--profile", default="quick", help="quick, standard, full, or a .yaml path")
    p.add_argument("--frameworks", help="comma-separated subset")
    p.add_argument("--strategies", help="comma-separated subset of strategy names")
    p.add_argument("--paths", help="comma-separated N values, e.g. 1e2,1e3,1e4")
    p.add_argument("--inputs", help="comma-separated n values of the moments groups")
    p.add_argument("--problems", help="comma-separated subset: gbm, moments, moments-batch")
    _add_limits(p)
    p.add_argument("--allocators", help="comma-separated: glibc, glibc-mmap, jemalloc, "
                   "glibc-arena1, glibc-trim, glibc-heap")  # fmt: skip
    p.add_argument("--threads", type=int)
    arguments.add_device_argument(p, default=None)
    p.add_argument("--out", help="results CSV (default: results/PROFILE.csv)")
    p.add_argument("--fresh", action="store_true", help="discard earlier rows and measure again")
    p.add_argument("--jobs", type=int, help="workers at once (default: the profile's, else 1)")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.add_argument("--wait", action="store_true",
                   help="if another sweep is writing the file, wait for it to end (default: "
                   "exit with status 2)")  # fmt: skip
    p.add_argument("--stop-after", type=float, help="start no case after this many seconds; "
                   "a rerun measures the rest")  # fmt: skip
    add_cluster(p)
    p.set_defaults(func=cmd_sweep)


def cmd_sweep(args: argparse.Namespace) -> int:
    from jacbench.measure import sweeps

    overrides = {
        "frameworks": _split(args.frameworks),
        "strategies": _split(args.strategies),
        "paths": _sizes(args.paths, "--paths"),
        "inputs": _sizes(args.inputs, "--inputs"),
        "problems": _split(args.problems),
        "allocators": _split(args.allocators),
        "mem_cap": args.mem_cap,
        "timeout": args.timeout,
        "threads": args.threads,
        "device": args.device,
    }
    print(sweeps.sweep(args.profile, overrides, args.out, args.fresh, args.jobs, args.quiet,
                       args.wait, args.stop_after, args.cluster))  # fmt: skip
    return 0


def _add_table(sub) -> None:
    """The table command's options."""
    p = sub.add_parser("table", help="print a Markdown table of a results CSV at one N")
    p.add_argument("results", help="a results CSV written by sweep")
    p.add_argument("--paths", type=arguments.size_type(), required=True, help="N to tabulate")
    p.add_argument("--allocator", default="glibc")
    p.set_defaults(func=cmd_table)


def cmd_table(args: argparse.Namespace) -> int:
    from jacbench.report.tables import results_table

    print(results_table(args.results, args.paths, args.allocator), end="")
    return 0


def _add_crossover(sub) -> None:
    """The crossover command's options."""
    p = sub.add_parser("crossover", help="forward against reverse time from tall to wide shapes")
    p.add_argument("--frameworks", default="torch,tensorflow,jax")
    p.add_argument(
        "--total", type=arguments.size_type(), default=2**12, help="m * n, a power of two"
    )
    p.add_argument("--steps", type=int, default=9, help="shapes from tall to wide")
    p.add_argument(
        "--side",
        type=arguments.size_type(),
        default=None,
        help="longest side m or n at the extremes, a power of two from sqrt(total) "
        "to min(total, 2^14) (default: both extremes, m = total and n = total)",
    )
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--threads", type=int, default=1)
    _add_limits(p)
    p.add_argument("--jobs", type=int, default=1, help="workers at once")
    p.add_argument("--out", help="also keep the rows in this results CSV (resumable)")
    p.set_defaults(func=cmd_crossover)


def cmd_crossover(args: argparse.Namespace) -> int:
    from pathlib import Path

    from jacbench.measure import crossover
    from jacbench.report.tables import crossover_report

    frameworks = _split(args.frameworks) or []
    rows = crossover.measure(
        frameworks,
        out=Path(args.out) if args.out else None,
        total=args.total,
        steps=args.steps,
        side=args.side,
        repeats=args.repeats,
        threads=args.threads,
        mem_cap=args.mem_cap,
        timeout=300.0 if args.timeout is None else args.timeout,
        jobs=args.jobs,
    )
    print(crossover_report(rows, frameworks), end="")
    return 0
