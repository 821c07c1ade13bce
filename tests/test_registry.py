"""The registry as data: well-formed records, stable names, every builder resolvable."""

import importlib
import re

import pytest

from jacbench.constants import FRAMEWORKS, PROBLEMS
from jacbench.errors import UsageError
from jacbench.strategies import registry


def test_names_are_unique_kebab_case_and_fields_valid():
    keys = [s.key for s in registry.STRATEGIES]
    assert len(keys) == len(set(keys))
    for s in registry.STRATEGIES:
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", s.name), s.name
        assert s.framework in FRAMEWORKS
        assert s.mode in registry.MODES
        assert s.batching in registry.BATCHINGS
        assert s.description and s.problems and set(s.problems) <= set(PROBLEMS)
        assert set(s.dtypes) <= {"float32", "float64"}


def test_required_strategies_are_registered():
    required = {
        "torch": "functional-loop functional-vectorized functional-forward grad-loop "
        "batched-backward jacrev jacrev-chunked jacfwd jvp pathwise compiled-jvp",
        "tensorflow": "tape-jacobian-pfor tape-jacobian-pfor-chunked tape-jacobian-loop "
        "forward-accumulator forward-accumulator-function forward-accumulator-xla pathwise "
        "pathwise-function pathwise-xla",
        "jax": "jacrev jacrev-chunked jacfwd jvp vjp-loop pathwise",
        "numpy": "analytic finite-difference",
    }
    for framework, names in required.items():
        have = {s.name for s in registry.by_framework(framework)}
        assert set(names.split()) <= have, framework


ENTRIES = [(s, p) for s in registry.STRATEGIES for p in s.problems]


@pytest.mark.parametrize("strategy,problem", ENTRIES, ids=[f"{s.key}-{p}" for s, p in ENTRIES])
def test_entry_points_resolve(strategy, problem):
    module, _, func = strategy.entry(problem).partition(":")
    assert callable(getattr(importlib.import_module(module), func))


def test_lookup_errors_list_the_valid_choices():
    with pytest.raises(UsageError, match="torch, tensorflow, jax, numpy"):
        registry.get("tf", "pathwise")
    with pytest.raises(UsageError, match="jacrev-chunked"):
        registry.get("jax", "nope")
    assert registry.get("jax", "jvp").mode == "forward"


def test_importing_the_registry_imports_no_framework():
    import subprocess
    import sys

    code = (
        "import sys, jacbench.strategies.registry, jacbench.cli;"
        "print([m for m in ('torch','tensorflow','jax') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
