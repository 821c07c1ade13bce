"""Claims checked beside their sentences (report.claims): a stop on the reference dataset, a
warning on any other."""

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from jacbench.publish import book
from jacbench.report import claims, data, dataset

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / dataset.RESULTS


def test_a_false_claim_stops_on_the_reference_and_warns_elsewhere(small, monkeypatch):
    monkeypatch.delenv(claims.ENV, raising=False)
    assert claims.use(data.load(REFERENCE))
    claims.hold(True, "holds")
    with pytest.raises(claims.ClaimFailed, match="the loop wins"):
        claims.hold(False, "the loop wins")
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj.data))
    assert not claims.use(small)
    claims.hold(False, "the loop wins")
    assert len(shown) == 1 and "the loop wins" in shown[0] and "claim-failed" in shown[0]
    assert claims.checked() == [("the loop wins", False)]


def test_the_mode_can_be_forced(small, monkeypatch):
    monkeypatch.setenv(claims.ENV, "strict")
    assert claims.use(small)
    monkeypatch.setenv(claims.ENV, "warn")
    assert not claims.use(data.load(REFERENCE))


def _staged_reference(tmp: Path, edit) -> Path:
    """The reference dataset and its other sessions copied to tmp at the same relative path
    (so it is read as the reference), its main file changed by edit."""
    out = tmp / dataset.RESULTS
    out.parent.mkdir(parents=True)
    for f in REFERENCE.parent.iterdir():
        if f.suffix in (".csv", ".json"):
            shutil.copy(f, out.parent / f.name)
    df = pd.read_csv(REFERENCE, keep_default_na=False, dtype=str)
    edit(df).to_csv(out, index=False)
    return out


def _slow_jemalloc(df: pd.DataFrame) -> pd.DataFrame:
    """The question's PyTorch program under jemalloc at N = 10,000, made slower than under
    glibc-mmap: chapter 1 says jemalloc ran it faster."""
    mask = (df["strategy"] == "question") & (df["allocator"] == "jemalloc")
    mask &= (df["paths"] == "10000") & (df["framework"] == "torch")
    assert mask.sum() == 1
    df.loc[mask, "cold_s"] = "600.0"
    return df


@pytest.mark.slow  # executes chapter 1 twice
def test_an_edited_row_stops_the_reference_build_naming_the_claim(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv(claims.ENV, raising=False)
    edited = _staged_reference(tmp_path / "ref", _slow_jemalloc)
    with pytest.raises(book.BookError) as stopped:
        book.run_notebook("01-question", [["results", str(edited)]], tmp_path / "a.ipynb")
    message = str(stopped.value)
    assert "\n" not in message and "notebooks/01-question.md failed" in message
    assert "ClaimFailed: under jemalloc its memory stayed flat and it ran faster" in message
    # The same rows under another name are a reader's own: the page warns where it stands.
    own = tmp_path / "mine" / "results.csv"
    own.parent.mkdir()
    shutil.copy(edited, own)
    shutil.copy(edited.with_suffix(".meta.json"), own.with_suffix(".meta.json"))
    out = book.run_notebook("01-question", [["results", str(own)]], tmp_path / "b.ipynb")
    shown = json.dumps(json.loads(out.read_text())["cells"])
    assert shown.count("claim-failed") == 1 and "ran faster" in shown


def test_every_page_that_claims_checks_its_claims_against_the_rows_it_reads():
    # claims.use decides strict or warn from the rows; a page that held claims without it would
    # keep the previous page's mode, or warn on the reference instead of stopping.
    pages = [*sorted((ROOT / "notebooks").glob("*.md")), ROOT / "book" / "index.md"]
    claiming = [p for p in pages if "claims.hold(" in p.read_text()]
    assert len(claiming) >= 9
    for page in claiming:
        text = page.read_text()
        # use(df), or use_reference(...) where the page reads advice.json rather than rows
        first = min((text.index(c) for c in ("claims.use(", "claims.use_reference(") if c in text),
                    default=None)  # fmt: skip
        assert first is not None and first < text.index("claims.hold("), page.name


def test_the_book_built_from_the_reference_shows_no_failed_claim(built):
    out, _ = built
    pages = list((out / "html").rglob("*.html"))
    assert len(pages) >= 10
    failed = [p.name for p in pages if "claim-failed" in p.read_text(errors="replace")]
    assert failed == []
