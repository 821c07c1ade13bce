"""The built book as a reader sees it: every page opened in headless Chromium and checked.

``check_html`` serves a built HTML folder on 127.0.0.1, opens each page in Debian's Chromium
(driven by Playwright, never a downloaded browser) and returns a list of problems, one line
each: script and console errors, images that did not load, internal links or anchors that lead
nowhere, glued values that render empty or not at all, math that MathJax did not typeset, pages
whose title or left navigation is wrong, a search that does not find its chapter, and tables
that do not fit: wider than the content column at the laptop's width, or making the page scroll
sideways at the phone's (rather than scrolling in their own container); a chapter without its
"In short" box before its first section, a chapter page taller than 12,000 px or a figure
taller than 900 px at the laptop's width.
``screenshots`` saves the landing page and the GBM chapter's main figure at a laptop and a
phone width for review, and reports a figure wider than the phone without a scroll container.
Serving and driving Chromium are in ``chromium``, the checks of each page in ``htmlchecks``;
this module takes the screenshots and re-exports the rest.
"""

from __future__ import annotations

from pathlib import Path

from jacbench.errors import UsageError
from jacbench.publish import prose
from jacbench.publish.chromium import (
    CHROMIUM,
    CHROMIUM_ARGS,
    TIMEOUT_MS,
    VIEWPORTS,
    Visit,
    browser,
    chromium_path,
    open_page,
    serve,
    visit,
)
from jacbench.publish.htmlchecks import (
    ASSET_DIRS,
    GLUE_TEXT,
    SEARCHES,
    Book,
    check_html,
    check_links,
    check_navigation,
    check_page,
    check_search,
    check_tables,
    measure_tables,
    pages,
    parse_page,
    prose_check,
    table_problems,
)

# The checker's public names, wherever defined: callers use browser.X for all of them.
__all__ = [
    "ASSET_DIRS",
    "Book",
    "browser",
    "check_html",
    "check_links",
    "check_navigation",
    "check_page",
    "check_search",
    "check_tables",
    "CHROMIUM",
    "CHROMIUM_ARGS",
    "chromium_path",
    "GLUE_TEXT",
    "MAIN_FIGURE",
    "measure_tables",
    "open_page",
    "pages",
    "parse_page",
    "screenshots",
    "SEARCHES",
    "serve",
    "table_problems",
    "TIMEOUT_MS",
    "VIEWPORTS",
    "Visit",
    "visit",
]

# The GBM chapter and the label (HTML id) of its main figure.
MAIN_FIGURE = ("notebooks/04-gbm", "fig-time")


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


# The box of an element and everything in it: a figure's caption can be wider than the figure's
# own box (myst-nb sizes the figure to its image), and a clip of the figure alone cut it.
_PAGE_BOX = """
e => {
  let [left, top, right, bottom] = [Infinity, Infinity, -Infinity, -Infinity];
  for (const n of [e, ...e.querySelectorAll('*')]) {
    const r = n.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    left = Math.min(left, r.left); top = Math.min(top, r.top);
    right = Math.max(right, r.right); bottom = Math.max(bottom, r.bottom);
  }
  const pad = 8;
  const x = Math.max(0, left + window.scrollX - pad), y = Math.max(0, top + window.scrollY - pad);
  return {x, y, width: right + window.scrollX + pad - x, height: bottom + window.scrollY + pad - y};
}
"""


def screenshots(
    html: Path, out: Path, book: Book, executable: str | Path | None = None
) -> tuple[list[Path], list[str]]:
    """The landing page and the main figure at each width: (the PNGs saved, problems)."""
    out.mkdir(parents=True, exist_ok=True)
    docname, label = MAIN_FIGURE
    saved: list[Path] = []
    problems: list[str] = []
    with serve(html) as base, browser(executable) as context:
        for name, size in VIEWPORTS.items():
            _, page = open_page(context, f"{base}{book.root}.html", size)
            saved.append(out / f"landing-{name}.png")
            page.screenshot(path=str(saved[-1]), full_page=True)
            page.close()
            _, page = open_page(context, f"{base}{docname}.html", size)
            figure = page.locator(f"#{label}").first
            img = figure.locator("img").first
            if img.count() == 0:
                problems.append(f"{docname}.html: no figure {label} with an image")
                page.close()
                continue
            # A clip of the whole page, not an element shot: scrolling to a figure taller than
            # the viewport would paint the sticky header over it. The box is measured with the
            # viewport already as tall as the page, as the full-page shot lays it out (a shorter
            # one has a scroll bar, and the column moves when it goes).
            tall = page.evaluate("() => document.documentElement.scrollHeight")
            page.set_viewport_size({"width": size[0], "height": tall})
            clip = (figure if figure.count() else img).evaluate(_PAGE_BOX)
            saved.append(out / f"main-figure-{name}.png")
            page.screenshot(path=str(saved[-1]), full_page=True, clip=clip)
            page.set_viewport_size({"width": size[0], "height": size[1]})
            box = img.evaluate(_OVERFLOW)
            if (box["right"] > box["viewport"] + 0.5 or box["left"] < -0.5) and not box["scroller"]:
                problems.append(
                    f"{docname}.html at {size[0]} px: the figure {label} is {box['width']:.0f} px "
                    f"wide in a {box['viewport']} px viewport, with no scroll container"
                )
            page.close()
    return saved, problems


def check_built_book(
    html: str | Path = "_build/html",
    source: str | Path | None = None,
    shots: str | Path | None = None,
    executable: str | Path | None = None,
) -> tuple[list[str], str]:
    """The check-html command: every page checked and the screenshots taken; the problems,
    one line each, and a summary line."""
    html = Path(html)
    if not (html / "index.html").is_file():
        raise UsageError(f"no built book at {html} (no index.html); run 'make book' first")
    if source is None:
        staged = html.parent / "src"
        source = staged if (staged / "_toc.yml").is_file() else Path(".")
    shots = Path(shots) if shots else html.parent / "screenshots"
    problems = check_html(html, Path(source), executable=executable)
    saved, more = screenshots(html, shots, Book.from_sources(Path(source)), executable=executable)
    problems += more
    book = Book.from_sources(Path(source))
    readings, _ = prose_check(html, [book.root, *book.chapters])
    summary = (
        "How the prose reads (publish.prose: sentences, words, mean words a sentence, share "
        f"over {prose.LONG} words, numbers and parentheses a sentence):\n"
        + prose.table(readings)
        + "\n"
        f"{len(pages(html))} pages checked in Chromium: {len(problems)} problems; "
        f"screenshots in {shots}: {', '.join(p.name for p in saved)}"
    )
    return problems, summary
