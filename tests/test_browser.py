"""The book opened page by page in headless Chromium, and what the checker catches."""

import json
import re
import shutil
import struct

import pytest

from jacbench.cli import main
from jacbench.publish import book, browser

GBM_PAGE, MAIN_LABEL = browser.MAIN_FIGURE


@pytest.fixture(scope="module")
def chapters(built):
    out, _ = built
    return browser.Book.from_sources(out / "src")


def _copy_html(built, tmp_path):
    out, _ = built
    copy = tmp_path / "html"
    shutil.copytree(out / "html", copy)
    return copy


def _png_width(path) -> int:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">I", head[16:20])[0]


def test_the_toc_gives_every_chapter_in_order(built, chapters):
    out, _ = built
    toc = (out / "src" / "_toc.yml").read_text()
    files = re.findall(r"^  - file: (\S+)", toc, flags=re.M)
    assert chapters.chapters == files and len(files) >= 6
    assert chapters.root == re.search(r"^root: (\S+)", toc, flags=re.M).group(1)
    config = (out / "src" / "_config.yml").read_text()
    assert chapters.title == re.search(r'^title: "(.+)"', config, flags=re.M).group(1)


def test_every_page_passes_in_chromium(built, chapters):
    out, _ = built
    html = out / "html"
    visited = browser.pages(html)
    # Every chapter is among the pages checked, with search and the index.
    for docname in [chapters.root, *chapters.chapters]:
        assert f"{docname}.html" in visited
    assert {"search.html", "genindex.html", "notebooks/04-gbm.html"} <= set(visited)
    assert browser.check_html(html, out / "src") == []


def test_screenshots_at_laptop_and_phone_width(built, chapters):
    out, _ = built
    saved, problems = browser.screenshots(out / "html", out / "screenshots", chapters)
    assert problems == []
    names = {p.name: p for p in saved}
    assert set(names) == {
        "landing-laptop.png",
        "landing-phone.png",
        "main-figure-laptop.png",
        "main-figure-phone.png",
    }
    assert _png_width(names["landing-laptop.png"]) == browser.VIEWPORTS["laptop"][0]
    assert _png_width(names["landing-phone.png"]) == browser.VIEWPORTS["phone"][0]
    # The figure fits the phone (plus the few pixels of margin the clip keeps around it).
    assert _png_width(names["main-figure-phone.png"]) <= browser.VIEWPORTS["phone"][0] + 16


def test_a_deleted_image_is_reported(built, tmp_path):
    out, _ = built
    html = _copy_html(built, tmp_path)
    page = (html / f"{GBM_PAGE}.html").read_text()
    figure = re.search(rf'<figure[^>]*id="{MAIN_LABEL}".*?</figure>', page, flags=re.S).group(0)
    src = re.search(r'<img [^>]*src="([^"]+)"', figure).group(1)
    (html / GBM_PAGE).parent.joinpath(src).resolve().unlink()
    problems = browser.check_html(html, out / "src", only=[f"{GBM_PAGE}.html"], searches={})
    assert f"{GBM_PAGE}.html: image did not load: {src}" in problems


def test_a_blank_glued_value_is_reported(built, tmp_path):
    out, _ = built
    html = _copy_html(built, tmp_path)
    page = html / "notebooks" / "01-question.html"
    empty = '<span class="pasted-text"></span>'
    text, n = re.subn(r'<span class="pasted-text">[^<]+</span>', empty, page.read_text(), count=1)
    assert n == 1
    page.write_text(text)
    only = ["notebooks/01-question.html"]
    problems = browser.check_html(html, out / "src", only=only, searches={})
    assert "notebooks/01-question.html: a glued value renders empty (pasted-text)" in problems


def test_a_removed_glue_key_is_reported(built, tmp_path):
    out, _ = built
    staging = tmp_path / "src"
    shutil.copytree(out / "src", staging)
    notebook = staging / f"{GBM_PAGE}.ipynb"
    nb = json.loads(notebook.read_text())
    # What the page pastes: its Markdown cells and the captions of its figures.
    prose = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    captions = [c["metadata"].get("mystnb", {}).get("figure", {}) for c in nb["cells"]]
    prose += "".join(str(c.get("caption", "")) for c in captions)
    glued = re.findall(r"\{glue:text\}`(\w+)`", prose)
    key = glued[0]
    removed = 0
    for cell in nb["cells"]:
        keep = []
        for output in cell.get("outputs", []):
            if output.get("metadata", {}).get("scrapbook", {}).get("name") == key:
                removed += 1
            else:
                keep.append(output)
        if "outputs" in cell:
            cell["outputs"] = keep
    assert removed == 1
    notebook.write_text(json.dumps(nb))
    # The build, warnings as errors, stops and names the key ...
    with pytest.raises(book.BookError, match=key):
        book.jupyter_book(staging, tmp_path / "strict")
    # ... and a build that lets warnings pass shows fewer values, which the browser sees.
    html = tmp_path / "html"
    book.jupyter_book(staging, html, warnings_as_errors=False)
    problems = browser.check_html(html, staging, only=[f"{GBM_PAGE}.html"], searches={})
    n, gone = len(glued), glued.count(key)
    assert (
        f"{GBM_PAGE}.html: shows {n - gone} of the {n} glued values its source pastes "
        "(a glue key not found?)"
    ) in problems


def test_a_figure_wider_than_the_phone_is_reported(built, chapters, tmp_path):
    html = _copy_html(built, tmp_path)
    css = html / "_static" / "jacbench.css"
    # Wider than the phone, and out of the box that lets the main figure scroll on a phone.
    css.write_text(css.read_text() + "\nfigure img { max-width: none !important; width: 900px; }"
                   "\nfigure { overflow-x: visible !important; }\n")  # fmt: skip
    _, problems = browser.screenshots(html, tmp_path / "shots", chapters)
    assert len(problems) == 1
    assert f"{GBM_PAGE}.html at {browser.VIEWPORTS['phone'][0]} px" in problems[0]
    assert "no scroll container" in problems[0]


def _table_problems(problems):
    return [p for p in problems if re.search(r" at \d+ px: table \d+ ", p)]


def test_tables_fit_a_laptop_and_scroll_in_their_own_box_on_a_phone(built, chapters):
    out, _ = built
    laptop, phone = browser.VIEWPORTS["laptop"], browser.VIEWPORTS["phone"]
    problems, wide, narrow = [], [], []
    with browser.serve(out / "html") as base, browser.browser() as context:
        for docname in chapters.chapters:
            _, tab = browser.open_page(context, f"{base}{docname}.html")
            try:
                problems += browser.check_tables(tab, f"{docname}.html")
                wide.append(browser.measure_tables(tab, laptop))
                narrow.append(browser.measure_tables(tab, phone))
            finally:
                tab.close()
    assert problems == []
    # The rule is tested, not passed vacuously: the chapters have tables, each within its
    # column at the laptop's width (but an interactive one made to scroll), and some wider
    # than the phone (they scroll in their own box there).
    tables = [t for m in wide for t in m["tables"] if t["shown"] and not t["scrolling"]]
    assert len(tables) >= 5
    assert all(t["width"] <= t["area"]["width"] + 0.5 for t in tables)
    assert any(t["width"] > m["viewport"] for m in narrow for t in m["tables"])


def test_a_table_wider_than_the_column_is_reported(built, tmp_path):
    out, _ = built
    html = _copy_html(built, tmp_path)
    page = html / f"{GBM_PAGE}.html"
    text = page.read_text()
    tables = [m.start() for m in re.finditer(r"<table[ >]", text)]
    assert len(tables) >= 2
    # One long unbreakable cell in the chapter's second table.
    cell = re.compile(r"(<td[^>]*>)(.*?)(</td>)", flags=re.S)
    start = tables[1]
    text = text[:start] + cell.sub(r"\g<1>" + "x" * 150 + r"\g<3>", text[start:], count=1)
    page.write_text(text)
    problems = browser.check_html(html, out / "src", only=[f"{GBM_PAGE}.html"], searches={})
    laptop = browser.VIEWPORTS["laptop"][0]
    assert len(_table_problems(problems)) == 1, problems
    line = _table_problems(problems)[0]
    match = re.fullmatch(
        rf"{GBM_PAGE}\.html at {laptop} px: table 2 is (\d+) px wide in a (\d+) px column", line
    )
    assert match, line
    assert int(match.group(1)) > int(match.group(2))
    # On the phone the same table scrolls inside its own box: no problem there.
    assert problems == [line]


def test_a_table_that_scrolls_the_phone_page_is_reported(built, tmp_path):
    out, _ = built
    html = _copy_html(built, tmp_path)
    css = html / "_static" / "jacbench.css"
    # Without its output box's scrolling, a wide table pushes the page sideways on a phone.
    css.write_text(
        css.read_text() + "\ndiv.cell_output .output { overflow-x: visible !important; }\n"
    )
    # The wide chapter: its table of every strategy is open (the GBM chapter folds its wide
    # ones to keep its height within the reader checks).
    page = "notebooks/06-wide"
    problems = browser.check_html(html, out / "src", only=[f"{page}.html"], searches={})
    phone = browser.VIEWPORTS["phone"][0]
    assert problems and problems == _table_problems(problems)
    # An open table pushes the page; one in a folded section is cut off by the fold's box.
    for line in problems:
        assert re.fullmatch(
            rf"{page}\.html at {phone} px: table \d+ is \d+ px wide and (makes the page "
            "scroll sideways|is cut off at the screen's edge)",
            line,
        ), line
    assert any(line.endswith("makes the page scroll sideways") for line in problems)


def test_the_search_page_must_find_its_chapter(built):
    out, _ = built
    with browser.serve(out / "html") as base, browser.browser() as context:
        assert browser.check_search(context, base, "pfor", GBM_PAGE) == []
        missing = browser.check_search(context, base, "pfor", "book/no-such-chapter")
    assert missing and "is not among the" in missing[0]


def test_check_html_without_a_build_exits_2(tmp_path, capsys):
    assert main(["check-html", str(tmp_path / "nothing")]) == 2
    assert "no built book" in capsys.readouterr().err


def test_check_html_without_chromium_exits_2(built, tmp_path, capsys):
    out, _ = built
    missing = str(tmp_path / "no-chromium")
    assert main(["check-html", str(out / "html"), "--chromium", missing]) == 2
    assert f"Chromium not found at {missing}" in capsys.readouterr().err


def test_the_main_figure_scrolls_in_its_own_box_on_a_phone(built):
    # Drawn at page width, it keeps a readable size on a phone: wider than the screen, inside a
    # box that scrolls sideways, the page itself as wide as the screen.
    out, _ = built
    with browser.serve(out / "html") as base, browser.browser() as context:
        _, page = browser.open_page(context, f"{base}{GBM_PAGE}.html", browser.VIEWPORTS["phone"])
        box = page.locator(f"#{MAIN_LABEL} img").first.evaluate(browser._OVERFLOW)
        page.close()
    assert box["width"] > box["viewport"] and box["scroller"] == "FIGURE"
    assert box["page"] <= box["viewport"]


def test_the_reader_checks_catch_a_chapter_without_its_summary_and_a_tall_figure(built, tmp_path):
    html = _copy_html(built, tmp_path)
    page = html / "notebooks" / "02-modes.html"
    page.write_text(page.read_text().replace(">In short<", ">Summary<"))
    css = html / "_static" / "jacbench.css"
    css.write_text(css.read_text() + "\n#fig-time img { height: 1200px !important; }\n")
    out, _ = built
    problems = browser.check_html(html, out / "src", only=[f"{GBM_PAGE}.html"], searches={})
    assert [p for p in problems if "figure fig-time is 1,2" in p], problems
    from jacbench.publish.readerchecks import summary_problems

    assert summary_problems(html) == ["notebooks/02-modes.html: no 'In short' box"]
