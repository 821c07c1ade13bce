"""Build the book: sweep a profile, execute the notebooks with papermill, run jupyter-book.

A chapter is a notebook stored as text, ``notebooks/NAME.md`` (Jupytext's MyST Markdown
format). Everything happens in a staging tree, ``_build/src``: the book's sources are copied
there, and the results with them (``data/results.csv``, its metadata and the crossover rows
beside it, under those stable names, so the book offers them for download and names no path of
the machine that built it); each chapter is converted to ``.ipynb`` with jupytext and executed
in place with the profile's parameters (paths relative to the staging tree), and
``jupyter-book build`` turns the tree into ``_build/html`` with warnings as errors (papermill is
the only executor).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat

from jacbench.errors import UsageError
from jacbench.measure import profiles, store, sweeps
from jacbench.measure.dataset import Dataset
from jacbench.publish.execution import BookError, declared, execute, execute_all
from jacbench.publish.execution import say as _say
from jacbench.publish.parameters import chapters, checkout_root, parse_parameters
from jacbench.report import dataset

# The front page: a notebook too (it glues the answer's measured price), at the book's root.
FRONT = "index"
FRONT_SOURCE = Path("book/index.md")
SOURCES = (
    "_config.yml",
    "_toc.yml",
    "references.bib",
    "_static",  # the favicon and the book's own CSS
    "book",
    "src/jacbench/strategies",  # shown with literalinclude
    "src/jacbench/second",  # the second-order methods, shown the same way
    "src/jacbench/teaching",
    "src/jacbench/problems",  # the reader's models of "Your function", shown the same way
)
HESTON = "heston"  # the advice "Your function" reads in full


def stage(root: Path, staging: Path) -> None:
    """Copy the book's sources into a fresh staging tree."""
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    for name in SOURCES:
        src = root / name
        dst = staging / name
        if src.is_dir():
            # book/reference, the reference dataset, is staged as data/ like any results file.
            ignore = shutil.ignore_patterns("__pycache__", "reference")
            shutil.copytree(src, dst, ignore=ignore)
        else:
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    # The reference's advice ("Your function"), staged where the chapter's defaults name it:
    # the rest of book/reference is staged as data/ like any results file (stage_data).
    reference = dataset.reference(root)
    if reference.advice.is_dir():
        shutil.copytree(reference.advice, staging / reference.staged.advice)


def shown_path(results: Path, root: Path) -> str:
    """A results file as the book names it: relative to the checkout (book/reference/standard.csv,
    results/quick.csv) when it lies in it, else by its name alone; never a machine's path."""
    try:
        return Path(results).resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return Path(results).name


def stage_data(ds: Dataset, staging: Path, root: Path | None = None) -> Dataset:
    """Copy every file of the dataset that exists (measure.dataset: the results, the crossover
    rows, the other sessions and each one's metadata sidecar) into the staging tree under the
    staged names (data/results.csv, data/results.meta.json, data/results.crossover.csv,
    data/results.second.csv, ...). The staged metadata says which dataset it is ("dataset": its
    path as the book names it, and whether it is the committed reference dataset). Returns the
    staged dataset, named relative to the staging tree."""
    staged = ds.staged
    names = staged.files()
    for name, path in ds.files().items():
        if path.exists():
            (staging / names[name]).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, staging / names[name])
    if root is not None:
        is_reference = ds.results.resolve() == dataset.reference(root).results.resolve()
        meta_file = staging / staged.meta
        meta = json.loads(meta_file.read_text()) if meta_file.exists() else {}
        meta["dataset"] = {"source": shown_path(ds.results, root), "reference": is_reference}
        meta_file.write_text(json.dumps(meta, indent=1))
    return staged


def parameters_for(ds: Dataset) -> dict:
    """What make book passes to every notebook (each takes those its parameters cell declares;
    the rest of its parameters keep the notebook's own defaults): paths as given, relative to
    the staging tree for a book. A notebook opens the rest of the dataset from its results."""
    return {
        "results": ds.results.as_posix(),
        # "Your function": the reference's advice, staged where the checkout holds it.
        "series": ds.advice.as_posix(),
        "advice": (ds.advice / HESTON).as_posix(),
    }


def shown_for(parameters: dict, ds: Dataset, root: Path | None = None) -> dict:
    """The parameters as the book shows them: a file of the staged dataset by the path of the
    file it copies within the checkout (book/reference/standard.csv,
    results/quick.crossover.csv), or by its name, never by a path of the machine that built
    the book."""

    def shown(path: Path) -> str:
        return shown_path(path, root) if root is not None else path.name

    copied = ds.files()
    names = {p.as_posix(): shown(copied[name]) for name, p in ds.staged.files().items()}
    return {k: names.get(v, v) if isinstance(v, str) else v for k, v in parameters.items()}


def source_name(notebook: str) -> str:
    """A page's source as the book names it: notebooks/NAME.md, or the front page's."""
    return FRONT_SOURCE.as_posix() if notebook == FRONT else f"notebooks/{notebook}.md"


def source_of(root: Path, notebook: str) -> Path:
    """A page's source, a Jupytext MyST notebook: notebooks/NAME.md, or book/index.md."""
    path = root / source_name(notebook)
    if not path.exists():
        raise BookError(f"notebook {source_name(notebook)} is missing")
    return path


def staged_notebook(staging: Path, notebook: str) -> Path:
    """Where the staging tree holds a page's executed notebook."""
    if notebook == FRONT:
        return staging / FRONT_SOURCE.with_suffix(".ipynb")
    return staging / "notebooks" / f"{notebook}.ipynb"


def convert(source: Path, out: Path) -> Path:
    """Write the text notebook as .ipynb at out, with jupytext."""
    import jupytext

    out.parent.mkdir(parents=True, exist_ok=True)
    nb = jupytext.read(str(source))
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, str(out))
    return out


def jupyter_book(
    staging: Path, output: Path, builder: str = "html", warnings_as_errors: bool = True
) -> None:
    """Run jupyter-book build (by default HTML, warnings as errors) into output.

    BookError with the warnings when it fails.
    """
    if output.exists():
        shutil.rmtree(output)
    cmd = [
        str(Path(sys.executable).parent / "jupyter-book"),
        "build",
        str(staging),
        "--path-output",
        str(output.parent),
        "--builder",
        builder,
        *(["-W", "-n", "--keep-going"] if warnings_as_errors else ["-n"]),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    built = output.parent / "_build" / builder
    if proc.returncode != 0:
        warnings = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "WARNING" in ln]
        detail = "\n".join(warnings[:20]) or (proc.stdout + proc.stderr)[-3000:]
        raise BookError(f"jupyter-book build failed:\n{detail}")
    shutil.move(str(built), str(output))
    shutil.rmtree(output.parent / "_build", ignore_errors=True)


def run_notebook(name: str, pairs: list[list[str]] | None, out: Path | None = None) -> Path:
    """Convert notebooks/NAME.md to .ipynb and execute it from the root of the checkout that
    holds the working folder, with the given parameters (the rest keep the notebook's defaults),
    each checked against its default's type first. Returns the executed notebook."""
    import papermill

    root = checkout_root()
    name = Path(name).stem if name.endswith((".md", ".ipynb")) else name
    if name not in (FRONT, *chapters(root)):
        valid = ", ".join((FRONT, *chapters(root)))
        raise UsageError(f"unknown notebook {name!r}; choose one of: {valid}")
    out = (out or root / "_build" / "notebooks" / f"{name}.ipynb").resolve()
    if out.suffix != ".ipynb":
        raise UsageError(f"{out} should end in .ipynb")
    source = source_of(root, name)
    nb = convert(source, out)
    names = papermill.inspect_notebook(str(nb))
    params = parse_parameters(pairs, names)
    if "results" in params:
        results = Path(str(params["results"])).resolve()
        store.check(results)  # one line, not a failing cell
        params["results"] = str(results)
    _say(f"executing {source_name(name)} into {out}")
    return execute(nb, params, root, source.relative_to(root))


def build(
    profile: str | None = None,
    root: Path = Path("."),
    results: Path | None = None,
    out: Path | None = None,
    measure: bool = True,
) -> Path:
    """The whole job. Returns the path of index.html.

    With no profile and no results, the book is built from the committed reference dataset and
    nothing is measured; with a profile, its cases are swept on this machine into
    results/PROFILE.csv (or results) first, unless measure is False."""
    root = root.resolve()
    if profile is None and results is None:
        results = dataset.reference(root).results
        measure = False
        if not results.exists():
            raise UsageError(f"the reference dataset {results} is missing; run make reference")
        _say(f"building from the reference dataset {shown_path(results, root)} (no measuring)")
    profile = profile or dataset.PROFILE
    if profile not in profiles.profile_names():
        valid = ", ".join(profiles.profile_names())
        raise UsageError(f"unknown profile {profile!r}; choose one of: {valid}")
    results = (results or root / "results" / f"{profile}.csv").resolve()
    ds = Dataset(results)  # the one value the build threads into every page
    build_dir = (out or root / "_build").resolve()
    staging = build_dir / "src"
    timings = {}
    t0 = time.monotonic()
    if measure:
        sweeps.measure_profile(profile, results)
    elif not results.exists():
        raise UsageError(f"no results at {results}; run without --no-measure first")
    store.check(results)  # UsageError if it is not a results file of this version
    if ds.crossover.exists():
        store.check(ds.crossover)
    timings["sweep_s"] = time.monotonic() - t0

    t0 = time.monotonic()
    stage(root, staging)
    staged = stage_data(ds, staging, root)
    converted = {
        name: convert(source_of(root, name), staged_notebook(staging, name))
        for name in (FRONT, *chapters(root))
    }
    (staging / FRONT_SOURCE).unlink()  # its executed notebook stands in its place
    planned = {name: declared(nb, parameters_for(staged)) for name, nb in converted.items()}
    shown = {name: shown_for(params, ds, root) for name, params in planned.items()}
    execute_all({name: converted[name] for name in planned}, planned, shown, staging)
    timings["notebooks_s"] = time.monotonic() - t0

    t0 = time.monotonic()
    _say("building the HTML with jupyter-book (-W -n --keep-going)")
    html = build_dir / "html"
    jupyter_book(staging, html)
    timings["jupyter_book_s"] = time.monotonic() - t0
    (build_dir / "timings.json").write_text(json.dumps(timings, indent=1))
    _say(
        "done in "
        + ", ".join(f"{k[:-2]} {v:.0f} s" for k, v in timings.items())
        + f": {html / 'index.html'}"
    )
    return html / "index.html"
