"""The comparisons chapters 2 and 3 state in words, on the committed fixture."""

import math

import pytest

from jacbench.report import data, formats, queries
from jacbench.report.chapters import modes, vectorized
from jacbench.strategies import registry

PAIRS = [
    ("torch", "grad-loop", "jacrev"),
    ("tensorflow", "tape-jacobian-loop", "tape-jacobian-pfor"),
    ("jax", "vjp-loop", "jacrev"),
]


@pytest.fixture(scope="module")
def df(small_results):
    return data.load(small_results)


def test_loop_against_vectorized_pairs_the_rows_of_one_size(df):
    cmp = vectorized.loop_against_vectorized(df, PAIRS)
    # The fixture has no TensorFlow loop: only the pairs measured at the same N appear.
    assert sorted(set(cmp["framework"])) == ["jax", "torch"]
    for r in cmp.itertuples():
        loop = queries.one(queries.gbm(df), framework=r.framework, strategy=r.loop,
                           paths=r.paths, status="ok")  # fmt: skip
        vec = queries.one(queries.gbm(df), framework=r.framework, strategy=r.vectorized,
                          paths=r.paths, status="ok")  # fmt: skip
        assert math.isclose(r.time_ratio, vec["warm_median_s"] / loop["warm_median_s"])
        assert math.isclose(r.memory_ratio, vec["peak_over_inputs"] / loop["peak_over_inputs"])
    assert vectorized.loop_against_vectorized(df, []).empty


def test_which_is_faster_names_the_faster_first_whatever_the_order():
    one = vectorized.which_is_faster("loop", 0.25, "vmap", 1.0)
    assert one == vectorized.which_is_faster("vmap", 1.0, "loop", 0.25)
    assert one.startswith("loop, 4.0× faster than vmap (250.0 ms against 1.00 s)")
    assert vectorized.which_is_faster("loop", None, "vmap", 1.0) == formats.NOT_MEASURED
    assert vectorized.which_is_faster("loop", float("nan"), "vmap", 1.0) == formats.NOT_MEASURED


def test_against_expected_is_the_measured_over_the_expected():
    assert modes.against_expected(250.0, 500) == "0.50×"
    assert modes.against_expected(1000.0, 500) == "2.00×"
    assert modes.against_expected(None, 500) == formats.NOT_MEASURED
    assert modes.against_expected(3.0, 0) == formats.NOT_MEASURED


def test_only_pytorch_loops_have_a_model_fitted_under_glibc_mmap():
    mmap = [s for s in registry.STRATEGIES if s.memory_fitted_under == "glibc-mmap"]
    assert {s.name for s in mmap} == {"question", "functional-loop", "grad-loop"}
    for s in mmap:
        assert s.framework == "torch" and s.mode == "reverse" and s.batching == "loop"
    assert registry.get("tensorflow", "tape-jacobian-loop").memory_fitted_under == "glibc"
