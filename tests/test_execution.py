"""The book's notebooks run side by side (two kernels at once): each kernel starts in the
staging folder whatever this process's working folder is, every notebook gets its own
parameters, and a failure names the first failing notebook in reading order."""

import os
import re

import nbformat
import pytest

from jacbench.publish import execution


def _notebook(path, body: str):
    params = nbformat.v4.new_code_cell("label = 'default'")
    params.metadata["tags"] = ["parameters"]
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# A chapter"),
            params,
            nbformat.v4.new_code_cell(body),
        ]
    )
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, str(path))
    return path


def _outputs(path) -> str:
    nb = nbformat.read(str(path), as_version=4)
    return "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))


READS = "import os\nprint(label, os.getcwd(), open('data.txt').read())"


def test_side_by_side_notebooks_run_in_the_staging_folder_with_their_parameters(
    tmp_path, monkeypatch
):
    staging = tmp_path / "staging"
    staging.mkdir()
    (staging / "data.txt").write_text("staged")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the notebooks must not depend on where the build runs from
    names = ["a", "b", "c"]
    notebooks = {n: _notebook(staging / f"{n}.ipynb", READS) for n in names}
    execution.execute_all(
        notebooks, {n: {"label": n} for n in names}, {n: {"label": n} for n in names}, staging, 2
    )
    for n in names:
        assert f"{n} {staging} staged" in _outputs(notebooks[n])
        cells = nbformat.read(str(notebooks[n]), as_version=4).cells
        assert "Parameters of this run" in cells[1].source  # presented for the book
    assert os.getcwd() == str(elsewhere)


def test_a_failure_stops_the_rest_and_the_first_in_reading_order_is_named(tmp_path):
    fails = "raise ValueError(label)"
    notebooks = {
        "01-first": _notebook(tmp_path / "01.ipynb", fails),
        "02-fine": _notebook(tmp_path / "02.ipynb", "print(label)"),
        "03-third": _notebook(tmp_path / "03.ipynb", "import time\ntime.sleep(1)\n" + fails),
        "04-last": _notebook(tmp_path / "04.ipynb", "print(label)"),
    }
    # The third starts first, as the longest chapter does, beside the first; both fail, so the
    # two not started are not run, and the error names the first in reading order.
    params = {n: {"label": n} for n in notebooks}
    with pytest.MonkeyPatch.context() as m:
        m.setattr(execution, "LONGEST", ("03-third",))
        with pytest.raises(execution.BookError) as err:
            execution.execute_all(notebooks, params, params, tmp_path, 2)
    message = str(err.value)
    assert re.search(r"notebooks/01-first\.md failed in cell \d+", message)
    assert "ValueError: 01-first" in message
    assert "(1 more failed; 2 not run)" in message
    assert "02-fine" not in _outputs(notebooks["02-fine"])  # never executed
