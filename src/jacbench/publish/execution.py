"""Executing the book's notebooks: each converted chapter runs in place in its own kernel
through papermill, side by side where there are cores, and is then dressed for the book (the
injected parameters hidden, a box naming them shown)."""

from __future__ import annotations

import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

import nbformat

from jacbench.errors import BuildStopped

# The front page's name among the notebooks (publish.book.FRONT).
FRONT = "index"
# Started first when notebooks run side by side: the chapter that takes most of the time (the
# GBM chapter draws a dozen figures from every row), so that the rest share the other core.
LONGEST = ("04-gbm",)


class BookError(BuildStopped):
    """The build stopped: a notebook failed, or jupyter-book reported warnings."""


def say(msg: str) -> None:
    print(f"[book] {msg}", file=sys.stderr, flush=True)


def declared(notebook: Path, parameters: dict) -> dict:
    """The parameters a notebook (.ipynb) declares in its parameters cell, from the given ones."""
    import papermill

    names = papermill.inspect_notebook(str(notebook))
    return {k: v for k, v in parameters.items() if k in names}


def execute(notebook: Path, parameters: dict, cwd: Path, name: str | Path | None = None) -> Path:
    """Execute a converted notebook in place; BookError names the failing cell."""
    import papermill

    name = name or f"notebooks/{notebook.stem}.md"
    notebook = Path(notebook).resolve()
    try:
        papermill.execute_notebook(
            str(notebook),
            str(notebook),
            parameters=parameters,
            kernel_name="python3",
            # The kernel starts in cwd; papermill's own cwd= would chdir this whole process,
            # which notebooks run side by side (in threads) cannot share.
            resources={"metadata": {"path": str(cwd)}},
            progress_bar=False,
            log_output=False,
            # The kernel's own log (not the notebook's output) says only errors: otherwise every
            # kernel warns, in the terminal of whoever builds the book, that it talks over TCP.
            extra_arguments=["--IPKernelApp.log_level=ERROR"],
        )
    except papermill.PapermillExecutionError as e:
        raise BookError(
            f"notebook {name} failed in cell {e.cell_index} "
            f"(execution count {e.exec_count}): {e.ename}: {e.evalue}"
        ) from None
    except Exception as e:  # a dead kernel, a timeout, a missing kernel
        cell = _last_executed_cell(notebook)
        raise BookError(f"notebook {name} stopped{cell}: {type(e).__name__}: {e}") from None
    return notebook


def execute_all(notebooks: dict, parameters: dict, shown: dict, cwd: Path, workers: int = 0):
    """Execute the converted notebooks (name -> path) with their parameters, each in its own
    kernel, as many at once as there are cores (at most two: a kernel is one busy thread, and
    the book's notebooks are a few seconds each but for the long one, started first); then
    present each with the parameters shown. A failure stops the notebooks not yet started; once
    those running have ended, BookError names the first, in reading order, that failed."""
    workers = workers or max(1, min(2, os.cpu_count() or 1))
    reading = list(notebooks)
    order = sorted(reading, key=lambda name: name not in LONGEST)
    say(f"executing {len(order)} notebooks, {workers} at a time: " + ", ".join(order))

    failed = threading.Event()

    def one(name: str) -> float | None:
        if failed.is_set():
            return None  # not run: the build has failed already
        t0 = time.monotonic()
        try:
            execute(notebooks[name], parameters[name], cwd, label(name))
        except BookError:
            failed.set()  # before this thread takes the next notebook
            raise
        present(notebooks[name], shown[name], box=name != FRONT)
        return time.monotonic() - t0

    failures: list[tuple[int, BookError]] = []
    skipped = 0
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(one, name): name for name in order}
        try:
            for future in as_completed(futures):
                name = futures[future]
                try:
                    took = future.result()
                except BookError as e:
                    say(f"{label(name)} failed")
                    failures.append((reading.index(name), e))
                    continue
                if took is None:
                    skipped += 1
                else:
                    say(f"{label(name)} done in {took:.0f} s")
        except KeyboardInterrupt:
            failed.set()
            pool.shutdown(wait=False, cancel_futures=True)  # those running end with their kernel
            raise
    if failures:
        first = min(failures, key=lambda f: f[0])[1]
        others = [f"{len(failures) - 1} more failed"] if len(failures) > 1 else []
        others += [f"{skipped} not run"] if skipped else []
        raise BookError(f"{first}" + (f" ({'; '.join(others)})" if others else ""))


def _last_executed_cell(path: Path) -> str:
    try:
        nb = nbformat.read(str(path), as_version=4)
    except Exception:
        return ""
    done = [i for i, c in enumerate(nb.cells) if c.get("execution_count")]
    return f" after cell {done[-1]}" if done else " before its first cell"


def label(name: str) -> str:
    """A page's source as messages name it: notebooks/NAME.md, or book/index.md."""
    return "book/index.md" if name == FRONT else f"notebooks/{name}.md"


def present(path: Path, parameters: dict, box: bool = True) -> None:
    """Hide papermill's injected cell and show the parameters in a box at the top instead (box:
    the front page shows none); papermill's record of the run (a source of the book's pages)
    keeps no absolute path."""
    nb = nbformat.read(str(path), as_version=4)
    record = nb.metadata.get("papermill")
    if record is not None:
        record["input_path"] = record["output_path"] = f"notebooks/{path.name}"
        record["parameters"] = dict(parameters)
    for cell in nb.cells:
        tags = cell.metadata.setdefault("tags", [])
        if "injected-parameters" in tags or "parameters" in tags:
            tags.append("remove-cell")
    if box:
        lines = "\n".join(f"- `{k}` = `{v!r}`" for k, v in parameters.items())
        cell = nbformat.v4.new_markdown_cell(
            f":::{{admonition}} Parameters of this run\n:class: note run-parameters\n{lines}\n:::"
        )
        cell.metadata["tags"] = ["parameters-box"]
        at = 1 if nb.cells and nb.cells[0].cell_type == "markdown" else 0
        nb.cells.insert(at, cell)
    nbformat.write(nb, str(path))
