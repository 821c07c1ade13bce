"""jacbench notebook: values given with -p are read as their defaults' types and a wrong one is
one line (status 2) before anything executes; it runs from any folder inside the checkout."""

import ast
from pathlib import Path

import jupytext
import nbformat
import papermill
import pytest

from jacbench.cli import main
from jacbench.errors import UsageError
from jacbench.publish import book, parameters

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def executed(monkeypatch):
    """Stands in for papermill's execution: records what would run, runs nothing."""
    calls = []

    def execute(nb, params, root, name):
        calls.append({"params": params, "root": root, "name": name})
        return nb

    monkeypatch.setattr(book, "execute", execute)
    return calls


def test_a_value_of_the_wrong_form_is_one_line_naming_the_parameter(
    tmp_path, monkeypatch, capsys, executed
):
    monkeypatch.chdir(ROOT)
    args = ["notebook", "04-gbm", "-p", "focus_paths", "banana", "--out", str(tmp_path / "x.ipynb")]
    assert main(args) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1
    assert "focus_paths" in err[0] and "whole number" in err[0] and "'banana'" in err[0]
    assert executed == []  # nothing ran


@pytest.mark.parametrize(
    "name, key, text, word",
    [
        ("04-gbm", "focus_paths", "1.5", "whole number"),
        ("07-recommend", "budgets_gib", "1,eight", "separated by commas"),
        ("01-question", "question_paths", "", "whole number"),
    ],
)
def test_other_wrong_forms_exit_2(name, key, text, word, tmp_path, monkeypatch, capsys, executed):
    monkeypatch.chdir(ROOT)
    assert main(["notebook", name, "-p", key, text, "--out", str(tmp_path / "x.ipynb")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and key in err[0] and word in err[0]
    assert executed == []


def test_from_a_folder_inside_the_checkout_it_runs_at_the_root(tmp_path, monkeypatch, executed):
    monkeypatch.chdir(ROOT / "notebooks")
    args = ["notebook", "04-gbm", "-p", "focus_paths", "1e4", "--out", str(tmp_path / "x.ipynb")]
    assert main(args) == 0
    (call,) = executed
    assert call["root"] == ROOT
    assert call["params"] == {"focus_paths": 10_000}
    assert isinstance(call["params"]["focus_paths"], int)
    assert str(call["name"]) == "notebooks/04-gbm.md"


def test_outside_any_checkout_it_says_where_to_run(tmp_path, monkeypatch, capsys, executed):
    monkeypatch.chdir(tmp_path)
    assert main(["notebook", "04-gbm"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1
    assert str(tmp_path) in err[0] and "not inside a jacbench checkout" in err[0]
    named = err[0].split("cd ", 1)[1].split(" and run", 1)[0]
    assert parameters.is_checkout(Path(named))  # the package's own checkout, where it can run
    assert executed == [] and not (tmp_path / "_build").exists()


@pytest.mark.parametrize(
    "text, default, value",
    [
        ("10_000", "1000", 10_000),
        ("1e3", "1000", 1000),
        ("2", "0.5", 2.0),
        ("1,8", "(1.0, 8.0)", [1.0, 8.0]),
        ("4", "(1.0, 8.0)", [4.0]),
        ("123", '"book/reference/standard.csv"', "123"),
        ("False", "True", False),
        ("3", "None", 3),  # no typed default: a number reads as a number
        ("x", "some_name", "x"),  # not a literal: the text
    ],
)
def test_values_take_their_defaults_type(text, default, value):
    got = parameters.parse_value("p", text, default)
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize(
    "text, default", [("yes", "True"), ("1.5", "1000"), ("nan-ish", "0.5"), ("1,,8", "(1, 8)")]
)
def test_values_of_another_form_are_refused(text, default):
    with pytest.raises(UsageError, match="the parameter p is"):
        parameters.parse_value("p", text, default)


def test_every_chapters_parameter_has_a_literal_default_to_check_against(tmp_path):
    for name in book.chapters():
        path = tmp_path / f"{name}.ipynb"
        nbformat.write(jupytext.read(str(ROOT / "notebooks" / f"{name}.md")), str(path))
        declared = papermill.inspect_notebook(str(path))
        assert declared, f"{name} has no parameters cell"
        for key, info in declared.items():
            try:
                ast.literal_eval(info["default"])
            except (ValueError, SyntaxError):
                pytest.fail(f"{name}: the default of {key} is not a literal: {info['default']}")
