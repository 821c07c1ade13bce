"""The book printed to one PDF: a page per chapter start, the headline numbers in it."""

import re
from html.parser import HTMLParser

import pytest

from jacbench.cli import main
from jacbench.publish import browser, pdf


@pytest.fixture(scope="module")
def printed(built):
    out, _ = built
    path = pdf.make_pdf(out)
    return out, path, pdf.page_texts(path)


def _words(text: str) -> str:
    return " ".join(text.split())


class _Headline(HTMLParser):
    """The body cells of a page's first table and the page's glued values."""

    def __init__(self):
        super().__init__()
        self.cells, self.pasted = [], []
        self._tables = 0
        self._into = None
        self._buf = []

    def handle_starttag(self, tag, attrs):
        classes = dict(attrs).get("class") or ""
        if tag == "table":
            self._tables += 1
        elif tag == "td" and self._tables == 1:
            self._into, self._buf = self.cells, []
        elif tag == "span" and "pasted-text" in classes.split():
            self._into, self._buf = self.pasted, []

    def handle_endtag(self, tag):
        if self._into is not None and tag in ("td", "span"):
            if tag == "td" or self._into is self.pasted:
                self._into.append(_words("".join(self._buf)))
                self._into = None

    def handle_data(self, data):
        if self._into is not None:
            self._buf.append(data)


def test_the_pdf_is_printed_with_every_page(printed):
    out, path, pages = printed
    assert path == out / "pdf" / "jacbench.pdf"
    assert path.read_bytes()[:5] == b"%PDF-"
    assert pdf.page_count(path) == len(pages)


def test_every_chapter_starts_a_page(printed):
    out, _, pages = printed
    chapters = browser.Book.from_sources(out / "src")
    starts = [_words(p) for p in pages]
    assert starts[0].startswith(chapters.title)
    for docname in chapters.chapters:
        heading = browser.parse_page(out / "html" / f"{docname}.html").h1
        assert heading, docname
        assert any(s.startswith(heading) for s in starts), f"no page starts with {heading!r}"
    assert len(pages) > len(chapters.chapters)


# A table row's cells printed side by side, wrapped over lines: the PDF's text runs line by line
# across the row, so a cell's words come in order with other cells' words between them, all
# within the row's text.
ROW_SPAN = 2000


def printed_in(value: str, text: str, span: int = ROW_SPAN) -> bool:
    """Whether a non-empty value is in the text: whole, or its words in their order, the last
    within span characters of the first (a word broken at its hyphen, 'per-' and 'row', may
    have another column's text between its parts, and a hyphen at a line's end may be lost:
    poppler prints 'forward-accumulator-xla' broken there as 'forwardaccumulator-xla')."""
    words = [part for word in value.split() for part in re.split(r"(?<=-)(?=.)", word)]
    if not words:
        return False
    if value in text:
        return True
    parts = [re.compile(re.escape(w[:-1]) + "-?" if w.endswith("-") else re.escape(w))
             for w in words]  # fmt: skip
    for first in parts[0].finditer(text):
        at, end = first.end(), first.start() + span
        for part in parts[1:]:
            found = part.search(text, at, end)
            if found is None:
                break
            at = found.end()
        else:
            return True
    return False


def test_a_value_is_printed_whole_or_its_words_in_order_close_together():
    assert printed_in("1.2 ms", "the time 1.2 ms here")
    wrapped = "PyTorch 520.6 reproduced: both within ms, TensorFlow 2.14 s"
    assert printed_in("520.6 ms, TensorFlow 2.14 s", wrapped)
    assert not printed_in("1.2 ms", "1.2 s and then " + "x" * ROW_SPAN + " 3 ms")
    assert not printed_in("1.2 ms", "3 ms, then 1.2 s")  # words out of order
    assert printed_in(
        "reuses the freed per-row buffers", "reuses the freed per- MB 265.3 row buffers"
    )
    assert printed_in("4.3 ms (forward-accumulator-xla)", "4.3 ms (forwardaccumulator-xla)")
    assert not printed_in("", "anything") and not printed_in("  ", "anything")


def test_the_headline_table_and_its_glued_numbers_are_in_the_pdf(printed):
    out, _, pages = printed
    parser = _Headline()
    parser.feed((out / "html" / "notebooks" / "01-question.html").read_text())
    assert len(parser.cells) >= 12 and len(parser.pasted) >= 5
    text = _words(" ".join(pages))
    for value in parser.cells + parser.pasted:
        assert printed_in(value, text), value
    assert re.search(r"\d", " ".join(parser.cells))  # numbers, not only names


def test_math_is_typeset_not_left_as_tex(printed):
    _, _, pages = printed
    text = " ".join(pages)
    assert "\\(" not in text and "\\partial" not in text and "$N$" not in text


def test_pdf_without_a_book_exits_2(tmp_path, capsys):
    assert main(["pdf", "--build", str(tmp_path)]) == 2
    assert "no staged book" in capsys.readouterr().err


def test_every_framework_tab_of_the_answer_code_is_printed(printed):
    """On screen a tab set shows one framework at a time; on paper all of them print."""
    from test_answer_code import TabSets

    out, _, pages = printed
    parser = TabSets()
    parser.feed((out / "html" / "notebooks" / "07-recommend.html").read_text())
    assert parser.sets, "no tab set on the What to use page"
    text = _words(" ".join(pages))
    tabs = parser.sets[0]
    lines = [{_words(x) for x in t["text"].splitlines() if len(x.strip()) > 30} for t in tabs]
    for i, tab in enumerate(tabs):
        # The lines of code only this framework's tab has (the simulation is alike in all).
        own = lines[i].difference(*(lines[:i] + lines[i + 1 :]))
        assert own, f"nothing distinguishes the {tab['label']} tab"
        assert any(line in text for line in own), f"the {tab['label']} tab is not in the PDF"


def test_what_the_screen_folds_prints_open(printed):
    """A folded table (the GBM chapter's costs relative to each strategy's simulation) and a
    dropdown of prose are on paper; folded code is not."""
    out, _, pages = printed
    text = _words(" ".join(pages))
    html = (out / "html" / "notebooks" / "04-gbm.html").read_text()
    # The first folded output whose table holds ratios with their spread: the costs table.
    folds = html.split('<details class="admonition hide below-input">')[1:]
    tables = [re.search(r"<table.*?</table>", f, flags=re.S) for f in folds]
    cells = [re.findall(r"<td[^>]*>([^<]*)</td>", t.group(0)) for t in tables if t]
    ratios = next(([c for c in row if "× [" in c] for row in cells
                   if any("× [" in c for c in row)), [])  # fmt: skip
    assert len(ratios) > 10 and all(_words(r) in text for r in ratios)
    assert "The simulation is the same program without derivatives" in text
    assert "costs = chapter.costs(df)" not in text
