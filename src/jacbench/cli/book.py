"""The commands that build and check the book: book, reference, notebook, check-html and pdf,
each command's options (_add_NAME) beside it (cmd_NAME)."""

from __future__ import annotations

import argparse
import sys

from jacbench.errors import UsageError
from jacbench.report import dataset


def _add_book(sub) -> None:
    """The book command's options."""
    p = sub.add_parser("book", help="build the HTML book (from the reference dataset)")
    p.add_argument(
        "--profile",
        help="quick, standard or full: measured here into results/PROFILE.csv, then built "
        "from (default: the committed reference dataset, measuring nothing)",
    )
    p.add_argument("--results", help="results CSV (default: results/PROFILE.csv)")
    p.add_argument("--out", help="build folder (default: _build)")
    p.add_argument(
        "--no-measure", action="store_true", help="use the results as they are; sweep nothing"
    )
    p.set_defaults(func=cmd_book)


def cmd_book(args: argparse.Namespace) -> int:
    from pathlib import Path

    from jacbench.publish import book

    index = book.build(
        profile=args.profile,
        root=Path("."),
        results=Path(args.results) if args.results else None,
        out=Path(args.out) if args.out else None,
        measure=not args.no_measure,
    )
    print(index)
    return 0


def _add_reference(sub) -> None:
    """The reference command's options."""
    p = sub.add_parser("reference", help="measure what book/reference lacks; redraw its figure")
    p.add_argument("--figure-only", action="store_true", help="redraw the figure; measure nothing")
    p.add_argument("--check", action="store_true", help="list what it lacks; measure nothing")
    p.add_argument("--fresh", action="store_true",
                   help="measure every case again (after a change to how cases are measured): "
                   "the dataset and its crossover are replaced, not added to")  # fmt: skip
    from jacbench.cli.cluster import add_cluster

    add_cluster(p)
    p.set_defaults(func=cmd_reference)


def cmd_reference(args: argparse.Namespace) -> int:
    from jacbench.measure import store, sweeps
    from jacbench.publish import reference

    if args.fresh and (args.check or args.figure_only):
        raise UsageError("--fresh measures everything again: not with --check or --figure-only")
    if args.cluster is not None:
        from jacbench.measure import cluster

        cluster.kind(args.cluster)  # a bad --cluster is refused before anything is said
    ds = dataset.reference()
    results = ds.results.resolve()
    from jacbench.advise import reference as advice

    if args.check:
        problems = reference.coverage_problems(results)
        missing = advice.missing(ds.advice)
        problems += [f"{advice.FOLDER / name}: no advice.json" for name in missing]
        print("\n".join(problems) or f"{dataset.RESULTS}: every case of the profile is there")
        older = reference.older_method(results)
        if older:
            print(f"{dataset.RESULTS}: {older}")
        return 1 if problems else 0
    if args.fresh:
        reference.discard(results)
    if not args.figure_only:
        from jacbench.cli.cluster import pinned_to_cluster

        sweeps.measure_profile(dataset.PROFILE, results, cluster=args.cluster)
        with pinned_to_cluster(args.cluster):
            advice.measure(ds.advice, fresh=args.fresh)
    figure = reference.draw_figure(results, results.parent / dataset.FIGURE.name)
    print(f"{dataset.RESULTS}: {len(store.read_rows(results))} rows; figure {figure}")
    return 0


def _add_notebook(sub) -> None:
    """The notebook command's options."""
    p = sub.add_parser(
        "notebook", help="convert one chapter notebook to .ipynb and execute it with papermill"
    )
    p.add_argument("name", help="the chapter, e.g. 04-gbm (notebooks/04-gbm.md)")
    p.add_argument(
        "-p",
        "--parameter",
        nargs=2,
        action="append",
        metavar=("KEY", "VALUE"),
        help="a parameter of the notebook's parameters cell (repeatable)",
    )
    p.add_argument("--out", help="the executed notebook (default: _build/notebooks/NAME.ipynb)")
    p.set_defaults(func=cmd_notebook)


def cmd_notebook(args: argparse.Namespace) -> int:
    from pathlib import Path

    from jacbench.publish import book

    print(book.run_notebook(args.name, args.parameter, Path(args.out) if args.out else None))
    return 0


def _add_check_html(sub) -> None:
    """The check-html command's options."""
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


def cmd_check_html(args: argparse.Namespace) -> int:
    from jacbench.publish import browser

    problems, summary = browser.check_built_book(
        args.html, args.source, args.screenshots, args.chromium
    )
    for line in problems:
        print(line)
    print(summary, file=sys.stderr)
    return 1 if problems else 0


def _add_pdf(sub) -> None:
    """The pdf command's options."""
    p = sub.add_parser("pdf", help="print a built book to one PDF with headless Chromium")
    p.add_argument("--build", default="_build", help="the book build folder (default: %(default)s)")
    p.add_argument("--out", help="the PDF (default: BUILD/pdf/jacbench.pdf)")
    p.add_argument(
        "--chromium", help="the browser (default: $JACBENCH_CHROMIUM or /usr/bin/chromium)"
    )
    p.set_defaults(func=cmd_pdf)


def cmd_pdf(args: argparse.Namespace) -> int:
    from pathlib import Path

    from jacbench.publish import pdf

    out = pdf.make_pdf(Path(args.build), Path(args.out) if args.out else None, args.chromium)
    print(f"{out}: {pdf.page_count(out)} pages, {out.stat().st_size:,} bytes")
    return 0
