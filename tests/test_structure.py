"""The package's shape: no import cycle, no module over 400 lines, one parser of target names."""

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "jacbench"


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imports(path: Path, name: str, modules: dict[str, Path]) -> set[str]:
    """Every jacbench module this one imports, at module level or inside a function."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in modules else base)
    return {m for m in found if m in modules and m != name}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(path, name, modules) for name, path in modules.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle_in_the_package():
    graph = _graph()
    assert "jacbench.measure.targets" in graph["jacbench.measure.case"]  # the graph is real
    assert _cycle(graph) is None


def test_the_memory_model_is_a_leaf():
    assert _graph()["jacbench.strategies.memory_model"] == set()


def test_no_module_is_over_400_lines():
    long = {n: len(p.read_text().splitlines()) for n, p in _modules().items()}
    assert {n: k for n, k in long.items() if k > 400} == {}


# A target's kind written as the prefix of its name: only measure/targets.py reads or writes it.
PREFIX = re.compile(r"""["'](second|simulation|limit|callable|crossover):""")


def test_only_the_target_parser_knows_the_prefixes():
    offenders = [
        f"{path.relative_to(SRC)}:{i}"
        for path in PACKAGE.rglob("*.py")
        if path.name != "targets.py"
        for i, line in enumerate(path.read_text().splitlines(), 1)
        if PREFIX.search(line) or '.startswith("second' in line
    ]
    assert offenders == []


# The rooms, each using only those before it: cli -> publish -> advise -> report -> measure ->
# second -> strategies -> problems, on a floor of facts every room may use.
ROOMS = ["jacbench", "constants", "errors", "units", "problems", "teaching", "strategies", "second",
         "measure", "report", "advise", "publish", "cli", "__main__"]  # fmt: skip
FLOOR = {"jacbench", "constants", "errors", "units"}


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _upward(graph: dict[str, set[str]]) -> list[str]:
    rank = {room: i for i, room in enumerate(ROOMS)}
    return sorted(
        f"{a} -> {b}"
        for a, targets in graph.items()
        for b in targets
        if _room(b) not in FLOOR and rank[_room(b)] > rank[_room(a)]
    )


def test_dependencies_point_one_way():
    graph = _graph()
    assert {_room(m) for m in graph} <= set(ROOMS)
    assert _upward(graph) == []
    # The check sees an import against the grain.
    assert _upward({"jacbench.report.data": {"jacbench.publish.book"}}) == [
        "jacbench.report.data -> jacbench.publish.book"
    ]


# What only the build and its checks use: a notebook imports jacbench.report, which never
# drives a browser, a kernel or jupyter-book.
BUILD_ONLY = ("playwright", "papermill", "nbclient", "jupyter_book", "jupytext", "jacbench.publish")


def _external_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return found


def test_the_report_room_drives_no_browser_kernel_or_book_build():
    report = [p for n, p in _modules().items() if n.startswith("jacbench.report")]
    used = {n: sorted(m for m in _external_imports(p) if m.startswith(BUILD_ONLY))
            for n, p in _modules().items() if p in report}  # fmt: skip
    assert {n: m for n, m in used.items() if m} == {}
    # The build does use them, so the check looks where they are.
    publish = set().union(*(_external_imports(p) for n, p in _modules().items()
                            if n.startswith("jacbench.publish")))  # fmt: skip
    assert {"papermill", "jupytext"} <= {m.split(".")[0] for m in publish}


NOTEBOOKS = SRC.parent / "notebooks"
CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```$", re.S | re.M)


def _code_lines(cell: str) -> int:
    """The lines of a cell's code, without its options (":tags:" or a "---" block)."""
    lines = cell.splitlines()
    if lines and lines[0] == "---":
        lines = lines[lines.index("---", 1) + 1 :]
    return len([ln for ln in lines if not ln.startswith(":tags:")])


def test_no_notebook_code_cell_is_over_25_lines():
    """A cell lays out one table, figure or glued value; what computes lives in a chapter module."""
    long = {
        f"{path.name} cell {i}": n
        for path in sorted(NOTEBOOKS.glob("*.md"))
        for i, cell in enumerate(CELL.findall(path.read_text()), 1)
        if (n := _code_lines(cell)) > 25
    }
    assert long == {}
    assert _code_lines("---\ntags: [x]\n---\n" + "a\n" * 26) == 26  # options are not code


# The chapters' code computes facts, not sentences: few functions there return a string (a
# formatted cell, a name, a short phrase), and report/ keeps its layout to ruff.
REPORT = PACKAGE / "report"
MOST_STRING_FUNCTIONS = 25
MOST_FMT_SKIPS = 19


def _returns_str(node: ast.FunctionDef) -> bool:
    """A function annotated '-> str' or whose return statements hand back string literals,
    f-strings or joins."""
    if isinstance(node.returns, ast.Name) and node.returns.id == "str":
        return True
    if isinstance(node.returns, ast.Constant) and node.returns.value == "str":
        return True
    returned = [n.value for n in ast.walk(node) if isinstance(n, ast.Return) and n.value]
    textual = (ast.JoinedStr, ast.Constant)
    return bool(returned) and all(
        (isinstance(v, textual) and not isinstance(getattr(v, "value", ""), int | float | None))
        or (isinstance(v, ast.Call) and getattr(v.func, "attr", "") == "join")
        for v in returned
    )


def test_the_chapters_return_facts_not_sentences():
    found = [
        f"{path.relative_to(SRC)}:{node.name}"
        for path in (REPORT / "chapters").rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef) and _returns_str(node)
    ]
    assert len(found) <= MOST_STRING_FUNCTIONS, found


def test_report_leaves_its_layout_to_ruff():
    skips = [
        f"{path.relative_to(SRC)}:{i}"
        for path in REPORT.rglob("*.py")
        for i, line in enumerate(path.read_text().splitlines(), 1)
        if "# fmt: skip" in line
    ]
    assert len(skips) <= MOST_FMT_SKIPS, skips
