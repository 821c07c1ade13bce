"""The answer in code: the "What to use" chapter shows, in tab sets synced by framework, the
very builders the harness timed, each with what it cost in this run."""

import ast
import re
from html.parser import HTMLParser
from pathlib import Path

from jacbench.constants import AD_FRAMEWORKS, FRAMEWORK_NAMES

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "jacbench"


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


def source(module: str, name: str) -> str:
    """The source of a module-level function, decorators included, as literalinclude shows it."""
    path = SRC / f"{module}.py"
    text = path.read_text()
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            return "\n".join(text.splitlines()[start - 1 : node.end_lineno])
    raise AssertionError(f"{module}.{name} is gone")


def squeeze(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


# What each tab of a tab set must show: the module its functions come from, the functions
# included whole, and the differentiation calls a reader looks for in them.
TALL = {
    "torch": (
        "strategies/torch_gbm",
        ["_pathwise", "build_pathwise", "_two_jvps", "build_jvp"],
        ["torch.autograd.grad(", "torch.func.jvp("],
    ),
    "tensorflow": (
        "strategies/tensorflow_gbm",
        ["_pathwise", "build_pathwise", "_forward", "build_forward_accumulator"],
        ["tape.gradient(", "tf.autodiff.ForwardAccumulator("],
    ),
    "jax": (
        "strategies/jax_gbm",
        ["_pathwise", "build_pathwise", "_jvp", "build_jvp", "_runner"],
        ["jax.grad(", "jax.jvp(", "jax.jit("],
    ),
}
WIDE = {
    "torch": ("strategies/torch_moments", ["_grad_loop"], ["torch.autograd.grad("]),
    "tensorflow": (
        "strategies/tensorflow_moments",
        ["build_tape_jacobian_function"],
        ["tape.jacobian(", "@tf.function"],
    ),
    "jax": ("strategies/jax_moments", ["_runner", "build_jacrev"], ["jax.jacrev"]),
}
HVP = {
    "torch": ("second/torch_second", ["_hvp", "build_hvp"], ["torch.func.jvp("]),
    "tensorflow": ("second/tensorflow_second", ["build_hvp"], ["ForwardAccumulator("]),
    "jax": ("second/jax_second", ["_hvp", "build_hvp"], ["jax.jvp("]),
}


def framework_sets(built) -> list[list[dict]]:
    out, _ = built
    page = out / "html" / "notebooks" / "06-recommend.html"
    return [s for s in tab_sets(page) if s and all(t["group"] == "framework" for t in s)]


def the_set_showing(sets: list[list[dict]], wanted: dict) -> list[dict]:
    """The tab set whose tabs show the wanted builders (AssertionError if none)."""
    for tabs in sets:
        by_id = {t["id"]: t for t in tabs}
        if set(by_id) == set(wanted) and all(
            squeeze(source(wanted[fw][0], wanted[fw][1][0])) in squeeze(by_id[fw]["text"])
            for fw in wanted
        ):
            return tabs
    raise AssertionError("no tab set synced by framework shows these builders")


def check(tabs: list[dict], wanted: dict) -> None:
    assert [t["id"] for t in tabs] == list(AD_FRAMEWORKS)
    assert [t["label"].strip() for t in tabs] == [FRAMEWORK_NAMES[fw] for fw in AD_FRAMEWORKS]
    for tab in tabs:
        module, functions, calls = wanted[tab["id"]]
        shown = squeeze(tab["text"])
        for name in functions:
            # The whole function as it stands in the module the harness imports.
            assert squeeze(source(module, name)) in shown, (tab["id"], name)
        for call in calls:
            assert call in tab["text"], (tab["id"], call)
        assert tab["pasted"], f"{tab['id']}: no glued cost"
        assert all(p.strip() for p in tab["pasted"]), (tab["id"], tab["pasted"])


def test_tall_answer_shows_the_timed_pathwise_and_forward_builders(built):
    sets = framework_sets(built)
    tabs = the_set_showing(sets, TALL)
    check(tabs, TALL)
    text = {t["id"]: t["text"] for t in tabs}
    assert "def build_pathwise" in text["torch"] and "def build_jvp" in text["torch"]
    assert "def build_forward_accumulator" in text["tensorflow"]
    assert "def build_pathwise" in text["jax"] and "def build_jvp" in text["jax"]
    # The quick profile runs every strategy shown, so each cost is a time, not a gap.
    for tab in tabs:
        assert all(" a call at N = " in p for p in tab["pasted"]), tab["pasted"]


def test_wide_and_hessian_answers_show_the_timed_builders(built):
    sets = framework_sets(built)
    for wanted in (WIDE, HVP):
        check(the_set_showing(sets, wanted), wanted)


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
    assert seen >= 9  # three tab sets of three frameworks in the chapter "What to use"


def test_the_question_points_to_the_answer_in_code(built):
    out, _ = built
    html = (out / "html" / "notebooks" / "01-question.html").read_text()
    assert 'href="06-recommend.html#answer-code"' in html
    target = (out / "html" / "notebooks" / "06-recommend.html").read_text()
    assert 'id="answer-code"' in target
