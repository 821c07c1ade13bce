"""Targets: the one parser of the names in a results file's strategy column."""

import pytest

from jacbench.errors import UnsupportedConfiguration, UsageError
from jacbench.measure.case import Case
from jacbench.measure.targets import (
    CallableTarget,
    CrossoverTarget,
    SecondOrderTarget,
    SimulationTarget,
    StrategyTarget,
    parse,
)

KINDS = [
    ("jax", "jvp", StrategyTarget, "strategy", "jvp"),
    ("torch", "second:func-hessian", SecondOrderTarget, "second", "func-hessian"),
    ("tensorflow", "simulation:xla", SimulationTarget, "simulation", "xla"),
    ("torch", "crossover:reverse", CrossoverTarget, "crossover", "reverse"),
    ("callable", "callable:jacbench.measure.probes:nap", CallableTarget, "callable",
     "jacbench.measure.probes:nap"),
]  # fmt: skip


@pytest.mark.parametrize("framework,text,cls,kind,name", KINDS)
def test_parse_and_text_round_trip(framework, text, cls, kind, name):
    target = parse(framework, text)
    assert isinstance(target, cls) and target.kind == kind and target.name == name
    assert target.text == text and parse(target.framework, target.text) == target


@pytest.mark.parametrize(
    "framework,text,word",
    [
        ("jax", "warp", "jacrev-chunked"),
        ("jax", "second:newton", "jax/hvp-forward-over-reverse"),
        ("torch", "simulation:jit", "simulation:eager, simulation:inductor"),
        ("mxnet", "simulation:eager", "torch, tensorflow, jax, numpy"),
        ("jax", "crossover:sideways", "forward, reverse"),
        ("callable", "callable:no_colon", "module:function"),
        ("jax", "third:hvp", "second:NAME"),
    ],
)
def test_unknown_targets_name_the_valid_choices(framework, text, word):
    with pytest.raises(UsageError, match=word):
        parse(framework, text)


def test_what_a_target_can_run():
    assert parse("jax", "jvp").baseline("gbm") == SimulationTarget("jax", "jit")
    assert parse("jax", "jacrev").baseline("moments") is None
    assert parse("jax", "second:per-path-second").baseline("gbm") is None
    with pytest.raises(UnsupportedConfiguration, match="float32 only"):
        Case(framework="torch", strategy="question", dtype="float64")
    with pytest.raises(UnsupportedConfiguration, match="gbm problem only"):
        Case(framework="torch", strategy="simulation:eager", problem="moments", inputs=10)
    with pytest.raises(UsageError, match="allocator"):
        Case(framework="jax", strategy="jvp", allocator="tcmalloc")


def test_the_worker_is_told_the_text_and_parses_it_the_same_way():
    case = Case(framework="torch", strategy="compiled-jvp", paths=10)
    spec = case.worker_spec()
    assert spec["target"] == {"framework": "torch", "name": "compiled-jvp"}
    assert spec["baseline"] == "simulation:inductor"
    assert parse(spec["target"]["framework"], spec["baseline"]) == case.baseline
