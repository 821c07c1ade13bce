"""The chapters' sentences follow the data: a chapter executed on the reference dataset and on a
copy that says something else (the pick slowed down, a size removed) prints what each copy says.

The function-level tests (tests/legacy) check each claim on hand-written rows; this checks the
chapter itself, as the book runs it, reads those functions' answers from the data it is given."""

from __future__ import annotations

import ast
import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from jacbench.publish import book
from jacbench.report import dataset

pytestmark = pytest.mark.slow  # executes a chapter three times (about a minute)

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / dataset.RESULTS


def _staged(tmp: Path, edit=None) -> Path:
    """The reference dataset copied to tmp at the same relative path (so the chapter treats it
    as the reference and reads its second occasion beside it), its main file edited by edit."""
    out = tmp / dataset.RESULTS
    out.parent.mkdir(parents=True)
    for f in REFERENCE.parent.iterdir():
        if f.suffix in (".csv", ".json"):
            shutil.copy(f, out.parent / f.name)
    if edit is not None:
        df = pd.read_csv(REFERENCE, keep_default_na=False, dtype=str)
        edit(df).to_csv(out, index=False)
    return out


def _glued(notebook: Path, key: str) -> str:
    """The text a notebook glued under key (show.text glues a str's repr)."""
    for cell in json.loads(notebook.read_text())["cells"]:
        for output in cell.get("outputs", []):
            scrap = output.get("metadata", {}).get("scrapbook", {})
            if scrap.get("name") == key:
                return ast.literal_eval(output["data"][scrap["mime_prefix"] + "text/plain"])
    raise KeyError(key)


def _picks(results: Path, tmp: Path, name: str) -> str:
    nb = book.run_notebook("06-recommend", [["results", str(results)]], tmp / f"{name}.ipynb")
    return _glued(nb, "picks_tall")


def _clause(sentence: str, regime: str) -> str:
    """The part of a picks sentence about one regime ('At the question's size (N = 10,000):
    PyTorch, ...; TensorFlow, ... .')."""
    found = re.search(f"(?i:{re.escape(regime)})" + r"[^:]*:(.*?)\.(?: [A-Z]|$)", sentence)
    assert found, f"no {regime!r} in {sentence!r}"
    return found.group(1)


def _torch_named(clause: str) -> str:
    """The first strategy named for PyTorch in a regime's clause."""
    part = next(p for p in clause.split(";") if p.strip().startswith("PyTorch"))
    return re.search(r"PyTorch, (?:the pick is )?([a-z0-9-]+)", part).group(1)


@pytest.fixture(scope="module")
def reference_picks(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("reference")
    return _picks(_staged(tmp), tmp, "reference")


def test_the_tall_pick_follows_a_slowed_pick(reference_picks, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    question = _clause(reference_picks, "the question's size")
    pick = _torch_named(question)

    def slowed(df: pd.DataFrame) -> pd.DataFrame:
        rows = (df["framework"] == "torch") & (df["strategy"] == pick) & (df["paths"] == "10000")
        assert rows.any()
        for c in ("warm_median_s", "warm_min_s", "warm_max_s"):
            df.loc[rows, c] = [str(float(x) * 1000) for x in df.loc[rows, c]]
        return df

    edited = _clause(_picks(_staged(tmp_path, slowed), tmp_path, "slowed"), "the question's size")
    assert pick in question and _torch_named(edited) != pick
    assert edited.split(";")[1:] == question.split(";")[1:]  # the other frameworks' unchanged


def test_the_tall_picks_follow_a_removed_size(reference_picks, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    largest = int(pd.read_csv(REFERENCE)["paths"].max())
    assert f"N = {largest:,}" in reference_picks

    def removed(df: pd.DataFrame) -> pd.DataFrame:
        return df[df["paths"] != str(largest)]

    edited = _picks(_staged(tmp_path, removed), tmp_path, "removed")
    assert f"N = {largest:,}" not in edited
    assert _clause(edited, "the question's size") == _clause(reference_picks, "the question's size")
