"""Chapter 1's facts (report.chapters.question): the question's programs as measured here."""

from pathlib import Path

import pytest

from jacbench.report import dataset
from jacbench.report.chapters import question
from jacbench.report.chapters.question import tables
from jacbench.report.chapters.question.facts import TF_CAP
from tests.chapters.rows import edit

REFERENCE = Path(__file__).resolve().parents[2] / dataset.RESULTS


def _row(df, allocator, paths=10_000, framework="torch"):
    mask = (df["strategy"] == "question") & (df["framework"] == framework)
    mask &= (df["allocator"] == allocator) & (df["paths"] == paths)
    (index,) = df.index[mask.fillna(False).astype(bool)]
    return index


def test_the_programs_at_the_questions_size(reference):
    f = question.facts(reference)
    glibc, mmap, jemalloc = (f.torch[a] for a in ("glibc", "glibc-mmap", "jemalloc"))
    assert glibc.status == "memory-cap" and f.stopped("glibc") and not glibc.finished
    assert glibc.ran_s == pytest.approx(reference.loc[_row(reference, "glibc"), "wall_s"])
    assert mmap.finished and f.about_a_minute("glibc-mmap") and f.flat("glibc-mmap")
    assert jemalloc.first_s < mmap.first_s and f.flat("jemalloc")
    assert not f.about_a_minute("jemalloc")  # 20 s or less is not "about a minute"
    assert f.tensorflow_out_of_memory and f.tensorflow.cap == TF_CAP


def test_the_fix_against_each_allocator(reference):
    f = question.facts(reference)
    for allocator in ("glibc-mmap", "jemalloc"):
        expected = f.torch[allocator].warm_s / f.fix.warm_s
        assert f.fix_against(allocator) == pytest.approx(expected)
    assert f.fix_against("glibc") is None  # the program did not finish there


def test_edited_rows_change_the_facts(reference):
    i = _row(reference, "glibc-mmap")
    edit(reference, i, cold_s=600.0)  # ten minutes: no longer "about a minute"
    j = _row(reference, "glibc-mmap", paths=1_000)
    edit(reference, j, peak=reference.loc[i, "peak"] / 2)  # memory doubles from N = 1,000
    f = question.facts(reference)
    assert not f.about_a_minute("glibc-mmap") and f.flat("glibc-mmap") is False


def test_missing_rows_read_as_unknown(small):
    f = question.facts(small)
    assert f.torch["glibc-mmap"] is None and f.flat("glibc-mmap") is None
    assert not f.about_a_minute("glibc-mmap") and f.fix_against("jemalloc") is None
    table = question.observations(f)
    assert len(table) == 6 and set(table.columns) >= {"measured here", "time alike?"}


def test_the_observations_table_reads_the_facts(reference):
    f = question.facts(reference)
    rows = question.observations(f).set_index("program")
    assert rows.loc["PyTorch, N = 10,000, glibc-mmap", "time alike?"] == "yes"
    assert rows.loc["PyTorch, N = 10,000, jemalloc", "time alike?"] == "faster"
    assert rows.loc["PyTorch, N = 10,000, glibc", "memory alike?"] == "grew to the cap"
    fix = tables.fix_beside(f)
    assert list(fix["PyTorch"]) == ["the fix, glibc", "the program, glibc",
                                    "the program, glibc-mmap", "the program, jemalloc"]  # fmt: skip


def test_the_fix_beats_every_finished_program(reference):
    f = question.facts(reference)
    assert f.fix_beats_every_program and f.faster_under("jemalloc", "glibc-mmap")
    assert f.fix_against_best == pytest.approx(f.fix_against("jemalloc"))
    i = _row(reference, "jemalloc")
    edit(reference, i, warm_median_s=f.fix.warm_s / 2)  # the program now beats the fix warm
    assert not question.facts(reference).fix_beats_every_program
