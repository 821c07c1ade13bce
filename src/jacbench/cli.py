"""The jacbench command line.

Errors a user can cause print one line and exit with status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import dataclasses
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
    p.add_argument(
        "--problem", default="gbm", help="gbm (default) or moments (--batch B: B rows of X)"
    )
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
    p.add_argument("--inputs", type=int, default=100_000, help="n, inputs of --problem moments")
    p.add_argument(
        "--batch", type=int, default=0, help="B rows of X for per-sample Jacobians (moments)"
    )
    p.add_argument("--device", default="cpu", help="cpu (default) or cuda")


def problem_of(args: argparse.Namespace) -> str:
    """The problem a command's arguments name: gbm, moments or moments-batch."""
    if args.problem not in ("gbm", "moments"):
        raise UsageError(f"unknown problem {args.problem!r}; choose one of: gbm, moments")
    if args.problem == "gbm":
        return "gbm"
    return "moments-batch" if args.batch else "moments"


def moments_params(args: argparse.Namespace):
    """MomentsParams from parsed arguments, validated (UsageError on bad input)."""
    from jacbench.problems.moments import MomentsParams

    return MomentsParams(
        inputs=args.inputs, batch=args.batch, seed=args.seed, dtype=args.dtype
    ).validate()


def gbm_params(args: argparse.Namespace):
    """GBMParams from parsed arguments, validated (UsageError on bad input)."""
    from jacbench.problems.gbm import GBMParams

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
    p.add_argument(
        "--output",
        help="write jacobian (N, 2) and terminal (N,) to this .npz (moments: jacobian (3, n), x)",
    )
    p.set_defaults(func=cmd_jacobian)

    p = sub.add_parser("measure", help="measure one case in an isolated, memory-capped worker")
    p.add_argument("--framework")
    p.add_argument("--strategy")
    p.add_argument("--callable", help="measure module:function (called with no arguments)")
    _add_gbm_arguments(p)
    _add_limits(p)
    p.add_argument("--allocator", default="glibc", help="glibc, glibc-mmap or jemalloc")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--json", action="store_true", help="print the record as JSON (the default)")
    p.set_defaults(func=cmd_measure)

    p = sub.add_parser("sweep", help="measure a profile's cases into a results CSV (resumable)")
    p.add_argument("--profile", default="quick", help="quick, standard, full, or a .yaml path")
    p.add_argument("--frameworks", help="comma-separated subset")
    p.add_argument("--strategies", help="comma-separated subset of strategy names")
    p.add_argument("--paths", help="comma-separated N values, e.g. 1e2,1e3,1e4")
    p.add_argument("--inputs", help="comma-separated n values of the moments groups")
    p.add_argument("--problems", help="comma-separated subset: gbm, moments, moments-batch")
    _add_limits(p)
    p.add_argument("--allocators", help="comma-separated: glibc, glibc-mmap, jemalloc")
    p.add_argument("--threads", type=int)
    p.add_argument("--out", help="results CSV (default: results/PROFILE.csv)")
    p.add_argument("--fresh", action="store_true", help="discard earlier rows and measure again")
    p.add_argument("--jobs", type=int, help="workers at once (default: the profile's, else 1)")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser("table", help="print a Markdown table of a results CSV at one N")
    p.add_argument("results", help="a results CSV written by sweep")
    p.add_argument("--paths", type=int, required=True, help="N to tabulate")
    p.add_argument("--allocator", default="glibc")
    p.set_defaults(func=cmd_table)

    p = sub.add_parser("crossover", help="forward against reverse time from tall to wide shapes")
    p.add_argument("--frameworks", default="torch,tensorflow,jax")
    p.add_argument("--total", type=int, default=2**12, help="m * n, a power of two, at most 2^14")
    p.add_argument("--steps", type=int, default=9, help="shapes from tall to wide")
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", help="also write the rows to this CSV")
    p.set_defaults(func=cmd_crossover)

    p = sub.add_parser("book", help="sweep a profile, execute the notebooks, build the HTML book")
    p.add_argument("--profile", default="standard", help="quick, standard or full")
    p.add_argument("--results", help="results CSV (default: results/PROFILE.csv)")
    p.add_argument("--out", help="build folder (default: _build)")
    p.add_argument(
        "--no-measure", action="store_true", help="use the results as they are; sweep nothing"
    )
    p.set_defaults(func=cmd_book)

    p = sub.add_parser(
        "check-html", help="open every page of a built book in headless Chromium; list problems"
    )
    p.add_argument(
        "html", nargs="?", default="_build/html", help="built HTML (default: %(default)s)"
    )
    p.add_argument(
        "--source", help="folder with _toc.yml and _config.yml (default: the build's staging tree)"
    )
    p.add_argument("--screenshots", help="where to save them (default: beside the HTML folder)")
    p.add_argument(
        "--chromium", help="the browser (default: $JACBENCH_CHROMIUM or /usr/bin/chromium)"
    )
    p.set_defaults(func=cmd_check_html)

    p = sub.add_parser("pdf", help="print a built book to one PDF with headless Chromium")
    p.add_argument("--build", default="_build", help="the book build folder (default: %(default)s)")
    p.add_argument("--out", help="the PDF (default: BUILD/pdf/jacbench.pdf)")
    p.add_argument(
        "--chromium", help="the browser (default: $JACBENCH_CHROMIUM or /usr/bin/chromium)"
    )
    p.set_defaults(func=cmd_pdf)
    return parser


def _add_limits(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mem-cap", help="kill a case above this RSS (default: min(8GiB, RAM/2))")
    p.add_argument("--timeout", type=float, help="kill a case after this many seconds")


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

    from jacbench.measure import devices
    from jacbench.problems import gbm, moments
    from jacbench.strategies import registry

    devices.check(args.device)
    strategy = registry.get(args.framework, args.strategy)
    problem = problem_of(args)
    params = gbm_params(args) if problem == "gbm" else moments_params(args)
    _check_supported(strategy.framework, strategy.name, problem, params.dtype)
    case = gbm.make_case(params) if problem == "gbm" else moments.make_case(params)
    start = time.perf_counter()
    result = strategy.build(case)()
    elapsed = time.perf_counter() - start
    error = strategy.error(case, result)
    if problem == "gbm":
        size = f"N={params.paths} M={params.steps}"
        arrays = {"jacobian": result.jacobian, "terminal": result.terminal}
    else:
        size = f"moments n={params.inputs}" + (f" B={params.batch}" if params.batch else "")
        arrays = {"jacobian": result.jacobian, "x": case.x}
    if args.output:
        np.savez(args.output, **arrays)
    against = "closed form from its own paths" if strategy.faithful else "closed form"
    print(
        f"{strategy.key}  {size} {params.dtype}  "
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


def _case_from_args(args: argparse.Namespace):
    from jacbench.measure import devices, harness
    from jacbench.measure.sweep import Case
    from jacbench.strategies import registry

    if args.callable:
        if ":" not in args.callable:
            raise UsageError(f"--callable must be module:function, got {args.callable!r}")
        framework, strategy = "callable", f"callable:{args.callable}"
    elif not args.framework or not args.strategy:
        raise UsageError("give --framework and --strategy, or --callable module:function")
    elif args.strategy.startswith("second:"):
        from jacbench.second import registry as second

        framework, strategy = (
            args.framework,
            f"second:{second.get(args.framework, args.strategy).name}",
        )
    else:
        s = registry.get(args.framework, args.strategy)
        framework, strategy = s.framework, s.name
    devices.check(args.device)
    problem = problem_of(args)
    params = gbm_params(args) if problem == "gbm" else moments_params(args)
    _check_supported(framework, strategy, problem, params.dtype)
    if args.threads < 1:
        raise UsageError(f"--threads must be at least 1, got {args.threads}")
    harness.allocator_environment(args.allocator)  # UsageError if unknown or missing
    return Case(
        framework=framework,
        strategy=strategy,
        problem=problem,
        **dataclasses.asdict(params),
        threads=args.threads,
        allocator=args.allocator,
        mem_cap=harness.parse_bytes(args.mem_cap) if args.mem_cap else harness.default_mem_cap(),
        timeout=args.timeout if args.timeout else 300.0,
        repeats=args.repeats,
    )


def _check_supported(framework: str, strategy: str, problem: str, dtype: str) -> None:
    """UsageError when the strategy or method cannot run this problem or dtype."""
    from jacbench.errors import UnsupportedConfiguration
    from jacbench.strategies import registry

    if strategy.startswith("callable:"):
        return
    if strategy.startswith("second:"):
        from jacbench.second import registry as second

        method = second.get(framework, strategy)
        if method.problem != problem:
            raise UnsupportedConfiguration(
                f"second-order method {method.key} takes --problem {method.problem.split('-')[0]}"
            )
        return
    s = registry.get(framework, strategy)
    s.check(dtype)
    if problem not in s.problems:
        valid = ", ".join(x.name for x in registry.by_framework(framework, problem))
        raise UnsupportedConfiguration(
            f"strategy {s.key} does not support the {problem} problem; choose one of: {valid}"
        )


def cmd_measure(args: argparse.Namespace) -> int:
    from jacbench.measure.sweep import measure_case

    if args.timeout is not None and args.timeout <= 0:
        raise UsageError(f"--timeout must be positive, got {args.timeout}")
    row = measure_case(_case_from_args(args))
    print(json.dumps(row, default=str))
    return 0


def _split(text: str | None) -> list[str] | None:
    return [x.strip() for x in text.split(",") if x.strip()] if text else None


def _sizes(option: str, text: str | None) -> list[int] | None:
    values = _split(text)
    try:
        sizes = [int(float(n)) for n in values] if values else None
    except ValueError:
        raise UsageError(f"{option} must be numbers like 1e3,1e4, got {text!r}") from None
    if sizes and min(sizes) < 1:
        raise UsageError(f"{option} values must be at least 1")
    return sizes


def cmd_sweep(args: argparse.Namespace) -> int:
    from pathlib import Path

    from jacbench.measure import harness, sweep

    profile = sweep.load_profile(args.profile)
    paths_n = _sizes("--paths", args.paths)
    inputs_n = _sizes("--inputs", args.inputs)
    for name in _split(args.problems) or []:
        if name not in sweep.SIZE:
            raise UsageError(f"unknown problem {name!r}; choose one of: {', '.join(sweep.SIZE)}")
    for name in _split(args.frameworks) or []:
        if name not in ("torch", "tensorflow", "jax", "numpy"):
            raise UsageError(
                f"unknown framework {name!r}; choose one of: torch, tensorflow, jax, numpy"
            )
    from jacbench.second.registry import METHODS
    from jacbench.strategies.registry import STRATEGIES

    known = {s.name for s in STRATEGIES} | {f"second:{m.name}" for m in METHODS}
    for name in _split(args.strategies) or []:
        if name not in known and not name.startswith(("simulation:", "callable:")):
            raise UsageError(f"unknown strategy {name!r}; see 'jacbench strategies'")
    for a in _split(args.allocators) or []:
        harness.allocator_environment(a)
    if args.mem_cap:
        harness.parse_bytes(args.mem_cap)
    if args.timeout is not None and args.timeout <= 0:
        raise UsageError(f"--timeout must be positive, got {args.timeout}")
    cases = sweep.expand(
        profile,
        {
            "frameworks": _split(args.frameworks),
            "strategies": _split(args.strategies),
            "paths": paths_n,
            "inputs": inputs_n,
            "problems": _split(args.problems),
            "allocators": _split(args.allocators),
            "mem_cap": args.mem_cap,
            "timeout": args.timeout,
            "threads": args.threads,
        },
    )
    if not cases:
        raise UsageError("the profile and filters select no case")
    name = profile.get("name", Path(args.profile).stem)
    out = Path(args.out) if args.out else Path("results") / f"{name}.csv"
    jobs = args.jobs if args.jobs is not None else int(profile.get("jobs", 1))
    if jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {jobs}")
    sweep.run_sweep(cases, out, quiet=args.quiet, fresh=args.fresh, jobs=jobs)
    rows = sweep.read_rows(out)
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
    print(f"{out}: {len(rows)} rows ({summary}); metadata in {out.with_suffix('.meta.json')}")
    return 0


def cmd_book(args: argparse.Namespace) -> int:
    from pathlib import Path

    from jacbench.report import book

    try:
        index = book.build(
            profile=args.profile,
            root=Path("."),
            results=Path(args.results) if args.results else None,
            out=Path(args.out) if args.out else None,
            measure=not args.no_measure,
        )
    except book.BookError as e:
        print(f"jacbench: book build stopped: {e}", file=sys.stderr)
        return 1
    print(index)
    return 0


def cmd_check_html(args: argparse.Namespace) -> int:
    from pathlib import Path

    from jacbench.report import browser

    html = Path(args.html)
    if not (html / "index.html").is_file():
        raise UsageError(f"no built book at {html} (no index.html); run 'make book' first")
    if args.source:
        source = Path(args.source)
    else:
        staged = html.parent / "src"
        source = staged if (staged / "_toc.yml").is_file() else Path(".")
    shots = Path(args.screenshots) if args.screenshots else html.parent / "screenshots"
    problems = browser.check_html(html, source, executable=args.chromium)
    book_ = browser.Book.from_sources(source)
    saved, more = browser.screenshots(html, shots, book_, executable=args.chromium)
    problems += more
    for line in problems:
        print(line)
    print(
        f"{len(browser.pages(html))} pages checked in Chromium: {len(problems)} problems; "
        f"screenshots in {shots}: {', '.join(p.name for p in saved)}",
        file=sys.stderr,
    )
    return 1 if problems else 0


def cmd_pdf(args: argparse.Namespace) -> int:
    from pathlib import Path

    from jacbench.report import book, pdf

    try:
        out = pdf.make_pdf(Path(args.build), Path(args.out) if args.out else None, args.chromium)
    except (book.BookError, pdf.PdfError) as e:
        print(f"jacbench: pdf stopped: {e}", file=sys.stderr)
        return 1
    print(f"{out}: {pdf.page_count(out)} pages, {out.stat().st_size:,} bytes")
    return 0


def cmd_table(args: argparse.Namespace) -> int:
    from jacbench.report.publish import markdown_table
    from jacbench.report.results import Results, fmt_bytes, fmt_time, peak_bytes, peak_over_inputs

    try:
        res = Results.load(args.results)
    except (FileNotFoundError, IsADirectoryError) as e:
        raise UsageError(str(e)) from None
    rows = res.select(paths=args.paths, allocator=args.allocator)
    if not rows:
        raise UsageError(f"no rows at N={args.paths} in {args.results}")
    out = []
    for r in rows:
        ok = r["status"] == "ok"
        ratio = res.ratio_to_simulation(r)
        out.append(
            [
                r["framework"],
                r["strategy"],
                r["dtype"],
                r["status"] if ok else f"{r['status']}: {r['message'][:70]}",
                fmt_time(r["cold_s"]) if ok else "–",
                fmt_time(r["warm_median_s"]) if ok else "–",
                f"{ratio:.2f}" if ratio else "–",
                fmt_bytes(peak_bytes(r)) if ok else "–",
                fmt_bytes(peak_over_inputs(r)) if ok else "–",
                f"{r['max_rel_error']:.1e}" if r.get("max_rel_error") is not None else "–",
            ]
        )
    header = ["framework", "strategy", "dtype", "status", "cold", "warm median",
              "time / simulation", "peak RSS", "peak beyond inputs", "max rel. error"]  # fmt: skip
    print(markdown_table(header, out), end="")
    return 0


def cmd_crossover(args: argparse.Namespace) -> int:
    from pathlib import Path

    from jacbench import crossover
    from jacbench.report.publish import markdown_table

    frameworks = _split(args.frameworks) or []
    for fw in frameworks:
        if fw not in ("torch", "tensorflow", "jax", "numpy"):
            raise UsageError(
                f"unknown framework {fw!r}; choose one of: torch, tensorflow, jax, numpy"
            )
    if args.total < 2 or args.total & (args.total - 1) or args.total > 2**14:
        # At the tall and wide extremes the identity basis alone holds total^2 numbers.
        raise UsageError(f"--total must be a power of two (m * n) up to 16384, got {args.total}")
    if args.steps < 2 or args.repeats < 1 or args.threads < 1:
        raise UsageError("--steps must be at least 2, --repeats and --threads at least 1")
    rows = crossover.run_all(frameworks, args.total, args.steps, args.repeats, 2.0, args.threads)
    table = [
        [r["framework"], r["mode"], f"{r['outputs']} x {r['inputs']}",
         f"{r['warm_median_s'] * 1e3:.3f} ms", f"{r['max_rel_error']:.1e}"]
        for r in rows
    ]  # fmt: skip
    print(markdown_table(["framework", "mode", "m x n", "warm median", "max rel. error"], table))
    for fw in frameworks:
        aspect = crossover.crossover([r for r in rows if r["framework"] == fw])
        if aspect is None:
            print(f"{fw}: forward mode is as fast as reverse mode or faster at the widest shape")
        else:
            print(f"{fw}: reverse mode beats forward mode from m / n = {aspect:g} on")
    if args.out:
        crossover.write_csv(rows, Path(args.out))
    return 0
