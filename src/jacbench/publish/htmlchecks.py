"""The checks of a built book's pages: links and anchors, glued values, math, titles,
the left navigation, the search, tables that do not fit, and (from ``readerchecks``) chapters
that do not open with their answer, pages too tall to finish and figures taller than a screen,
each problem one line; ``check_html`` runs them all.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

import yaml

from jacbench.errors import UsageError
from jacbench.publish.chromium import TIMEOUT_MS, VIEWPORTS, Visit, browser, open_page, serve
from jacbench.publish.readerchecks import (
    height_problems,
    measure_heights,
    prose_check,
    summary_problems,
)

# Folders of a Sphinx build that hold assets, not pages.
ASSET_DIRS = ("_static", "_sources", "_images", "_downloads")
# Queries the search page must answer with a given page (docname).
SEARCHES = {"pfor": "notebooks/04-gbm"}
GLUE_TEXT = re.compile(r"\{glue:text\}`")


# -- what the book should contain ----------------------------------------------------------------


@dataclass
class Book:
    """The book's title and its chapters in order (docnames), read from its configuration."""

    title: str
    root: str
    chapters: list[str]

    @classmethod
    def from_sources(cls, source: Path) -> Book:
        """Read _toc.yml (root and chapters, parts flattened) and _config.yml's title."""
        toc_path, config_path = source / "_toc.yml", source / "_config.yml"
        if not toc_path.exists():
            raise UsageError(f"no _toc.yml in {source}")
        toc = yaml.safe_load(toc_path.read_text())
        entries = list(toc.get("chapters", []))
        for part in toc.get("parts", []):
            entries += part.get("chapters", [])
        chapters = [_docname(e["file"]) for e in entries if "file" in e]
        config = yaml.safe_load(config_path.read_text()) if config_path.exists() else {}
        return cls(str(config.get("title", "")), _docname(toc["root"]), chapters)


def _docname(file: str) -> str:
    return re.sub(r"\.(md|ipynb|rst)$", "", file.strip("/"))


class _PageParser(HTMLParser):
    """The ids (and named anchors) of a page, its first h1's text, and a meta refresh."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.h1: str | None = None
        self.refresh: str | None = None
        self._in_h1 = False
        self._skip = 0
        self._h1_text: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("name"):
            self.ids.add(a["name"])
        if tag == "meta" and (a.get("http-equiv") or "").lower() == "refresh":
            self.refresh = (a.get("content") or "").partition("url=")[2].strip() or None
        if tag == "h1" and self.h1 is None:
            self._in_h1 = True
        elif self._in_h1 and tag == "a" and "headerlink" in (a.get("class") or ""):
            self._skip += 1

    def handle_endtag(self, tag):
        if tag == "a" and self._skip:
            self._skip -= 1
        elif tag == "h1" and self._in_h1:
            self._in_h1 = False
            self.h1 = re.sub(r"\s+", " ", "".join(self._h1_text)).strip()

    def handle_data(self, data):
        if self._in_h1 and not self._skip:
            self._h1_text.append(data)


@functools.lru_cache(maxsize=512)
def _parse(path: Path, mtime: float) -> _PageParser:
    parser = _PageParser()
    parser.feed(path.read_text(errors="replace"))
    return parser


def parse_page(path: Path) -> _PageParser:
    return _parse(path, path.stat().st_mtime)


def pages(html: Path) -> list[str]:
    """Every HTML page of a build, relative to it, assets' folders left out."""
    return sorted(
        p.relative_to(html).as_posix()
        for p in html.rglob("*.html")
        if p.relative_to(html).parts[0] not in ASSET_DIRS
    )


def _glue_references(html: Path, page: str) -> int | None:
    """How many {glue:text} values the page's source pastes, from the build's _sources."""
    stem = page[: -len(".html")]
    for suffix in (".md", ".ipynb"):
        source = html / "_sources" / f"{stem}{suffix}"
        if source.exists():
            text = source.read_text(errors="replace")
            if suffix == ".ipynb":
                cells = json.loads(text).get("cells", [])
                # Markdown cells, and the captions of figures made by code cells.
                text = "\n".join(
                    "".join(c.get("source", "")) if c.get("cell_type") == "markdown" else
                    str(c.get("metadata", {}).get("mystnb", {}).get("figure", {}).get("caption"))
                    for c in cells
                )  # fmt: skip
            return len(GLUE_TEXT.findall(text))
    return None


# -- the checks ----------------------------------------------------------------------------------


def _target(html: Path, base: str, href: str) -> tuple[str, Path, str] | None:
    """(path, file, fragment) of a link into the served book; None for any other link."""
    parts = urlsplit(href)
    if parts.scheme not in ("http", "https") or not href.startswith(base.rstrip("/")):
        return None
    path = unquote(parts.path).lstrip("/")
    if path == "" or path.endswith("/"):
        path += "index.html"
    return path, html / path, unquote(parts.fragment)


def check_links(html: Path, page: str, base: str, visit_: Visit) -> list[str]:
    """Every internal link leads to a file that exists, and its #anchor to an id in that file."""
    problems = []
    own_ids = set(visit_.info["ids"])
    for href in dict.fromkeys(visit_.info["links"]):
        target = _target(html, base, href)
        if target is None:
            continue
        path, file, fragment = target
        if not file.is_file():
            problems.append(f"{page}: link to a missing file: {path}")
            continue
        if not fragment or file.suffix != ".html":
            continue
        ids = (own_ids if path == page else set()) | parse_page(file).ids
        if fragment not in ids:
            problems.append(f"{page}: link to a missing anchor: {path}#{fragment}")
    return problems


def check_page(html: Path, page: str, base: str, book: Book, visit_: Visit) -> list[str]:
    """The problems of one visited page."""
    info = visit_.info
    problems = [f"{page}: {e}" for e in dict.fromkeys(visit_.errors)]
    for img in info["images"]:
        if not img["ok"]:
            problems.append(f"{page}: image did not load: {img['src']}")
    problems += check_links(html, page, base, visit_)
    for p in info["pasted"]:
        if not p["text"] and not p["media"]:
            problems.append(f"{page}: a glued value renders empty ({p['cls']})")
    expected = _glue_references(html, page)
    if expected is not None and info["pastedText"] < expected:
        problems.append(
            f"{page}: shows {info['pastedText']} of the {expected} glued values its source "
            "pastes (a glue key not found?)"
        )
    if info["figuresAsText"]:
        problems.append(f"{page}: {info['figuresAsText']} figures show as text (<Figure size ...>)")
    if info["tablesAsText"]:
        problems.append(f"{page}: {info['tablesAsText']} Markdown tables show as text")
    if info["mathTypeset"] < info["math"] or info["mathErrors"]:
        problems.append(
            f"{page}: math not rendered: {info['mathTypeset']} of {info['math']} formulas "
            f"typeset, {info['mathErrors']} MathJax errors"
        )
    title = info["title"]
    if not title or (book.title and book.title not in title):
        problems.append(f"{page}: page title {title!r} does not name the book {book.title!r}")
    elif info["h1"] and not title.startswith(info["h1"]):
        problems.append(f"{page}: page title {title!r} does not start with its heading")
    problems += check_navigation(html, page, base, book, info["nav"])
    return problems


def check_navigation(
    html: Path, page: str, base: str, book: Book, nav: list[dict] | None
) -> list[str]:
    """The left navigation links every chapter under the chapter's own heading."""
    if nav is None:
        return [f"{page}: no left navigation"]
    links = {}
    for a in nav:
        target = _target(html, base, a["href"])
        if target:
            links.setdefault(target[0], a["text"])
    problems = []
    for docname in [book.root, *book.chapters]:
        path = f"{docname}.html"
        if path not in links:
            problems.append(f"{page}: the navigation does not list {docname}")
            continue
        file = html / path
        heading = parse_page(file).h1 if file.is_file() else None
        if heading and links[path] != heading:
            problems.append(
                f"{page}: the navigation names {docname} {links[path]!r}, "
                f"its heading is {heading!r}"
            )
    return problems


# -- tables: they fit the column at a laptop's width, and scroll in their own box on a phone ------

# Runs in an open page, folded sections opened first. For each table of the article (a table
# inside a table, and the header and footer copies of a DataTables table, left out): its box;
# the inner box of its nearest ancestor that scrolls or clips it (myst-nb's cell output box,
# PST's scrollable-table container); the area it may take, the content column or, in a
# full-width cell, the cell; and whether it is an interactive table made to scroll sideways
# (DataTables' scrollX: its own scroll bar, the header moving with it).
_TABLES = r"""
async () => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  await new Promise(r => requestAnimationFrame(() => r()));
  const article = document.querySelector('article.bd-article')
    || document.querySelector('article') || document.body;
  const inner = e => {
    const r = e.getBoundingClientRect(), s = getComputedStyle(e);
    const left = r.left + parseFloat(s.borderLeftWidth) + parseFloat(s.paddingLeft);
    const right = r.right - parseFloat(s.borderRightWidth) - parseFloat(s.paddingRight);
    return {left, right, width: right - left};
  };
  const copies = '.dt-scroll-head, .dt-scroll-foot, .dataTables_scrollHead, .dataTables_scrollFoot';
  const wide = '.full-width, .tag_full-width, .full_width, .tag_full_width';
  const tables = [...article.querySelectorAll('table')]
    .filter(t => !t.parentElement.closest('table') && !t.closest(copies));
  return {
    viewport: document.documentElement.clientWidth,
    column: inner(article),
    tables: tables.map((t, i) => {
      const r = t.getBoundingClientRect();
      let overflow = null, box = null;
      for (let e = t.parentElement; e && e !== document.body; e = e.parentElement) {
        const o = getComputedStyle(e).overflowX;
        if (o !== 'visible') { overflow = o; box = inner(e); break; }
      }
      const cell = t.closest(wide);
      return {index: i + 1, width: r.width, shown: r.width > 0 && r.height > 0,
              left: r.left, right: r.right, overflow, box,
              area: cell && article.contains(cell) ? inner(cell) : inner(article),
              scrolling: !!t.closest('.dt-scroll-body, .dataTables_scrollBody')};
    }),
  };
}
"""


def measure_tables(tab, viewport: tuple[int, int]) -> dict:
    """An open page's tables at a viewport size (the page is resized): the viewport's width,
    the content column's box, and each table's box, its scroll container's and its area."""
    tab.set_viewport_size({"width": viewport[0], "height": viewport[1]})
    return tab.evaluate(_TABLES)


def _laptop_problem(t: dict, viewport: int) -> str | None:
    """A table that does not fit its area (the column, or its full-width cell) at the laptop's
    width, or whose area reaches past the screen; an interactive table made to scroll may be
    wider than its area as long as its scroll box is inside it."""
    area, box = t["area"], t["box"]
    if area["left"] < -0.5 or area["right"] > viewport + 0.5:
        return f"and its {area['width']:.0f} px column reaches past the {viewport} px screen"
    left = max(area["left"], box["left"]) if box else area["left"]
    right = min(area["right"], box["right"]) if box else area["right"]
    shown = (box["left"], box["right"]) if t["scrolling"] else (t["left"], t["right"])
    if shown[0] < left - 0.5 or shown[1] > right + 0.5:
        return f"in a {right - left:.0f} px column"
    return None


def table_problems(page: str, seen: dict, fit: bool) -> list[str]:
    """The tables of one measurement that break the rule: with fit (the laptop's width), each
    table lies within its column; without (the phone's), a table wider than the screen scrolls
    inside a container of its own that fits the screen, so the page never scrolls sideways."""
    problems = []
    width = seen["viewport"]
    for t in seen["tables"]:
        if not t["shown"]:
            continue
        where = f"{page} at {width} px: table {t['index']} is {t['width']:.0f} px wide"
        box = t["box"]
        if fit:
            problem = _laptop_problem(t, width)
            if problem:
                problems.append(f"{where} {problem}")
        elif t["right"] > width + 0.5 or t["left"] < -0.5:
            if t["overflow"] in ("auto", "scroll"):
                if box["left"] >= -0.5 and box["right"] <= width + 0.5:
                    continue  # it scrolls inside its own box
                problems.append(f"{where} and its scroll container is wider than the screen")
            elif t["overflow"] in ("hidden", "clip"):
                problems.append(f"{where} and is cut off at the screen's edge")
            else:
                problems.append(f"{where} and makes the page scroll sideways")
    return problems


def check_tables(tab, page: str) -> list[str]:
    """At the laptop's width every table fits its column; at the phone's, a table wider than
    the screen scrolls in its own container, not the page."""
    problems = []
    for name, size in VIEWPORTS.items():
        problems += table_problems(page, measure_tables(tab, size), fit=name == "laptop")
    return problems


def check_search(context, base: str, query: str, docname: str) -> list[str]:
    """The search page, asked query, lists docname among its results."""
    page = context.new_page()
    try:
        page.goto(f"{base}search.html?q={quote(query)}", wait_until="load")
        page.wait_for_selector("#search-results .search-summary", timeout=TIMEOUT_MS)
        hrefs = page.eval_on_selector_all("#search-results a[href]", "els => els.map(a => a.href)")
    except Exception as e:  # a timeout: the search never finished
        return [f"search.html?q={query}: the search did not finish: {type(e).__name__}"]
    finally:
        page.close()
    found = {urlsplit(h).path.lstrip("/") for h in hrefs}
    if f"{docname}.html" not in found:
        return [f"search.html?q={query}: {docname} is not among the {len(found)} results"]
    return []


def check_html(
    html: Path,
    source: Path,
    only: list[str] | None = None,
    searches: dict[str, str] | None = None,
    executable: str | Path | None = None,
) -> list[str]:
    """Open every page of a built book (or only the given ones) and return its problems."""
    html = Path(html)
    if not (html / "index.html").is_file():
        raise UsageError(f"no built book at {html} (no index.html); run 'make book' first")
    book = Book.from_sources(Path(source))
    todo = only if only is not None else pages(html)
    searches = SEARCHES if searches is None else searches
    problems: list[str] = []
    with serve(html) as base, browser(executable) as context:
        for page in todo:
            parsed = parse_page(html / page)
            if parsed.refresh:  # a redirect page: its target must exist
                target = (html / page).parent / parsed.refresh.split("#")[0]
                if not target.is_file():
                    problems.append(f"{page}: redirects to a missing page: {parsed.refresh}")
                continue
            seen, tab = open_page(context, base + page)
            try:
                problems += check_page(html, page, base, book, seen)
                chapter = page.removesuffix(".html") in book.chapters
                problems += height_problems(page, measure_heights(tab), chapter=chapter)
                problems += check_tables(tab, page)
            finally:
                tab.close()
        for query, docname in searches.items():
            problems += check_search(context, base, query, docname)
    if only is None:
        problems += summary_problems(html)
        problems += prose_check(html, [book.root, *book.chapters])[1]
    return problems
