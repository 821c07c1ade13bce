"""float32 or float64 (chapter 6): what float64 costs per framework, and the page faults its
larger arrays take, on the fixture and on rows edited from it."""

import pytest

from jacbench.report.legacy import precision
from tests.legacy.rows import at, copy, edit


def test_float64_against_float32_per_framework(small):
    # The fixture's float64 row: PyTorch's jacfwd at N = 1,000, 0.2 ms against 4.22 ms.
    (cost,) = precision.float64_costs(small).itertuples()
    assert (cost.framework, cost.strategy, cost.paths) == ("torch", "jacfwd", 1000)
    assert cost.over == pytest.approx(0.0002 / 0.0042206, rel=1e-4)
    small = small[small["dtype"] == "float32"]
    assert precision.float64_costs(small).empty
    assert precision.float64_sentence(precision.float64_costs(small)) == (
        "float64 was not measured beside float32 in this build."
    )
    df = copy(small, at(small, "torch", "jvp", paths=100_000), dtype="float64",
              warm_median_s=small.loc[at(small, "torch", "jvp", paths=100_000),
                                      "warm_median_s"] * 4.7)  # fmt: skip
    df = copy(df, at(small, "jax", "pathwise", paths=10_000), dtype="float64",
              warm_median_s=small.loc[at(small, "jax", "pathwise", paths=10_000),
                                      "warm_median_s"] * 1.4)  # fmt: skip
    costs = precision.float64_costs(df)
    assert list(zip(costs["framework"], costs["strategy"], strict=True)) == [
        ("torch", "jvp"),
        ("jax", "pathwise"),
    ]
    assert list(costs["over"]) == pytest.approx([4.7, 1.4])
    assert precision.float64_sentence(costs) == (
        "At the N measured, float64 takes PyTorch 4.7× (jvp); JAX 1.4× (pathwise) the float32 time."
    )
    df = copy(df, at(small, "torch", "pathwise", paths=10_000), dtype="float64",
              paths=100_000, warm_median_s=1.0)  # fmt: skip
    df = copy(df, df.index.max(), dtype="float32", warm_median_s=0.5)
    said = precision.float64_sentence(precision.float64_costs(df))
    assert "PyTorch 2.0× (pathwise) to 4.7× (jvp)" in said


def test_float64_faults_said_only_where_its_arrays_leave_the_heap(small):
    # PyTorch's jvp at N = 100,000 in float64 beside float32: the path array is 42.4 MB in
    # float64 (above 32 MiB), 21.2 MB in float32 (below).
    f32 = at(small, "torch", "jvp", paths=100_000)
    df = edit(small.copy(), f32, warm_faults=2.0)
    df = copy(df, f32, dtype="float64", warm_median_s=df.loc[f32, "warm_median_s"] * 11,
              warm_faults=289_470.0)  # fmt: skip
    costs = precision.float64_costs(df)
    said = precision.faults_sentence(df, costs)
    assert said.startswith(" Part of it, at N = 100,000, is the allocator: a float64 path array")
    assert said.endswith("a median of 289,470 page faults a warm call against 2 in float32.")
    # At N = 10,000 both arrays fit in the heap's blocks: nothing to say.
    p = at(small, "jax", "pathwise", paths=10_000)
    few = copy(edit(small.copy(), p, warm_faults=0.0), p, dtype="float64", warm_faults=0.0)
    assert precision.faults_sentence(few, precision.float64_costs(few)) == ""
    # Without fault counts (an older dataset) it says nothing either.
    df.loc[:, "warm_faults"] = float("nan")
    assert precision.faults_sentence(df, costs) == ""
    assert precision.faults_sentence(small, precision.float64_costs(small.iloc[0:0])) == ""
