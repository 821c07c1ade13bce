"""The book: every notebook executed by papermill on the reference dataset, built with -W."""

import re
from pathlib import Path

import nbformat
import pytest
import yaml

from jacbench.measure import store
from jacbench.publish import book

ROOT = Path(__file__).resolve().parents[1]


def test_book_builds_with_warnings_as_errors(built):
    out, index = built
    assert index.exists() and index.name == "index.html"
    for name in book.chapters():
        assert (out / "html" / "notebooks" / f"{name}.html").exists()
        assert not (out / "html" / "book" / f"{name}.html").exists()


def test_every_chapter_is_one_notebook_stored_as_text():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    listed = book.chapters(ROOT)  # read from _toc.yml, the one list
    assert listed[0] == "01-question" and "08-your-function" in listed
    assert all("sections" not in c for c in toc["chapters"])
    assert sorted(p.stem for p in (ROOT / "notebooks").iterdir()) == sorted(listed)
    for name in listed:
        text = (ROOT / "notebooks" / f"{name}.md").read_text()
        assert "format_name: myst" in text and ":tags: [parameters]" in text, name
    # Values are glued and pasted in the same notebook: no cross-document glue anywhere.
    for path in [*(ROOT / "notebooks").glob("*.md"), *(ROOT / "book").glob("*.md")]:
        assert not re.search(r"\{glue(:\w+)?\}`[^`]*::", path.read_text()), path.name


@pytest.mark.slow  # executes a notebook (about 10 s each)
@pytest.mark.parametrize("name", (book.FRONT, *book.chapters()))
def test_each_notebook_runs_alone_on_the_small_fixture(name, small_results, tmp_path, monkeypatch):
    """The analysis of every chapter, tested without a sweep: the committed 51-row fixture
    lacks most cases, so each chapter must say what was not measured rather than fail."""
    monkeypatch.chdir(ROOT)
    # "Your function" reads advice, not results: it runs on its defaults, the reference's advice
    # (tests/test_advise.py builds it on a reader's own).
    pairs = [] if name == "08-your-function" else [["results", str(small_results)]]
    out = book.run_notebook(name, pairs, tmp_path / f"{name}.ipynb")
    nb = nbformat.read(str(out), as_version=4)
    outputs = [o for c in nb.cells for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert not [o.get("text") for o in outputs if o.get("name") == "stderr"]
    shown = [o for o in outputs if o.get("output_type") in ("display_data", "execute_result")]
    assert shown, f"{name} shows nothing"


def test_no_executed_notebook_holds_an_error(built):
    out, _ = built
    for path in sorted((out / "src" / "notebooks").glob("*.ipynb")):
        nb = nbformat.read(str(path), as_version=4)
        for cell in nb.cells:
            for output in cell.get("outputs", []):
                assert output.get("output_type") != "error", f"{path.name}: {output.get('ename')}"
                assert output.get("name") != "stderr", f"{path.name}: {output.get('text')[:300]}"


# Tags that hide a cell's code from the reader: what such a cell prints has no code beside it.
HIDDEN = {"hide-input", "remove-input", "remove-cell"}


def test_no_cell_shows_a_stray_value_or_print(built):
    """A cell's output is a table, a figure or Markdown: never the repr its last line left
    behind (a glued text's '2.0 MiB'), nor a print from a cell whose code the reader does not
    see, which reads as debris. A visible example may print its result, as the Cookbook does."""
    out, _ = built
    for path in sorted((out / "src").glob("**/*.ipynb")):
        nb = nbformat.read(str(path), as_version=4)
        for i, cell in enumerate(nb.cells):
            hidden = HIDDEN & set(cell.metadata.get("tags", []))
            for output in cell.get("outputs", []):
                where = f"{path.name} cell {i}"
                if output.get("output_type") == "stream":
                    assert not hidden and output["name"] == "stdout", f"{where}: {output['text']}"
                if output.get("output_type") == "execute_result":
                    kinds = set(output.get("data", {})) - {"text/plain"}
                    assert kinds, f"{where} shows {output['data'].get('text/plain')}"


def test_glued_numbers_appear_in_the_html(built):
    out, _ = built
    html = (out / "html" / "notebooks" / "01-question.html").read_text()
    pasted = re.findall(r'<span class="pasted-text">([^<]*)</span>', html)
    assert len(pasted) >= 5
    assert all(p.strip() for p in pasted)
    assert "10,000" in pasted  # the question's N, glued from the notebook's parameters


def _cells(row: str) -> list[str]:
    cells = re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, flags=re.S)
    return [re.sub(r"<[^>]+>|\s+", " ", c).strip() for c in cells]


def tall_repeated_picks(html: str, paths: int = 10_000) -> dict[str, str]:
    """The picks chapter's tall table at N: each framework's first repeated-call winner, as
    the page prints it."""
    for table in re.findall(r"<table.*?</table>", html, flags=re.S):
        header, *rows = (_cells(r) for r in re.findall(r"<tr.*?</tr>", table, flags=re.S))
        if "repeated calls" not in header or "where" not in header:
            continue
        where, fw, repeated = (header.index(c) for c in ("where", "framework", "repeated calls"))
        at = re.compile(rf"N = {paths:,}(?!\d|,\d)")
        found = {r[fw]: r[repeated].split(",")[0].strip() for r in rows if at.search(r[where])}
        if found:
            return found
    return {}


def fastest_in_the_file(path: Path, paths: int = 10_000) -> dict[str, str]:
    """The fastest correct strategy a recommendation may pick, per AD framework at N, read from
    the results file with the csv module alone: float32, glibc, the smallest warm median."""
    from jacbench.constants import AD_FRAMEWORKS, FRAMEWORK_NAMES
    from jacbench.strategies import registry

    best: dict[str, tuple[float, str]] = {}
    for r in store.read_rows(path):
        if (r["problem"], r["target"], r["paths"], r["dtype"], r["allocator"], r["status"]) != (
            "gbm", "strategy", str(paths), "float32", "glibc", "ok"
        ) or r["framework"] not in AD_FRAMEWORKS:  # fmt: skip
            continue
        if not registry.get(r["framework"], r["strategy"]).candidate:
            continue
        name = FRAMEWORK_NAMES[r["framework"]]
        best[name] = min(best.get(name, (float("inf"), "")), (float(r["warm_median_s"]),
                                                               r["strategy"]))  # fmt: skip
    return {name: strategy for name, (_, strategy) in best.items()}


def test_the_picks_table_leads_with_the_fastest_strategy_of_the_results(built, book_results):
    """The picks chapter's tall table, computed in its notebook, against the fastest read from
    the results file without the report's code: a pick that no longer follows the data fails."""
    out, _ = built
    html = (out / "html" / "notebooks" / "07-recommend.html").read_text()
    expected = fastest_in_the_file(book_results)
    assert len(expected) == 3
    assert tall_repeated_picks(html) == expected


def test_every_chapter_renders_its_figures(built):
    """Every chapter's page shows each figure its executed notebook drew, and the chapters that
    draw the scaling figures draw them all."""
    out, _ = built
    drawn = {}
    for name in book.chapters():
        nb = nbformat.read(str(out / "src" / "notebooks" / f"{name}.ipynb"), as_version=4)
        outputs = [o for c in nb.cells for o in c.get("outputs", [])]
        drawn[name] = sum(any(k.startswith("image/") for k in o.get("data", {})) for o in outputs)
        html = (out / "html" / "notebooks" / f"{name}.html").read_text()
        assert len(re.findall(r"<img ", html)) == drawn[name], name
    assert drawn["03-vectorized"] >= 5 and drawn["04-gbm"] >= 3


def _tables_and_images(html: str, folder: Path) -> list[str]:
    """Each table's text (ids and styles left out) and each image's content hash."""
    import hashlib

    found = []
    for table in re.findall(r"<table.*?</table>", html, flags=re.S):
        cells = re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", table, flags=re.S)
        found.append("table:" + "|".join(re.sub(r"<[^>]+>|\s+", " ", c).strip() for c in cells))
    for src in re.findall(r'<img [^>]*src="([^"]+)"', html):
        if src.startswith("data:"):
            found.append("image:" + hashlib.sha256(src.encode()).hexdigest())
        elif (folder / src).exists():
            found.append("image:" + hashlib.sha256((folder / src).read_bytes()).hexdigest())
    return found


def test_no_two_pages_share_a_table_or_an_image(built):
    out, _ = built
    seen: dict[str, str] = {}
    for page in sorted((out / "html").rglob("*.html")):
        if page.name in ("genindex.html", "search.html"):
            continue
        for item in set(_tables_and_images(page.read_text(), page.parent)):
            if "_static" in item:
                continue
            assert item not in seen, f"{page.name} repeats a {item[:5]} of {seen[item]}"
            seen[item] = page.name


def test_parameters_box_replaces_the_injected_cell(built):
    out, _ = built
    html = (out / "html" / "notebooks" / "04-gbm.html").read_text()
    assert "Parameters of this run" in html
    assert "injected-parameters" not in html
    assert "book/reference/standard.csv" in html


def test_a_failing_notebook_names_itself_and_its_cell(tmp_path):
    # A results file by its header, so the build starts; its row fails inside the notebook.
    unreadable = tmp_path / "results.csv"
    row = {c: "" for c in store.COLUMNS} | {"key": "k", "paths": "many", "status": "ok"}
    unreadable.write_text(",".join(store.COLUMNS) + "\n" + ",".join(row.values()) + "\n")
    with pytest.raises(book.BookError, match=r"notebook book/index\.md failed in cell \d+"):
        book.build(
            profile="quick",
            root=ROOT,
            results=unreadable,
            out=tmp_path / "_build",
            measure=False,
        )


def test_a_file_that_is_not_results_stops_the_book_before_any_notebook(tmp_path, capsys):
    from jacbench.cli import main

    foreign = tmp_path / "prices.csv"
    foreign.write_text("date,close\n2026-01-02,101.5\n")
    args = ["book", "--profile", "quick", "--no-measure", "--results", str(foreign)]
    assert main([*args, "--out", str(tmp_path / "_build")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a jacbench results file" in err[0]
    assert not (tmp_path / "_build").exists()


def test_wide_chapter_shows_its_tables_figures_and_glued_numbers(built):
    out, _ = built
    html = (out / "html" / "notebooks" / "06-wide.html").read_text()
    assert len(re.findall(r"<img ", html)) >= 3
    pasted = re.findall(r'<span class="pasted-text">([^<]*)</span>', html)
    assert len(pasted) >= 20 and all(p.strip() for p in pasted)
    assert "100,000" in pasted  # the question's n, from the notebook's parameters
    # The Jacobian table names every wide strategy; the dense Hessians at the question's size
    # are shown as skipped on the model's prediction beside the measured products.
    for name in ("grad-loop-create-graph", "batched-backward", "tape-jacobian-pfor", "jacrev"):
        assert re.search(rf"<code[^>]*>(<span[^>]*>)?{re.escape(name)}", html), name
    assert "skipped (needs" in html and "hvp" in html
    # The Greeks' errors are numbers, and the picks chapter has a table of picks per shape.
    assert not any("not measured" in p for p in pasted), pasted
    picks = (out / "html" / "notebooks" / "07-recommend.html").read_text()
    headers = [_cells(re.search(r"<tr.*?</tr>", t, flags=re.S).group(0))
               for t in re.findall(r"<table.*?</table>", picks, flags=re.S)]  # fmt: skip
    assert sum("repeated calls" in h and "one call" in h for h in headers) == 3


def test_every_in_short_box_is_short(built):
    """Each chapter opens with its finding in a box a reader takes in at a glance: at most 60
    words and 3 numbers (publish.prose's reading of words and numbers)."""
    from jacbench.publish import prose

    out, _ = built
    for name in book.chapters()[:7]:  # 01-question to 07-recommend
        html = (out / "html" / "notebooks" / f"{name}.html").read_text()
        box = re.search(r'<div class="[^"]*in-short[^"]*">(.*?)</div>', html, flags=re.S)
        assert box, name
        said = prose.sentences(f"<article>{box.group(1)}</article>")
        words = sum(len(prose.words(s)) for s in said)
        numbers = sum(prose.numbers(s) for s in said)
        assert 10 <= words <= 60 and numbers <= 3, (name, words, numbers, said)
