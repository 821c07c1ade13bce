"""The glossary: every registry label beside its call, and every term the book links to."""

import re
from pathlib import Path

from jacbench.constants import FRAMEWORKS
from jacbench.report.chapters import glossary
from jacbench.second import registry as second
from jacbench.strategies import registry

PAGE = Path(__file__).resolve().parents[2] / "notebooks" / "11-glossary.md"
# The terms a chapter may link with {term}`...` (issue 43's list, and the aliases it names).
TERMS = (
    "page fault",
    "arena",
    "jemalloc",
    "glibc malloc",
    "mmap threshold",
    "XLA",
    "YNNPACK",
    "tape",
    "path array",
    "warm call",
    "warm",
    "cold call",
    "cold",
    "pathwise gradient",
    "margin",
    "JVP",
    "VJP",
    "tangent",
    "cotangent",
    "forward mode",
    "reverse mode",
    "pfor",
    "vmap",
    "inductor",
    "torch.compile",
    "tf.function",
    "jit",
    "tall Jacobian",
    "wide Jacobian",
    "Hessian-vector product",
    "blocked strategy",
    "measuring session",
    "session",
    "eager",
    "strategy",
    "case",
    "worker",
    "ratio",
    "pick",
    "profile",
    "harness",
    "memory model",
    "forward over reverse",
)


def test_every_strategy_and_method_is_listed_once_with_its_call():
    listed = []
    for fw in FRAMEWORKS:
        table = glossary.strategies(fw)
        assert list(table["label"]) == [s.name for s in registry.by_framework(fw)]
        assert list(table["call"]) == [s.call for s in registry.by_framework(fw)]
        listed += [(fw, name) for name in table["label"]]
    assert len(listed) == len(registry.STRATEGIES)
    methods = glossary.second_order()
    assert len(methods) == len(second.METHODS)
    assert list(methods["call"]) == [m.call for m in second.METHODS]
    torch = glossary.strategies("torch").set_index("label")
    assert torch.loc["vmap-jacrev", "Jacobian"] == "per sample"
    assert torch.loc["functional-loop", "Jacobian"] == "tall, wide"


def test_the_glossary_defines_each_term_in_one_short_line():
    text = PAGE.read_text()
    block = text[text.index("```{glossary}") : text.rindex("```")]
    lines = block.splitlines()[1:]
    terms = [line for line in lines if line and not line.startswith((" ", ":"))]
    definitions = [line.strip() for line in lines if line.startswith("  ")]
    assert set(TERMS) <= set(terms)
    assert len(definitions) == len(set(definitions)) > 25
    for d in definitions:
        sentences = re.split(r"(?<=[.!?]) (?=[A-Z`])", d)
        assert len(sentences) <= 2 and all(len(s.split()) <= 30 for s in sentences), d
        assert "(" not in re.sub(r"`[^`]*`", "", d), d  # no parentheses outside code
