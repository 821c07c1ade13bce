"""One page built alone, as the book builds it, and how its prose reads: for whoever writes a
chapter, without executing the whole book.

``python -m jacbench.publish.single 04-gbm`` stages the book's sources, executes that page's
notebook on the reference dataset (or ``--results``), builds it with jupyter-book as the only page
(cross-references to other pages are not checked) and prints its reading against the targets of
``publish.prose``, then each sentence over the length target and the sentences with the most
numbers. The HTML is left in ``_build/single/NAME/html``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

from jacbench.publish import book, prose
from jacbench.publish.execution import execute, present
from jacbench.report import dataset


def build_page(
    name: str,
    root: Path,
    results: Path | None = None,
    out: Path | None = None,
    parameters: dict | None = None,
) -> Path:
    """Execute one page's notebook (with parameters beside the book's, where given) and build
    it alone; returns its HTML file."""
    root = root.resolve()
    ds = dataset.Dataset((results or dataset.reference(root).results).resolve())
    out = (out or root / "_build" / "single" / name).resolve()
    staging = out / "src"
    book.stage(root, staging)
    staged = book.stage_data(ds, staging, root)
    nb = book.convert(book.source_of(root, name), book.staged_notebook(staging, name))
    if name == book.FRONT:
        (staging / book.FRONT_SOURCE).unlink()
    from jacbench.publish.execution import declared

    params = declared(nb, {**book.parameters_for(staged), **(parameters or {})})
    execute(nb, params, staging, book.source_name(name))
    present(nb, book.shown_for(params, ds, root), box=name != book.FRONT)
    docname = book.staged_notebook(staging, name).relative_to(staging).with_suffix("").as_posix()
    toc = {"format": "jb-book", "root": docname}
    (staging / "_toc.yml").write_text(yaml.safe_dump(toc))
    html = out / "html"
    book.jupyter_book(staging, html, warnings_as_errors=False)
    page = html / f"{docname}.html"
    return page if page.exists() else html / "index.html"


def report(page: Path, name: str, main: bool) -> str:
    """The page's reading, its problems, and the sentences to look at first."""
    said = prose.sentences(page.read_text(errors="replace"))
    reading = prose.Reading.of(name, said)
    lines = [prose.table([reading])]
    lines += [f"PROBLEM {p}" for p in reading.problems(main) + prose.repeated_shapes({name: said})]
    long = [s for s in said if len(prose.words(s)) > prose.LONG]
    lines += [f"LONG ({len(prose.words(s))} words): {s}" for s in long]
    dense = sorted(said, key=prose.numbers, reverse=True)[:8]
    lines += [f"NUMBERS ({prose.numbers(s)}): {s}" for s in dense if prose.numbers(s) > 1]
    paren = [s for s in said if s.count("(")]
    lines += [f"PARENTHESES: {s}" for s in paren[:10]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", help="a notebook's name (04-gbm) or index for the front page")
    parser.add_argument("--results", type=Path, help="a results file (default: the reference)")
    parser.add_argument("--root", type=Path, default=Path("."), help="the checkout's root")
    args = parser.parse_args(argv)
    page = build_page(args.name, args.root, args.results)
    main_chapter = f"notebooks/{args.name}" in prose_main()
    print(f"built {page}")
    print(report(page, args.name, main_chapter))
    return 0


def prose_main() -> set[str]:
    from jacbench.publish.readerchecks import SUMMARIZED

    return set(SUMMARIZED)


if __name__ == "__main__":
    sys.exit(main())
