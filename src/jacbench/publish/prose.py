"""The reader's check: how the prose of each built page reads, measured, against targets.

The prose a reader sees is the text of the article's paragraphs and list items (``p``, ``li``):
code blocks, tables, figure captions, box titles, citations and what code cells print are left
out; inline code and inline math count as one word each, and their insides as nothing. A sentence
ends at '.', '!' or '?' followed by a space and a capital, or where its paragraph ends. A number
is a word that starts with a digit ("10,000", "1.3×", "2"); "float32" is a name.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

# What a page's prose must meet: a mean sentence, the share of long ones, numbers and
# parentheses a sentence, how often one sentence shape (its numbers masked) may recur in the
# book, and a main chapter's length in words.
MEAN_WORDS = 18.0
LONG = 40
SHARE_LONG = 0.03
NUMBERS = 0.7
PARENTHESES = 0.3
SHAPE_REPEATS = 3  # a shape seen this many times or more fails
SHAPE_MIN_WORDS = 5  # shorter sentences ("See the table.") may recur
MAX_WORDS = 2_500
# Elements whose text is not prose; inline elements that stand for one word.
SKIPPED = {"pre", "table", "figcaption", "script", "style", "button", "label", "dt"}
SKIPPED_CLASSES = {"admonition-title", "cell_output", "bibtex-citation", "headerlink",
                   "sd-tab-label", "toctree-wrapper", "caption", "run-parameters"}  # fmt: skip
TOKEN = {"code": "CODE", "math": "MATH"}
SENTENCE_END = re.compile(r"(?<=[.!?])[\"”’)\]]?\s+(?=[\"“(]?[A-Z])")
NUMBER = re.compile(r"^[(\[\"“$−+-]*\d")


class _Prose(HTMLParser):
    """The article's paragraphs and list items as plain text blocks (see the module)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[str] = []
        self._article = 0
        self._stack: list[tuple[str, bool, str | None]] = []  # tag, skipped, token
        self._buffers: list[list[str]] = []

    def _skipped(self) -> bool:
        return any(skip for _, skip, _ in self._stack)

    def _in_token(self) -> bool:
        return any(token for _, _, token in self._stack)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = set((attrs.get("class") or "").split())
        if tag == "article":
            self._article += 1
        if not self._article or tag in ("br", "img", "hr", "input", "meta", "link", "wbr"):
            return
        skip = tag in SKIPPED or bool(classes & SKIPPED_CLASSES)
        token = None
        if not self._skipped() and not self._in_token():
            if tag == "code" or "literal" in classes:
                token = TOKEN["code"]
            elif "math" in classes:
                token = TOKEN["math"]
        if token and self._buffers:
            self._buffers[-1].append(f" {token} ")
        if tag in ("p", "li") and not self._skipped():
            self._buffers.append([])
        self._stack.append((tag, skip, token))

    def handle_endtag(self, tag):
        if tag == "article":
            self._article = max(0, self._article - 1)
            return
        while self._stack:
            top, skip, _ = self._stack.pop()
            if top in ("p", "li") and not skip and not self._skipped() and self._buffers:
                text = " ".join("".join(self._buffers.pop()).split())
                if text:
                    self.blocks.append(text)
            if top == tag:
                break

    def handle_data(self, data):
        if self._article and self._buffers and not self._skipped() and not self._in_token():
            self._buffers[-1].append(data)


def blocks(html_text: str) -> list[str]:
    """A page's prose, paragraph by paragraph."""
    parser = _Prose()
    parser.feed(html_text)
    return parser.blocks


def sentences(html_text: str) -> list[str]:
    """A page's prose, sentence by sentence."""
    return [s.strip() for b in blocks(html_text) for s in SENTENCE_END.split(b) if s.strip()]


def words(sentence: str) -> list[str]:
    return [w for w in sentence.split() if re.search(r"\w", w)]


def numbers(sentence: str) -> int:
    return sum(bool(NUMBER.match(w)) for w in words(sentence))


def shape(sentence: str) -> str:
    """A sentence with its numbers masked, as a shape that recurs when a template wrote it."""
    return " ".join("#" if NUMBER.match(w) else w for w in sentence.split())


@dataclass(frozen=True)
class Reading:
    """How one page reads."""

    page: str
    sentences: int
    words: int
    mean_words: float
    share_long: float
    numbers: float
    parentheses: float

    @classmethod
    def of(cls, page: str, said: list[str]) -> Reading:
        n = max(len(said), 1)
        counts = [len(words(s)) for s in said]
        return cls(
            page=page,
            sentences=len(said),
            words=sum(counts),
            mean_words=sum(counts) / n,
            share_long=sum(c > LONG for c in counts) / n,
            numbers=sum(numbers(s) for s in said) / n,
            parentheses=sum(s.count("(") for s in said) / n,
        )

    def problems(self, main: bool) -> list[str]:
        """What misses the targets; a main chapter's length too."""
        checks = (
            (self.mean_words > MEAN_WORDS,
             f"{self.mean_words:.1f} words a sentence (at most {MEAN_WORDS:g})"),
            (self.share_long > SHARE_LONG,
             f"{self.share_long:.1%} of sentences over {LONG} words (at most {SHARE_LONG:.0%})"),
            (self.numbers > NUMBERS,
             f"{self.numbers:.2f} numbers a sentence (at most {NUMBERS:g})"),
            (self.parentheses > PARENTHESES,
             f"{self.parentheses:.2f} parentheses a sentence (at most {PARENTHESES:g})"),
            (main and self.words > MAX_WORDS,
             f"{self.words:,} words (a main chapter has at most {MAX_WORDS:,})"),
        )  # fmt: skip
        return [f"{self.page}: {what}" for bad, what in checks if bad]


def read_book(html: Path, pages: list[str]) -> dict[str, list[str]]:
    """Each page's sentences (pages as docnames, 'notebooks/04-gbm'), those built."""
    found = {}
    for page in pages:
        file = Path(html) / f"{page}.html"
        if file.is_file():
            found[page] = sentences(file.read_text(errors="replace"))
    return found


def repeated_shapes(said: dict[str, list[str]]) -> list[str]:
    """Sentence shapes that recur SHAPE_REPEATS times or more across the pages."""
    seen = Counter(shape(s) for ss in said.values() for s in ss if len(words(s)) >= SHAPE_MIN_WORDS)
    return [f"{n} sentences read {s!r}" for s, n in seen.items() if n >= SHAPE_REPEATS]


def check(html: Path, pages: list[str], main: set[str]) -> tuple[list[Reading], list[str]]:
    """Every page's reading and every problem (one line each)."""
    said = read_book(html, pages)
    readings = [Reading.of(page, ss) for page, ss in said.items()]
    problems = [p for r in readings for p in r.problems(r.page in main)]
    return readings, problems + repeated_shapes(said)


def table(readings: list[Reading]) -> str:
    """The readings as the lines check-html prints."""
    lines = [f"{'page':28s} {'sentences':>9s} {'words':>6s} {'mean':>5s} {'>40':>5s} "
             f"{'num.':>5s} {'par.':>5s}"]  # fmt: skip
    for r in readings:
        lines.append(f"{r.page:28s} {r.sentences:9d} {r.words:6d} {r.mean_words:5.1f} "
                     f"{r.share_long:5.1%} {r.numbers:5.2f} {r.parentheses:5.2f}")  # fmt: skip
    return "\n".join(lines)
