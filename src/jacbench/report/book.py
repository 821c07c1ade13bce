"""Build the book: sweep a profile, execute the notebooks with papermill, run jupyter-book.

Everything happens in a staging tree, ``_build/src``: the book's sources are copied there, the
notebooks are executed into it with the profile's parameters, and ``jupyter-book build`` turns
it into ``_build/html`` with warnings as errors (papermill is the only executor).
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
from jacbench.measure import crossover, profiles, runner, store

# The notebooks in reading order; each chapter page in book/ pastes numbers from its notebook.
NOTEBOOKS = (
    "01-question",
    "02-modes",
    "03-vectorized",
    "04-gbm",
    "05-wide",
    "06-recommend",
    "07-reproduce",
)
SOURCES = (
    "_config.yml",
    "_toc.yml",
    "references.bib",
    "_static",  # the favicon and the book's own CSS
    "book",
    "src/jacbench/strategies",  # shown with literalinclude
    "src/jacbench/teaching",
)


class BookError(RuntimeError):
    """The build stopped: a notebook failed, or jupyter-book reported warnings."""


def _say(msg: str) -> None:
    print(f"[book] {msg}", file=sys.stderr, flush=True)


def stage(root: Path, staging: Path) -> None:
    """Copy the book's sources into a fresh staging tree."""
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    for name in SOURCES:
        src = root / name
        dst = staging / name
        if src.is_dir():
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "generated"))
        else:
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    (staging / "book" / "generated").mkdir(parents=True, exist_ok=True)


def parameters_for(results: Path) -> dict:
    """What make book passes to every notebook (each takes those its parameters cell declares;
    the rest of its parameters keep the notebook's own defaults)."""
    return {
        "results": str(results),
        "crossover": str(crossover.path_for(results)),
        "figures": "book/generated",
    }


def declared(root: Path, notebook: str, parameters: dict) -> dict:
    """The parameters a notebook declares in its parameters cell, from the given ones."""
    import papermill

    names = papermill.inspect_notebook(str(root / "notebooks" / f"{notebook}.ipynb"))
    return {k: v for k, v in parameters.items() if k in names}


def execute(root: Path, staging: Path, notebook: str, parameters: dict) -> Path:
    """Execute notebooks/NAME.ipynb into the staging tree; BookError names the failing cell."""
    import papermill

    source = root / "notebooks" / f"{notebook}.ipynb"
    if not source.exists():
        raise BookError(f"notebook {source} is missing")
    out = staging / "notebooks" / f"{notebook}.ipynb"
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        papermill.execute_notebook(
            str(source),
            str(out),
            parameters=parameters,
            kernel_name="python3",
            cwd=str(staging),
            progress_bar=False,
            log_output=False,
        )
    except papermill.PapermillExecutionError as e:
        raise BookError(
            f"notebook notebooks/{notebook}.ipynb failed in cell {e.cell_index} "
            f"(execution count {e.exec_count}): {e.ename}: {e.evalue}"
        ) from None
    except Exception as e:  # a dead kernel, a timeout, a missing kernel
        cell = _last_executed_cell(out)
        raise BookError(
            f"notebook notebooks/{notebook}.ipynb stopped{cell}: {type(e).__name__}: {e}"
        ) from None
    present(out, parameters)
    return out


def _last_executed_cell(path: Path) -> str:
    try:
        nb = nbformat.read(str(path), as_version=4)
    except Exception:
        return ""
    done = [i for i, c in enumerate(nb.cells) if c.get("execution_count")]
    return f" after cell {done[-1]}" if done else " before its first cell"


def present(path: Path, parameters: dict) -> None:
    """Hide papermill's injected cell and show the parameters in a box at the top instead."""
    nb = nbformat.read(str(path), as_version=4)
    for cell in nb.cells:
        tags = cell.metadata.setdefault("tags", [])
        if "injected-parameters" in tags or "parameters" in tags:
            tags.append("remove-cell")
    lines = "\n".join(f"- `{k}` = `{v!r}`" for k, v in parameters.items())
    box = nbformat.v4.new_markdown_cell(
        f":::{{admonition}} Parameters of this run\n:class: note\n{lines}\n:::"
    )
    box.metadata["tags"] = ["parameters-box"]
    at = 1 if nb.cells and nb.cells[0].cell_type == "markdown" else 0
    nb.cells.insert(at, box)
    nbformat.write(nb, str(path))


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


def build(
    profile: str = "standard",
    root: Path = Path("."),
    results: Path | None = None,
    out: Path | None = None,
    measure: bool = True,
) -> Path:
    """The whole job. Returns the path of index.html."""
    root = root.resolve()
    if profile not in profiles.profile_names():
        valid = ", ".join(profiles.profile_names())
        raise UsageError(f"unknown profile {profile!r}; choose one of: {valid}")
    results = (results or root / "results" / f"{profile}.csv").resolve()
    build_dir = (out or root / "_build").resolve()
    staging = build_dir / "src"
    timings = {}
    t0 = time.monotonic()
    if measure:
        _say(f"sweeping the {profile} profile into {results} (cases already measured are kept)")
        spec = profiles.load_profile(profile)
        runner.run_sweep(profiles.expand(spec), results, jobs=int(spec.get("jobs", 1)))
        _say(f"the tall-to-wide crossover into {crossover.path_for(results)} (cases kept)")
        crossover.run_profile(spec, results)
    elif not results.exists():
        raise UsageError(f"no results at {results}; run without --no-measure first")
    store.check(results)  # UsageError if it is not a results file of this version
    if crossover.path_for(results).exists():
        store.check(crossover.path_for(results))
    timings["sweep_s"] = time.monotonic() - t0

    t0 = time.monotonic()
    stage(root, staging)
    planned = {name: declared(root, name, parameters_for(results)) for name in NOTEBOOKS}
    # The reproducibility chapter lists every notebook's parameters from this file.
    (staging / "book" / "generated" / "parameters.json").write_text(json.dumps(planned, indent=1))
    for name, params in planned.items():
        _say(f"executing notebooks/{name}.ipynb")
        execute(root, staging, name, params)
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
