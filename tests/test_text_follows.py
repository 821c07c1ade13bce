"""The chapters follow the data: the picks chapter executed on the reference dataset and on a
copy that says something else (the pick slowed down, a size removed) glues what each copy says,
and where a hand-written sentence no longer holds, its claim warns above it.

The facts' tests (tests/chapters) check each fact on edited rows; this checks the chapter itself,
as the book runs it, reads them from the data it is given and checks its sentences against them.
The copies are read as the reference (so the margins come from the other sessions beside them),
with claims set to warn instead of stopping."""

from __future__ import annotations

import ast
import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from jacbench.publish import book
from jacbench.report import claims, dataset, picks

pytestmark = pytest.mark.slow  # executes a chapter three times (about a minute)

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / dataset.RESULTS


def _staged(tmp: Path, edit=None) -> Path:
    """The reference dataset copied to tmp at the same relative path (so the chapter treats it
    as the reference and reads the other sessions beside it), its main file edited by edit."""
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


def _run(results: Path, tmp: Path, name: str, monkeypatch) -> Path:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv(claims.ENV, "warn")
    return book.run_notebook("07-recommend", [["results", str(results)]], tmp / f"{name}.ipynb")


def _warnings(notebook: Path) -> list[str]:
    """The claims that warned on the page, each as the warning quotes it."""
    found = []
    for cell in json.loads(notebook.read_text())["cells"]:
        for output in cell.get("outputs", []):
            shown = "".join(output.get("data", {}).get("text/html", ""))
            if "claim-failed" in shown:
                found += re.findall(r"does not hold on these results: (.*?)\.</p>", shown)
    return found


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("reference")
    with pytest.MonkeyPatch.context() as mp:
        return _run(_staged(tmp), tmp, "reference", mp)


def _expected(results: Path):
    ds = dataset.Dataset(results)
    return picks.compute(dataset.rows(ds), dataset.margins(ds))


def test_the_reference_holds_every_claim(reference):
    assert _warnings(reference) == []
    torch = _expected(REFERENCE).get("tall", "torch", "question")
    assert _glued(reference, "torch_tall_from") == f"{torch.overtakes_at:,}"


def test_a_slowed_pick_changes_the_page_and_its_sentence_warns(reference, tmp_path, monkeypatch):
    compiled = ("compiled-jvp", "compiled-pathwise", "steps-compiled-carry",
                "steps-compiled-pathwise", "steps-segmented-carry")  # fmt: skip

    def slowed(df: pd.DataFrame) -> pd.DataFrame:
        rows = (df["framework"] == "torch") & df["strategy"].isin(compiled)
        rows &= (df["paths"] == "10000") & (df["problem"] == "gbm")
        assert rows.sum() == len(compiled)
        for c in ("warm_median_s", "warm_min_s", "warm_max_s", "ratio_median", "ratio_lo",
                  "ratio_hi"):  # fmt: skip
            df.loc[rows, c] = [str(float(x) * 1000) for x in df.loc[rows, c]]
        return df

    results = _staged(tmp_path, slowed)
    edited = _run(results, tmp_path, "slowed", monkeypatch)
    torch = _expected(results).get("tall", "torch", "question")
    assert torch.repeated == ("pathwise",) and torch.overtakes_at is None
    assert _glued(edited, "torch_tall_from") != _glued(reference, "torch_tall_from")
    warned = _warnings(edited)
    # Only the sentences on PyTorch's compiled loops warn (the loops over the steps among them).
    assert warned and all(any(k in w for k in ("compiled", "PyTorch", "loop")) for w in warned)


def test_a_removed_size_changes_the_page(reference, tmp_path, monkeypatch):
    largest = int(pd.read_csv(REFERENCE)["paths"].max())
    assert _glued(reference, "blocked_n") == f"{largest:,}"

    def removed(df: pd.DataFrame) -> pd.DataFrame:
        return df[df["paths"] != str(largest)]

    edited = _run(_staged(tmp_path, removed), tmp_path, "removed", monkeypatch)
    assert _glued(edited, "blocked_n") != f"{largest:,}"
    assert _glued(edited, "question_n") == _glued(reference, "question_n")
