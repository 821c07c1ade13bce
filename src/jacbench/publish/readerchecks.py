"""The checks of a page as a reader meets it: each chapter opens with its answer, a chapter page
is short enough to finish, and a figure fits a laptop's screen.

``summary_problems`` reads a built page's HTML: a chapter that must open with an "In short" box
has one before its first section. ``height_problems`` judges what Chromium measured at the
laptop's width (``measure_heights``): the page's height with its folded sections folded, and
each figure's height with them open (a figure a reader unfolds must fit the screen too).
"""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

from jacbench.publish import prose
from jacbench.publish.chromium import VIEWPORTS
from jacbench.publish.parameters import chapters

# The chapters that open with their answer, and the title of the box that gives it: every
# chapter up to "Your function" (the method, the results and the glossary are for looking up).
LAST_SUMMARIZED = "08-your-function"
SUMMARIZED = tuple(
    f"notebooks/{name}" for name in chapters()[: chapters().index(LAST_SUMMARIZED) + 1]
)
SUMMARY_TITLE = "In short"
# Pages whose text is not prose to read: the bibliography.
PROSE_LEFT_OUT = ("book/references",)
# At the laptop's width, in CSS pixels: a page a reader can finish (about 15 screens) and a
# figure that fits a screen.
MAX_PAGE_HEIGHT = 12_000
MAX_FIGURE_HEIGHT = 900


class _Opening(HTMLParser):
    """Where the article's first section heading (h2) and its first "In short" box come, in
    order (the theme's headings around the article, "Contents" in the sidebar, left out)."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[str] = []
        self._article = False
        self._title = 0  # depth inside an admonition's title paragraph
        self._text: list[str] = []

    def handle_starttag(self, tag, attrs):
        classes = (dict(attrs).get("class") or "").split()
        if tag == "article":
            self._article = True
        if not self._article:
            return
        if tag == "h2":
            self.events.append("section")
        elif tag == "p" and "admonition-title" in classes:
            self._title, self._text = 1, []
        elif self._title:
            self._title += 1

    def handle_endtag(self, tag):
        if tag == "article":
            self._article = False
        if not self._title:
            return
        self._title -= 1
        if self._title == 0:
            text = " ".join("".join(self._text).split())
            self.events.append("summary" if text == SUMMARY_TITLE else "box")

    def handle_data(self, data):
        if self._title:
            self._text.append(data)


def summary_problem(page: str, html_text: str) -> str | None:
    """The problem of a page that must open with an "In short" box, or None: it has none, or
    its box comes after the first section's heading."""
    parser = _Opening()
    parser.feed(html_text)
    events = parser.events
    if "summary" not in events:
        return f"{page}: no {SUMMARY_TITLE!r} box"
    if "section" in events and events.index("section") < events.index("summary"):
        return f"{page}: its {SUMMARY_TITLE!r} box comes after its first section"
    return None


def summary_problems(html: Path, summarized=SUMMARIZED) -> list[str]:
    """Every chapter that must open with its answer, read from the built HTML."""
    problems = []
    for docname in summarized:
        file = html / f"{docname}.html"
        if not file.is_file():
            problems.append(f"{docname}.html: missing (it must open with an {SUMMARY_TITLE!r} box)")
            continue
        problem = summary_problem(f"{docname}.html", file.read_text(errors="replace"))
        if problem:
            problems.append(problem)
    return problems


# Runs in an open page: its height as it opens (folded sections folded), then, with every
# folded section open, each image's height in the article, named by the nearest id around it.
_HEIGHTS = r"""
async () => {
  const frame = () => new Promise(r => requestAnimationFrame(() => r()));
  await frame();
  const page = document.documentElement.scrollHeight;
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  await frame();
  const article = document.querySelector('article.bd-article')
    || document.querySelector('article') || document.body;
  const figures = [...article.querySelectorAll('img')].map(img => {
    const r = img.getBoundingClientRect();
    const named = img.closest('figure[id], [id]');
    return {name: named ? named.id : img.getAttribute('src'), height: r.height};
  });
  return {viewport: document.documentElement.clientWidth, page, figures};
}
"""


def measure_heights(tab, viewport: tuple[int, int] = VIEWPORTS["laptop"]) -> dict:
    """An open page's height and its figures' heights at a viewport size (the page is resized);
    measured before anything unfolds its folded sections."""
    tab.set_viewport_size({"width": viewport[0], "height": viewport[1]})
    return tab.evaluate(_HEIGHTS)


def height_problems(
    page: str,
    seen: dict,
    max_page: float = MAX_PAGE_HEIGHT,
    max_figure: float = MAX_FIGURE_HEIGHT,
    chapter: bool = True,
) -> list[str]:
    """A chapter page taller than max_page, and any figure taller than max_figure, in what
    ``measure_heights`` saw (only figures for a page that is not a chapter)."""
    where = f"{page} at {seen['viewport']} px"
    problems = []
    if chapter and seen["page"] > max_page + 0.5:
        problems.append(f"{where}: the page is {seen['page']:,.0f} px tall (at most {max_page:,})")
    for f in seen["figures"]:
        if f["height"] > max_figure + 0.5:
            tall = f"{f['height']:,.0f} px tall (at most {max_figure:,})"
            problems.append(f"{where}: figure {f['name']} is {tall}")
    return problems


def prose_check(html: Path, pages: list[str]) -> tuple[list[prose.Reading], list[str]]:
    """How the front page and every chapter (docnames) read (publish.prose), against the targets:
    the chapters that open with their answer are the main ones, held to a length too."""
    pages = [p for p in pages if p not in PROSE_LEFT_OUT]
    return prose.check(html, pages, main=set(SUMMARIZED))
