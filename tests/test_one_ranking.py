"""One ranking rule: every comparison of two times in advise and the chapters goes through
report.margins (ranks, tied, compare, group), with what differs (margin, floor, spreads) as its
arguments. The test reads the source of report/ and advise/ (margins.py aside) for five signs of
a rule of its own:

- two times compared: an ordering comparison (<, <=, >, >=) two of whose sides read a time (a
  name, attribute or string key ending in "_s"), neither reading a limit (a floor, a timeout, a
  budget, the overhead);
- a quotient of two times compared with anything;
- a margin compared: a side reading a name with "margin" or "UNMEASURED" in it, or margins.apart;
- a literal margin: the book's default margin (margins.UNMEASURED) written as a number, or a
  number between 1 and 2 multiplying or dividing a time;
- a ranker of its own: a function named as one that ranks (ahead, apart, beats, faster, slower,
  same, more, tied, ranks) that orders two things and neither calls the rule nor reads a
  Comparison's verdict (.ranked, .tied, .winner(), .a_faster) or another ranker's.

What compares times without ranking them is named in NOT_RANKINGS, with why.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from jacbench.report import margins

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "jacbench"
RULE = PACKAGE / "report" / "margins.py"
TIME = re.compile(r"_s$")
LIMIT = re.compile(r"floor|timeout|budget|overhead|long_call", re.I)
MARGIN = re.compile(r"margin|unmeasured", re.I)
RANKER = re.compile(r"^_?(ahead|apart|ranks|tied|same|more)$|beats|faster|slower")
# Calls of the rule, and what reads its verdict.
RULE_CALLS = {"ranks", "tied", "compare", "group", "apart", "ahead", "_faster", "_compare"}
VERDICTS = {"ranked", "tied", "winner", "a_faster", "faster"}
ORDER = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
# (module under src/jacbench, function): why it compares times without ranking them.
NOT_RANKINGS = {
    ("report/picks.py", "overtakes"): "the break-even call: arithmetic on two strategies' "
    "first and warm calls, whose ranking picks made by the rule",
    ("report/chapters/question/facts.py", "about_a_minute"): "a measured time against the "
    "question's reported 'about a minute', not against another measurement",
}


def _reads(node: ast.AST) -> list[str]:
    found = []
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            found.append(n.id)
        elif isinstance(n, ast.Attribute):
            found.append(n.attr)
        elif isinstance(n, ast.Constant) and isinstance(n.value, str):
            found.append(n.value)
    return found


def _time(node: ast.AST) -> bool:
    reads = _reads(node)
    return any(TIME.search(r) for r in reads) and not any(LIMIT.search(r) for r in reads)


def _quotient_of_times(node: ast.AST) -> bool:
    return any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div) and _time(n.left)
               and _time(n.right) for n in ast.walk(node))  # fmt: skip


def _margin(node: ast.AST) -> bool:
    return any(MARGIN.search(r) or r == "apart" for r in _reads(node))


def _called(node: ast.AST) -> set[str]:
    calls = (n.func for n in ast.walk(node) if isinstance(n, ast.Call))
    return {f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "") for f in calls}


def _literal_margin(node: ast.AST) -> bool:
    """The default margin as a number, or a number in (1, 2) scaling a time."""
    if isinstance(node, ast.Constant) and node.value == margins.UNMEASURED:
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult | ast.Div):
        for number, other in ((node.left, node.right), (node.right, node.left)):
            value = getattr(number, "value", None)
            if isinstance(value, float) and 1 < value < 2 and _time(other):
                return True
    return False


def findings(source: str, module: str = "<snippet>") -> list[str]:
    """Each sign of a ranking rule of its own in source, as 'module:line function: what'."""
    tree = ast.parse(source)
    found = []

    def visit(node: ast.AST, function: str) -> None:
        if isinstance(node, ast.FunctionDef):
            function = node.name
            compares = any(isinstance(n, ast.Compare) and all(isinstance(o, ORDER) for o in n.ops)
                           for n in ast.walk(node))  # fmt: skip
            reads = set(_reads(node)) - {node.name}
            reads_verdict = bool(VERDICTS & reads) or any(RANKER.search(r) for r in reads)
            if RANKER.search(node.name) and compares:
                if not (_called(node) & RULE_CALLS or reads_verdict):
                    found.append(f"{module}:{node.lineno} {function}: a ranker of its own")
        if (module, function) not in NOT_RANKINGS:
            where = f"{module}:{getattr(node, 'lineno', 0)} {function}"
            if isinstance(node, ast.Compare) and all(isinstance(o, ORDER) for o in node.ops):
                sides = [node.left, *node.comparators]
                if sum(_time(s) for s in sides) >= 2:
                    found.append(f"{where}: two times compared")
                if any(_quotient_of_times(s) for s in sides):
                    found.append(f"{where}: a quotient of two times compared")
                if any(_margin(s) for s in sides):
                    found.append(f"{where}: a margin compared")
            if _literal_margin(node):
                found.append(f"{where}: a literal margin")
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(tree, "<module>")
    return found


def test_the_finder_sees_each_sign():
    assert findings("ok = a.warm_s < b.warm_s") == ["<snippet>:1 <module>: two times compared"]
    assert findings("ok = r['warm_median_s'] / s['warm_median_s'] > 1.2") == [
        "<snippet>:1 <module>: a quotient of two times compared"
    ]
    assert findings("ok = k > m.margins.of('ratio', fw)") == [
        "<snippet>:1 <module>: a margin compared"
    ]
    assert findings("ok = margins.apart(x, y) <= m") == ["<snippet>:1 <module>: a margin compared"]
    assert findings("NEAR = 1.15") == ["<snippet>:1 <module>: a literal margin"]
    assert findings("t = 1.2 * a.cold_s") == ["<snippet>:1 <module>: a literal margin"]
    assert findings("def ahead(self):\n    return self.k > 2") == [
        "<snippet>:1 ahead: a ranker of its own"
    ]


def test_the_finder_passes_what_is_not_a_ranking():
    assert findings("ok = a.warm_s < FLOOR_S") == []  # a time against the floor
    assert findings("ok = a.warm_s < self.timeout") == []
    assert findings("def ahead(a, b):\n    return margins.ranks(a, b, 1.0)") == []
    assert findings("def slower(self):\n    return self.c.ranked and self.x > 0") == []
    assert findings("n = 1.5 * size") == []  # a number scaling a size, not a time


def test_no_ranking_of_two_times_outside_the_rule():
    modules = [*(PACKAGE / "report").rglob("*.py"), *(PACKAGE / "advise").rglob("*.py")]
    found = [
        f
        for path in sorted(modules)
        if path != RULE
        for f in findings(path.read_text(), path.relative_to(PACKAGE).as_posix())
    ]
    assert found == []


def test_what_is_not_a_ranking_is_still_there():
    """An entry of NOT_RANKINGS whose function was renamed or removed would excuse nothing."""
    for module, function in NOT_RANKINGS:
        tree = ast.parse((PACKAGE / module).read_text())
        names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        assert function in names, (module, function)
