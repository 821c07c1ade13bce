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
PREFIX = re.compile(r"""["'](second|simulation|callable|crossover):""")


def test_only_the_target_parser_knows_the_prefixes():
    offenders = [
        f"{path.relative_to(SRC)}:{i}"
        for path in PACKAGE.rglob("*.py")
        if path.name != "targets.py"
        for i, line in enumerate(path.read_text().splitlines(), 1)
        if PREFIX.search(line) or '.startswith("second' in line
    ]
    assert offenders == []
