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
        assert s.form in registry.FORMS


def test_the_form_is_what_the_execution_names():
    """A step-form strategy's execution names its loop's simulation (steps-, drawn-): the
    form, the baseline and the module the builder lives in agree."""
    steps = [s for s in registry.STRATEGIES if s.form == "steps"]
    assert {s.framework for s in steps} == {"torch", "tensorflow", "jax"}
    for s in registry.STRATEGIES:
        prefixed = s.execution.startswith(("steps-", "drawn-"))
        assert prefixed == (s.form == "steps"), s.key
        assert s.drawn == s.execution.startswith("drawn-"), s.key
        if s.form == "steps":
            assert s.execution in registry.simulations(s.framework), s.key
            assert s.entry("gbm").startswith(f"jacbench.strategies.{s.framework}_steps:")
            assert s.engine in ("eager", "function", "xla", "jit", "inductor"), s.key
    # Each framework draws inside the loop once, and runs the Asian payoff in both forms.
    for fw in ("torch", "tensorflow", "jax"):
        assert len([s for s in registry.by_framework(fw) if s.drawn]) == 1, fw
        forms = {s.form for s in registry.by_framework(fw, "asian")}
        assert forms == {"array", "steps"}, fw


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


# --- roles: what the chapters, figures and tests read instead of lists of names ---------------

AD = ("torch", "tensorflow", "jax")


def test_each_framework_has_one_default_call_and_it_is_reverse_mode():
    from jacbench.second import registry as second

    for fw in AD:
        (default,) = [s for s in registry.by_framework(fw) if s.default]
        assert registry.default(fw) is default
        # The book's claim: the frameworks' jacobian functions are reverse mode by default.
        assert default.mode == "reverse" and {"gbm", "moments"} <= set(default.problems)
        (hessian,) = [m for m in second.by_framework(fw) if m.default]
        assert second.default(fw) is hessian and hessian.kind == "dense" and hessian.how
    assert registry.default("numpy") is None


def test_a_variant_runs_its_twins_differentiation_compiled_or_by_blocks():
    variants = [s for s in registry.STRATEGIES if s.variant_of]
    assert variants, "the registry has compiled and blocked variants"
    for s in variants:
        twin = registry.get(s.framework, s.variant_of)  # UsageError if it names no strategy
        assert (twin.mode, twin.batching) == (s.mode, s.batching), s.key
        assert not twin.blocked and (s.blocked or (s.compiled and twin.engine == "eager")), s.key
        # The Asian payoff is measured in the compiled forms only.
        assert set(s.problems) - {"asian"} <= set(twin.problems), s.key
        assert s.form == twin.form, s.key
    # Every compiled whole-array strategy of an eager framework is the variant of an eager twin
    # (a floor, written by hand, has none); JAX has none. Over the steps, the carried tangent
    # and the pathwise gradient have theirs, to show what compiling the loop is worth.
    for s in registry.STRATEGIES:
        eager_framework = s.framework in ("torch", "tensorflow")
        if s.compiled and not (s.blocked or s.floor) and eager_framework and s.form == "array":
            assert s.eager_twin == s.variant_of, s.key
    for name in ("steps-compiled-carry", "steps-compiled-pathwise"):
        assert registry.get("torch", name).eager_twin == name.replace("compiled-", "")
    assert all(s.eager_twin is None for s in registry.by_framework("jax"))
    assert registry.get("tensorflow", "blocked-forward-function").eager_twin is None
    assert registry.get("jax", "blocked-jvp").blocks == "jvp"
    assert registry.get("jax", "jvp").blocks == ""


def test_a_vectorized_strategy_batches_the_vjps_of_its_loop():
    pairs = [(s, registry.get(s.framework, s.vectorizes)) for s in registry.STRATEGIES
             if s.vectorizes]  # fmt: skip
    assert {s.framework for s, _ in pairs} == set(AD)
    for vec, loop in pairs:
        assert vec.batching == "vectorized" and loop.batching == "loop", vec.key
        assert vec.mode == loop.mode == "reverse", vec.key
    loops = [loop.key for _, loop in pairs]
    assert len(loops) == len(set(loops)), "one vectorized strategy per loop"


def test_the_question_programs_are_never_candidates():
    for s in registry.STRATEGIES:
        if s.faithful:
            assert not s.candidate, s.key
    assert not registry.get("torch", "grad-loop-create-graph").candidate
    assert registry.get("torch", "pathwise").candidate


def test_each_framework_has_one_strategy_per_answer_role_and_per_snippet():
    """Each AD framework has one strategy of each answer role (its pathwise gradient, forward
    mode, wide Jacobian), and its snippets run registered strategies of the right problem."""
    from jacbench.second import registry as second

    for fw in AD:
        for role in registry.ANSWERS:
            s = registry.answer(fw, role)
            assert [t.name for t in registry.by_framework(fw) if t.answer == role] == [s.name]
            problem = "moments" if role == "wide" else "gbm"
            assert problem in s.problems and s.candidate, s.key
            assert s.mode == ("forward" if role == "forward" else "reverse"), s.key
        tall, wide = registry.snippet(fw, "tall"), registry.snippet(fw, "wide")
        assert "gbm" in tall.problems and "moments" in wide.problems and wide.mode == "reverse"
        compiled = registry.snippet(fw, "tall-compiled")
        assert compiled is None or (compiled.compiled and compiled.variant_of == tall.name)
        once = registry.snippet(fw, "tall-once")  # the eager pathwise gradient, where shown
        assert once is None or (once.answer == "pathwise" and not once.compiled), fw
        assert second.answer(fw).kind == "hvp"


def test_memory_models_were_fitted_under_a_known_allocator():
    from jacbench.constants import ALLOCATORS

    assert {s.memory_fitted_under for s in registry.STRATEGIES} <= set(ALLOCATORS)


# The framework's API a record's call names (numpy's: the closed form or its bumps, no AD).
API = {"torch": ("torch.",), "tensorflow": ("tf.", "tape."), "jax": ("jax.",), "numpy": ("numpy",)}


def test_every_record_names_the_api_call_it_makes():
    """The glossary maps each label to its call: every strategy and second-order method has one,
    short, in straight quotes (a reader pastes it), naming its framework's API."""
    from jacbench.second import registry as second

    records = [*registry.STRATEGIES, *second.METHODS]
    assert len(records) == len(registry.STRATEGIES) + len(second.METHODS) > 50
    for r in records:
        assert r.call and len(r.call) <= 90, r.key
        assert not set(r.call) & set("\u2018\u2019\u201c\u201d"), r.key
        assert any(token in r.call for token in API[r.framework]), r.key
    calls = {s.key: s.call for s in registry.STRATEGIES}
    assert calls["torch/jacfwd"] == "torch.func.jacfwd(f, argnums=(0, 1))"
    assert 'strategy="forward-mode"' in calls["torch/functional-forward"]


def test_a_tables_call_is_the_catalogs_label_and_no_chapter_keeps_its_own():
    """Every chapter table names a call through the registry (labelled), never a dict of its
    own; a label per problem gives each problem's call, and a chunk size is filled in."""
    import re
    from pathlib import Path

    report = Path(registry.__file__).resolve().parents[1] / "report"
    for path in report.rglob("*.py"):
        assert not re.search(r"^[A-Z_]*CALLS = \{", path.read_text(), re.M), path.name
    batched = registry.get("torch", "batched-backward")
    assert batched.labelled("gbm") == "torch.autograd.grad(..., is_grads_batched=True)"
    assert batched.labelled("moments") == "X.repeat(3, 1), one backward pass"
    assert registry.get("torch", "jacrev-chunked").labelled(chunk=64).endswith("chunk_size=64)")
    assert registry.get("jax", "steps-carry").labelled() == registry.get("jax", "steps-carry").call
    problems = {p for s in registry.STRATEGIES for p in s.problems}
    for s in registry.STRATEGIES:
        if not isinstance(s.label, str):
            assert {p for p, _ in s.label} <= set(s.problems) <= problems, s.key
