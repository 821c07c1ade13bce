"""The book's notebooks run side by side (two kernels at once): each kernel starts in the
staging folder whatever this process's working folder is, every notebook gets its own
parameters, and a failure names the first failing notebook in reading order."""

import os
import re

import nbformat
import pytest

from jacbench.report import execution


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


def test_the_first_failure_in_reading_order_is_named_and_the_others_counted(tmp_path):
    fails = "raise ValueError(label)"
    notebooks = {
        "01-fine": _notebook(tmp_path / "01.ipynb", "print(label)"),
        "02-second": _notebook(tmp_path / "02.ipynb", fails),
        "03-third": _notebook(tmp_path / "03.ipynb", fails),
    }
    # The third is started first, as the longest chapter is; the error still names the second.
    params = {n: {"label": n} for n in notebooks}
    with pytest.MonkeyPatch.context() as m:
        m.setattr(execution, "LONGEST", ("03-third",))
        with pytest.raises(execution.BookError) as err:
            execution.execute_all(notebooks, params, params, tmp_path, 2)
    message = str(err.value)
    assert re.search(r"notebooks/02-second\.md failed in cell \d+", message)
    assert "ValueError: 02-second" in message
    assert "(1 more notebooks failed)" in message
    assert "01-fine" in _outputs(notebooks["01-fine"])
