"""The answer in code: the front page opens with each snippet's call in tab sets synced by
framework, with what it cost; "What to use" shows each snippet whole."""

import re
from html.parser import HTMLParser
from pathlib import Path

from jacbench.constants import AD_FRAMEWORKS, FRAMEWORK_NAMES
from jacbench.report.chapters import front

ROOT = Path(__file__).resolve().parents[1]


class TabSets(HTMLParser):
    """The sphinx-design tab sets of a page, each a list of tabs: dicts with the label's sync
    group, sync id and text, the content's text and the glued values pasted in it."""

    def __init__(self):
        super().__init__()
        self.sets: list[list[dict]] = []
        self.divs: list[str | None] = []  # what each open div is: "set", "content" or None
        self.tab: dict | None = None  # the tab whose label or content is being read
        self.in_label = self.in_pasted = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if tag == "div":
            role = None
            if "sd-tab-set" in classes:
                role = "set"
                self.sets.append([])
            elif "sd-tab-content" in classes and self.tab is not None:
                role = "content"
            self.divs.append(role)
        elif tag == "label" and "sd-tab-label" in classes and self.sets:
            self.tab = {
                "group": a.get("data-sync-group"),
                "id": a.get("data-sync-id"),
                "label": "",
                "text": "",
                "pasted": [],
            }
            self.sets[-1].append(self.tab)
            self.in_label = True
        elif tag == "span" and "pasted-text" in classes and "content" in self.divs:
            self.in_pasted = True
            self.tab["pasted"].append("")

    def handle_endtag(self, tag):
        if tag == "div" and self.divs:
            if self.divs.pop() == "content":
                self.tab = None
        elif tag == "label":
            self.in_label = False
        elif tag == "span":
            self.in_pasted = False

    def handle_data(self, data):
        if self.tab is None:
            return
        if self.in_label:
            self.tab["label"] += data
        elif "content" in self.divs:
            self.tab["text"] += data
            if self.in_pasted:
                self.tab["pasted"][-1] += data


def tab_sets(path: Path) -> list[list[dict]]:
    parser = TabSets()
    parser.feed(path.read_text())
    return parser.sets


def squeeze(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def answer(snippet: front.Snippet) -> str:
    """The part of a snippet the front page shows: between its answer markers."""
    text = (ROOT / snippet.path).read_text()
    return text.split("# [answer]\n", 1)[1].split("# [/answer]", 1)[0]


def framework_sets(page: Path) -> list[list[dict]]:
    return [s for s in tab_sets(page) if s and all(t["group"] == "framework" for t in s)]


def _by_shape(sets: list[list[dict]], shown) -> dict[str, list[dict]]:
    """The tab set of each shape: the one whose tabs show that shape's snippets (by shown)."""
    found = {}
    for shape in ("tall", front.ONCE, "wide"):
        snippets = {s.framework: s for s in front.SNIPPETS if s.key == shape}
        for tabs in sets:
            text = {t["id"]: squeeze(t["text"]) for t in tabs}
            if all(squeeze(shown(s)) in text.get(fw, "") for fw, s in snippets.items()):
                found[shape] = tabs
    return found


def test_the_front_page_opens_with_each_snippets_answer_and_its_price(built):
    out, _ = built
    sets = framework_sets(out / "html" / "book" / "index.html")
    found = _by_shape(sets, answer)
    assert set(found) == {"tall", front.ONCE, "wide"}
    assert found["tall"] is found[front.ONCE]  # the one-call winner in the tall snippet's tab
    for tabs in found.values():
        assert [t["id"] for t in tabs] == list(AD_FRAMEWORKS)
        assert [t["label"].strip() for t in tabs] == [FRAMEWORK_NAMES[f] for f in AD_FRAMEWORKS]
        for tab in tabs:  # the measured price below the code, as a table
            assert "first call" in tab["text"] and "later calls" in tab["text"], tab["id"]


def test_what_to_use_shows_each_snippet_whole(built):
    out, _ = built
    sets = framework_sets(out / "html" / "notebooks" / "07-recommend.html")
    found = _by_shape(sets, lambda s: (ROOT / s.path).read_text())
    assert set(found) == {"tall", front.ONCE, "wide"}
    assert found["tall"] is found[front.ONCE]


def test_every_framework_tab_in_the_book_is_synced(built):
    """Choosing a framework once shows it everywhere: every tab labelled with a framework's
    name is in the one sync group, keyed by the framework."""
    out, _ = built
    names = {name: fw for fw, name in FRAMEWORK_NAMES.items() if fw in AD_FRAMEWORKS}
    seen = 0
    for page in sorted((out / "html").rglob("*.html")):
        for tabs in tab_sets(page):
            for tab in tabs:
                if tab["label"].strip() in names:
                    seen += 1
                    assert tab["group"] == "framework", (page.name, tab["label"])
                    assert tab["id"] == names[tab["label"].strip()], (page.name, tab["label"])
    assert seen >= 12  # two tab sets of three frameworks on the front page and in "What to use"


def test_the_front_page_points_to_the_answer_in_code(built):
    out, _ = built
    html = (out / "html" / "book" / "index.html").read_text()
    assert 'href="../notebooks/07-recommend.html#answer-code"' in html
    target = (out / "html" / "notebooks" / "07-recommend.html").read_text()
    assert 'id="answer-code"' in target
