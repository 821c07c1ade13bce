"""The built book's pages: no path of the machine that built it, and every result searchable."""

import json
import re
from pathlib import Path

import pytest

from jacbench.measure.dataset import Dataset
from jacbench.publish import browser
from jacbench.report import data, dataset
from jacbench.report.chapters import results as results_chapter

ROOT = Path(__file__).resolve().parents[1]
RESULTS_PAGE = Path("notebooks") / "10-results.html"


def _machine_paths(out: Path, results: Path) -> set[str]:
    """The absolute paths a careless build would print: the checkout, the build folder and
    the folder that holds the results file."""
    folders = {ROOT, out, out.parent, results.parent}
    return {str(p) for f in folders for p in (f, f.resolve())}


def _text_files(folder: Path):
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.suffix in {".html", ".js", ".ipynb", ".txt", ".json", ".csv"}:
            yield path


def test_no_page_names_a_path_of_the_machine_that_built_it(built, book_results):
    out, _ = built
    results = book_results
    paths = _machine_paths(out, results)
    checked = 0
    for path in _text_files(out / "html"):
        text = path.read_text(errors="replace")
        leaked = [p for p in paths if p in text]
        assert not leaked, f"{path.relative_to(out / 'html')} names {leaked[0]}"
        checked += 1
    assert checked > 10
    # The parameters box names the results file, not where it lies.
    page = (out / "html" / "notebooks" / "04-gbm.html").read_text()
    box = re.search(r"Parameters of this run.*?</ul>", page, flags=re.S).group(0)
    shown = re.sub(r"<[^>]+>", "", box)
    assert dataset.RESULTS.as_posix() in shown  # the path within the checkout
    assert not re.search(r"(^|\s|')/", shown)  # and no absolute one


def _table_data(html: str) -> list:
    """The rows ITables embeds in the page for its table (a JSON string in its arguments)."""
    found = re.search(r'^\s*"data_json": (".*"),?$', html, flags=re.M)
    assert found, "no ITables data in the page"
    return json.loads(json.loads(found.group(1)))


def _downloads(html: str, page: Path) -> dict[str, Path]:
    hrefs = re.findall(r'<a class="reference download internal"[^>]*href="([^"]+)"', html)
    return {Path(h).name: (page.parent / h).resolve() for h in hrefs}


def test_all_results_page_holds_every_row_and_its_files(built, book_results):
    out, _ = built
    results = book_results
    page = out / "html" / RESULTS_PAGE
    html = page.read_text()
    # The interactive table, with DataTables embedded in the page (no network needed).
    assert "window._itables_" in html and "dt_for_itables" not in html
    rows = _table_data(html)
    assert len(rows) == len(data.load(results)) > 0
    # Links to the results and their metadata (and the crossover measured beside them), each
    # file copied into the built book, byte for byte; the results' metadata with one field
    # added, which dataset the book was built from.
    links = _downloads(html, page)
    ds = Dataset(results)
    expected = {"results.csv": ds.results, "results.meta.json": ds.meta}
    if ds.crossover.exists():
        expected["results.crossover.csv"] = ds.crossover
    for name, source in expected.items():
        assert name in links, f"no download link to {name}: {sorted(links)}"
        assert links[name].is_file() and (out / "html") in links[name].parents
        if name == "results.meta.json":
            staged = json.loads(links[name].read_text())
            assert staged.pop("dataset") == {"source": dataset.RESULTS.as_posix(),
                                             "reference": True}  # fmt: skip
            assert staged == json.loads(source.read_text())
        else:
            assert links[name].read_bytes() == source.read_bytes(), name


_INFO = "() => document.querySelector('.dt-info').textContent"
_COLUMN = """(heading) => {
  const heads = [...document.querySelectorAll('.dt-scroll-head th')]
    .map(th => th.textContent.trim());
  const i = heads.indexOf(heading);
  return [...document.querySelectorAll('.dt-scroll-body tbody tr')]
    .map(r => r.children[i].textContent);
}"""


# Whether the first non-empty cell of a column shows the given text.
_FIRST_IS = """([heading, want]) => {
  const heads = [...document.querySelectorAll('.dt-scroll-head th')]
    .map(th => th.textContent.trim());
  const i = heads.indexOf(heading);
  const cells = [...document.querySelectorAll('.dt-scroll-body tbody tr')]
    .map(r => r.children[i].textContent).filter(v => v);
  return cells.length > 0 && cells[0] === want;
}"""


@pytest.mark.parametrize("viewport", ["laptop", "phone"])
def test_all_results_table_sorts_and_searches_in_chromium(built, book_results, viewport):
    out, _ = built
    results = book_results
    df = data.load(results)
    counts = df["status"].astype(str).value_counts()
    other = next(s for s in counts.index if s != "ok")  # a status only some rows have
    width, height = browser.VIEWPORTS[viewport]
    url = RESULTS_PAGE.as_posix()
    with browser.serve(out / "html") as base, browser.browser() as context:
        seen, page = browser.open_page(context, f"{base}{url}", (width, height))
        page.wait_for_selector(".dt-info")
        assert f"of {len(df)} entries" in page.evaluate(_INFO)
        # A click on a header sorts by value, not as text ("10.2" after "9.87").
        page.locator(".dt-scroll-head th", has_text="warm median (ms)").click()
        # DataTables redraws the rows after the click returns (a busy machine read them before
        # it had): wait until the first timed row shows the smallest warm time of the data.
        smallest = results_chapter.number(df["warm_median_s"].min() * 1e3)
        page.wait_for_function(_FIRST_IS, arg=["warm median (ms)", smallest])
        warm = [float(v.replace(",", "")) for v in page.evaluate(_COLUMN, "warm median (ms)") if v]
        assert len(warm) > 1 and warm == sorted(warm)
        # The search keeps the rows that hold the text.
        page.fill(".dt-search input", other)
        page.wait_for_function(f"() => !/ of {len(df)} entries/.test(({_INFO})())")
        assert f"of {counts[other]} entries" in page.evaluate(_INFO)
        # The page is never wider than the screen: the table scrolls inside its own box.
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width
        page.close()
    assert seen.errors == []
