"""The allocator experiment: glibc's variants, and what malloc holds as the worker reads it."""

import pytest

from jacbench.constants import ALLOCATOR_EXPERIMENTS, ALLOCATORS
from jacbench.errors import UsageError
from jacbench.measure import harness, heap
from jacbench.measure.case import Case
from jacbench.measure.probes import BLOCK, BLOCKS_HELD
from jacbench.measure.runner import measure_case

PROBE = "callable:jacbench.measure.probes:free_every_other_block"
HELD = BLOCKS_HELD * BLOCK  # in use after each call, and as much freed between the blocks
MB = 10**6


def _probe(allocator: str) -> dict:
    case = Case(framework="callable", strategy=PROBE, allocator=allocator, repeats=2,
                warm_budget_s=1, mem_cap=2 * harness.GIB, timeout=60)  # fmt: skip
    row = measure_case(case)
    assert row["status"] == "ok", row["message"]
    return row


def test_each_variant_sets_its_own_environment():
    assert harness.allocator_environment("glibc-arena1") == {"MALLOC_ARENA_MAX": "1"}
    # No MALLOC_TRIM_THRESHOLD_: it would fix the mmap threshold too (see harness).
    assert harness.allocator_environment("glibc-trim") == {heap.TRIM_VARIABLE: "1"}
    assert not set(ALLOCATOR_EXPERIMENTS) & set(ALLOCATORS)  # the chapters never see them
    for name in ALLOCATOR_EXPERIMENTS:
        assert Case(framework="numpy", strategy="analytic", allocator=name).allocator == name
    with pytest.raises(UsageError, match="glibc-arena1, glibc-trim"):
        Case(framework="numpy", strategy="analytic", allocator="tcmalloc")


def test_trimming_wraps_a_call_only_when_asked(monkeypatch):
    def call():
        return 7

    monkeypatch.delenv(heap.TRIM_VARIABLE, raising=False)
    assert heap.trimming(call) is call
    monkeypatch.setenv(heap.TRIM_VARIABLE, "1")
    trimmed = heap.trimming(call)
    assert trimmed is not call and trimmed() == 7
    monkeypatch.setattr(heap, "glibc", lambda: None)  # another malloc: nothing to trim
    assert heap.trimming(call) is call and heap.heap_fields("cold") == {}


@pytest.mark.parametrize("allocator", ["glibc", "glibc-mmap", "glibc-arena1"])
def test_worker_tells_memory_in_use_from_memory_freed_and_kept(allocator):
    row = _probe(allocator)
    for phase in ("cold", "warm"):
        # What the calls left, over what malloc held before the first one.
        in_use = row[f"{phase}_heap_in_use"] - row["inputs_heap_in_use"]
        free_kept = row[f"{phase}_heap_free_kept"] - row["inputs_heap_free_kept"]
        assert HELD - MB < in_use < HELD + 2 * MB
        # Every other block freed: holes no neighbour can merge with, kept by malloc.
        assert HELD - 2 * MB < free_kept < HELD + 2 * MB


def test_trim_gives_the_kept_memory_back_to_the_kernel():
    def kept_resident(row):  # what the cold call left resident: its blocks, held and freed
        return row["warm_rss_before"] - row["cold_rss_before"]

    kept, trimmed = _probe("glibc"), _probe("glibc-trim")
    assert kept_resident(kept) > 1.8 * HELD
    assert kept_resident(trimmed) < 1.25 * HELD
    # malloc_trim returns the holes' pages but keeps the holes: still counted as free.
    assert trimmed["cold_heap_free_kept"] >= HELD


@pytest.mark.skipif(harness.jemalloc_path() is None, reason="libjemalloc2 not installed")
def test_no_heap_fields_under_jemalloc():
    row = _probe("jemalloc")
    assert not [k for k in row if "_heap_" in k and row[k] is not None]
