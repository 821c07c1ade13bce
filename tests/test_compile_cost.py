"""Compile cost apart from the first call's allocation (measure.compile_cost): the caches it
empties make the framework compile again, and the worker records the second compile beside the
first call."""

import os
import subprocess
import sys
import textwrap

import pytest

from jacbench.measure import compile_cost, worker
from jacbench.measure.case import Case


def test_emptied_jax_caches_make_jit_trace_again():
    import jax
    import jax.numpy as jnp

    traces = []

    def f(x):
        traces.append(1)  # runs once per trace, never in a compiled call
        return jnp.sin(x).sum()

    jitted = jax.jit(f)
    x = jnp.ones(8)
    jitted(x), jitted(x)
    assert len(traces) == 1
    with compile_cost.emptied("jax"):
        jitted(x)
    assert len(traces) == 2


@pytest.mark.slow  # inductor compiles twice in a fresh cache: about 15 s
def test_emptied_torch_caches_compile_again_in_a_fresh_cache():
    # In a process of its own: dynamo's state is global to the process.
    code = textwrap.dedent("""
        import os, torch
        from torch._dynamo.utils import counters
        from jacbench.measure import compile_cost
        first = compile_cost.fresh_worker_cache()
        f = torch.compile(lambda x: torch.sin(x).sum(), dynamic=False)
        x = torch.ones(8)
        f(x); f(x)
        once = counters["stats"]["unique_graphs"]
        with compile_cost.emptied("torch"):
            inside = os.environ["TORCHINDUCTOR_CACHE_DIR"]
            f(x)
        twice = counters["stats"]["unique_graphs"]
        print(once, twice, inside != first, first.count("jacbench-inductor-"))
    """)
    env = {k: v for k, v in os.environ.items() if k != compile_cost.SHARED_VARIABLE}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=600, env=env)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    once, twice, moved, named = out.stdout.split()[-4:]
    assert (int(once), int(twice)) == (1, 2)  # compiled again after the reset
    assert moved == "True" and named == "1"  # in a cache directory of its own


def test_worker_records_the_second_compile_of_a_compiled_target_only():
    jitted = worker.run(Case(framework="jax", strategy="simulation:jit", paths=200).worker_spec())
    assert jitted["status"] == "ok", jitted["message"]
    assert jitted["compile_s"] == jitted["recompile_s"] - jitted["warm_min_s"]
    assert jitted["recompile_s"] > jitted["warm_min_s"]  # it compiled: slower than any warm call
    eager = worker.run(Case(framework="numpy", strategy="analytic", paths=200).worker_spec())
    assert eager["status"] == "ok" and "compile_s" not in eager


def test_a_path_returning_simulation_is_paired_with_the_terminal_only_one():
    case = Case(framework="jax", strategy="simulation:jit-path", paths=200)
    assert case.baseline.text == "simulation:jit"
    assert Case(framework="jax", strategy="simulation:jit", paths=200).baseline is None


def test_a_workers_cache_is_its_own_and_removed_unless_shared(monkeypatch):
    monkeypatch.delenv(compile_cost.SHARED_VARIABLE, raising=False)
    monkeypatch.delenv(compile_cost.CACHE_ENV, raising=False)
    own = compile_cost.fresh_worker_cache()
    assert os.environ[compile_cost.CACHE_ENV] == own and os.path.isdir(own)
    compile_cost.remove_worker_caches()  # what the worker does before os._exit
    assert not os.path.exists(own)
    monkeypatch.delenv(compile_cost.CACHE_ENV)
    monkeypatch.setenv(compile_cost.SHARED_VARIABLE, compile_cost.SHARED)
    assert compile_cost.fresh_worker_cache() is None
    assert compile_cost.CACHE_ENV not in os.environ  # inductor's own directory, shared


def test_the_second_compile_is_skipped_when_asked(monkeypatch):
    monkeypatch.setenv(compile_cost.MEASURE_VARIABLE, compile_cost.SKIP)
    jitted = worker.run(Case(framework="jax", strategy="simulation:jit", paths=200).worker_spec())
    assert jitted["status"] == "ok" and "recompile_s" not in jitted and "compile_s" not in jitted
