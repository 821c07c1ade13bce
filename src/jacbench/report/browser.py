"""The built book as a reader sees it: every page opened in headless Chromium and checked.

``check_html`` serves a built HTML folder on 127.0.0.1, opens each page in Debian's Chromium
(driven by Playwright, never a downloaded browser) and returns a list of problems, one line
each: script and console errors, images that did not load, internal links or anchors that lead
nowhere, glued values that render empty or not at all, math that MathJax did not typeset, pages
whose title or left navigation is wrong, and a search that does not find its chapter.
``screenshots`` saves the landing page and the GBM chapter's main figure at a laptop and a
phone width for review, and reports a figure wider than the phone without a scroll container.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

import yaml

from jacbench.errors import UsageError

CHROMIUM = "/usr/bin/chromium"
# Chromium as root in a machine without a network: no sandbox, no GPU, no background traffic.
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
# Folders of a Sphinx build that hold assets, not pages.
ASSET_DIRS = ("_static", "_sources", "_images", "_downloads")
# Queries the search page must answer with a given page (docname).
SEARCHES = {"pfor": "book/04-gbm"}
# The GBM chapter and the image file of its main figure.
MAIN_FIGURE = ("book/04-gbm", "04-time.png")
VIEWPORTS = {"laptop": (1280, 800), "phone": (390, 844)}
GLUE_TEXT = re.compile(r"\{glue:text\}`")
TIMEOUT_MS = 30_000

# Runs in the page once it has loaded: waits for MathJax, fonts and images, then reports.
_COLLECT = r"""
async () => {
  const mj = window.MathJax;
  if (mj && mj.startup && mj.startup.promise) { await mj.startup.promise; }
  await document.fonts.ready;
  await Promise.all([...document.images].map(i => i.decode().catch(() => null)));
  const text = el => {
    const c = el.cloneNode(true);
    c.querySelectorAll('.headerlink').forEach(x => x.remove());
    return c.textContent.replace(/\s+/g, ' ').trim();
  };
  const h1 = document.querySelector('article h1') || document.querySelector('h1');
  const nav = document.querySelector('nav.bd-docs-nav');
  const math = [...document.querySelectorAll('span.math, div.math')];
  return {
    title: document.title.trim(),
    h1: h1 ? text(h1) : null,
    images: [...document.images].map(i => ({
      src: i.getAttribute('src'), ok: i.complete && i.naturalWidth > 0})),
    links: [...document.querySelectorAll('a[href]')].map(a => a.href),
    ids: [...document.querySelectorAll('[id]')].map(e => e.id),
    pasted: [...document.querySelectorAll('[class*="pasted-"]')].map(e => ({
      cls: e.className,
      text: e.textContent.trim(),
      media: !!e.querySelector('img, svg, mjx-container, table')})),
    pastedText: document.querySelectorAll('.pasted-text').length,
    nav: nav ? [...nav.querySelectorAll('a[href]')].map(a => ({href: a.href, text: text(a)}))
             : null,
    // Outputs that a reader sees as code instead of what they stand for.
    figuresAsText: [...document.querySelectorAll('.output pre, .cell_output pre')]
      .filter(e => /<Figure size [\d.]+x[\d.]+ with \d+ Axes>/.test(e.textContent)).length,
    tablesAsText: [...document.querySelectorAll('article p')]
      .filter(e => e.textContent.split('\n').filter(l => /^\s*\|.*\|\s*$/.test(l)).length > 1)
      .length,
    math: math.length,
    mathTypeset: math.filter(e => e.querySelector('mjx-container')).length,
    mathErrors: document.querySelectorAll('mjx-merror').length,
  };
}
"""


# -- serving and the browser ---------------------------------------------------------------------


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


@contextlib.contextmanager
def serve(root: Path) -> Iterator[str]:
    """Serve a folder on 127.0.0.1 (a free port) in a thread; yields the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def chromium_path(path: str | Path | None = None) -> Path:
    """The Chromium to run: the argument, else $JACBENCH_CHROMIUM, else Debian's."""
    exe = Path(path or os.environ.get("JACBENCH_CHROMIUM") or CHROMIUM)
    if not (exe.is_file() and os.access(exe, os.X_OK)):
        raise UsageError(
            f"Chromium not found at {exe}; install Debian's (apt-get install chromium) "
            "or set JACBENCH_CHROMIUM"
        )
    return exe


@contextlib.contextmanager
def browser(executable: str | Path | None = None) -> Iterator:
    """A Playwright browser context on headless Chromium with a fresh user-data-dir."""
    exe = chromium_path(executable)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise UsageError("the playwright package is missing; run 'make env'") from None
    with (
        tempfile.TemporaryDirectory(prefix="jacbench-chromium-") as profile,
        sync_playwright() as p,
    ):
        context = p.chromium.launch_persistent_context(
            profile,
            executable_path=str(exe),
            args=list(CHROMIUM_ARGS),
            headless=True,
            viewport={"width": VIEWPORTS["laptop"][0], "height": VIEWPORTS["laptop"][1]},
        )
        context.set_default_timeout(TIMEOUT_MS)
        try:
            yield context
        finally:
            context.close()


@dataclass
class Visit:
    """What one page showed: its collected facts and the errors seen while it loaded."""

    url: str
    info: dict
    errors: list[str] = field(default_factory=list)


def visit(context, url: str, viewport: tuple[int, int] | None = None) -> Visit:
    """Open url in a new page, wait for it to settle, collect facts and errors; close it."""
    seen, page = open_page(context, url, viewport)
    page.close()
    return seen


def open_page(context, url: str, viewport: tuple[int, int] | None = None) -> tuple[Visit, object]:
    """Like visit, but leaves the page open (for screenshots or printing): (Visit, page)."""
    page = context.new_page()
    if viewport:
        page.set_viewport_size({"width": viewport[0], "height": viewport[1]})
    errors: list[str] = []
    page.on(
        "console",
        lambda m: errors.append(f"console error: {m.text}") if m.type == "error" else None,
    )
    page.on("pageerror", lambda e: errors.append(f"script error: {e}"))
    page.on("requestfailed", lambda r: errors.append(f"request failed: {r.url} ({r.failure})"))
    page.on(
        "response",
        lambda r: errors.append(f"HTTP {r.status} for {r.url}") if r.status >= 400 else None,
    )
    page.goto(url, wait_until="load")
    return Visit(url, page.evaluate(_COLLECT), errors), page


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
                text = "\n".join(
                    "".join(c.get("source", "")) for c in cells if c.get("cell_type") == "markdown"
                )
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
            problems += check_page(html, page, base, book, visit(context, base + page))
        for query, docname in searches.items():
            problems += check_search(context, base, query, docname)
    return problems


_OVERFLOW = """
img => {
  const width = document.documentElement.clientWidth;
  const r = img.getBoundingClientRect();
  let scroller = null;
  for (let e = img.parentElement; e; e = e.parentElement) {
    const s = getComputedStyle(e);
    if (['auto', 'scroll'].includes(s.overflowX) && e.clientWidth <= width
        && e.scrollWidth > e.clientWidth) { scroller = e.tagName; break; }
  }
  return {viewport: width, left: r.left, right: r.right, width: r.width, scroller,
          page: document.documentElement.scrollWidth};
}
"""


_PAGE_BOX = """
e => {
  const r = e.getBoundingClientRect();
  const pad = 8;
  return {x: Math.max(0, r.left + window.scrollX - pad),
          y: Math.max(0, r.top + window.scrollY - pad),
          width: r.width + 2 * pad, height: r.height + 2 * pad};
}
"""


def screenshots(
    html: Path, out: Path, book: Book, executable: str | Path | None = None
) -> tuple[list[Path], list[str]]:
    """The landing page and the main figure at each width: (the PNGs saved, problems)."""
    out.mkdir(parents=True, exist_ok=True)
    docname, image = MAIN_FIGURE
    saved: list[Path] = []
    problems: list[str] = []
    with serve(html) as base, browser(executable) as context:
        for name, size in VIEWPORTS.items():
            _, page = open_page(context, f"{base}{book.root}.html", size)
            saved.append(out / f"landing-{name}.png")
            page.screenshot(path=str(saved[-1]), full_page=True)
            page.close()
            _, page = open_page(context, f"{base}{docname}.html", size)
            img = page.locator(f'img[src$="{image}"]').first
            if img.count() == 0:
                problems.append(f"{docname}.html: no image {image}")
                page.close()
                continue
            figure = page.locator(f'figure:has(img[src$="{image}"])').first
            # A clip of the whole page, not an element shot: scrolling to a figure taller than
            # the viewport would paint the sticky header over it.
            clip = (figure if figure.count() else img).evaluate(_PAGE_BOX)
            saved.append(out / f"main-figure-{name}.png")
            page.screenshot(path=str(saved[-1]), full_page=True, clip=clip)
            box = img.evaluate(_OVERFLOW)
            if (box["right"] > box["viewport"] + 0.5 or box["left"] < -0.5) and not box["scroller"]:
                problems.append(
                    f"{docname}.html at {size[0]} px: the figure {image} is {box['width']:.0f} px "
                    f"wide in a {box['viewport']} px viewport, with no scroll container"
                )
            page.close()
    return saved, problems
