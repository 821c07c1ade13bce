"""Chapter 1, the question: the Reproduced table's verdicts (reproduced), what became of the
question's programs under each allocator and cap, and the fastest strategy of each framework
against them (question). Rows written by hand as a sweep writes them, and the committed 51-row
fixture edited row by row: a program killed at its cap, one never run, glibc-mmap slower and
faster than jemalloc, no row at the question's N, a tie, and picks that follow the rows."""

import pandas as pd
import pytest

from jacbench.constants import GIB
from jacbench.measure import store
from jacbench.report import data, formats, queries
from jacbench.report.legacy import question, reproduced

# The Reproduced table's verdicts, from rows written as a sweep writes them.
MIB = 2**20


def _row(framework, strategy, paths, status="ok", allocator="glibc", mem_cap=8 * GIB, **metrics):
    row = dict.fromkeys(store.COLUMNS, "")
    row.update(key=f"{framework}-{strategy}-{paths}-{allocator}-{mem_cap}", env="e",
               problem="gbm", framework=framework, strategy=strategy, target="strategy",
               paths=paths, steps=52, dtype="float32", threads=2, allocator=allocator,
               mem_cap=mem_cap, timeout=600.0, repeats=5, ratio_processes=1, status=status,
               **metrics)  # fmt: skip
    return row


def _ok(framework, strategy, paths, seconds, peak, allocator="glibc", libraries=200 * MIB):
    before = libraries + 10 * MIB
    return _row(framework, strategy, paths, allocator=allocator, cold_s=seconds,
                warm_median_s=seconds, import_peak=libraries, cold_rss_before=before,
                cold_peak=peak, warm_peak=peak)  # fmt: skip


def _results(tmp_path, rows):
    path = tmp_path / "r.csv"
    for row in rows:
        store.append_row(path, row)
    return data.load(path)


QUESTION_ROWS = [
    _ok("torch", "question", 1000, 0.9, 250 * MIB),
    _ok("tensorflow", "question", 1000, 1.2, 700 * MIB, libraries=600 * MIB),
    _ok("torch", "question", 1000, 0.9, 250 * MIB, allocator="glibc-mmap"),
    _ok("torch", "question", 1000, 0.3, 250 * MIB, allocator="jemalloc"),
    _row("torch", "question", 10_000, "memory-cap", wall_s=80.0, watched_peak_rss=8 * GIB),
    _ok("torch", "question", 10_000, 60.0, 260 * MIB, allocator="glibc-mmap"),
    _ok("torch", "question", 10_000, 6.0, 400 * MIB, allocator="jemalloc"),
    _row("tensorflow", "question", 10_000, "skipped-predicted", predicted_peak=64 * GIB),
    _row(
        "tensorflow",
        "question",
        10_000,
        "memory-cap",
        mem_cap=16 * GIB,
        wall_s=200.0,
        watched_peak_rss=16 * GIB,
        predicted_peak=64 * GIB,
    ),  # fmt: skip
    _ok("torch", "pathwise", 10_000, 0.01, 230 * MIB),
    _ok("tensorflow", "pathwise", 10_000, 0.02, 650 * MIB, libraries=600 * MIB),
    _ok("jax", "pathwise", 10_000, 0.005, 240 * MIB),
]


def test_the_reproduced_table_computes_each_verdict_from_the_numbers(tmp_path):
    df = _results(tmp_path, QUESTION_ROWS)
    table = reproduced.table(df).set_index("the question's observation")
    verdict = table["verdict"]
    assert len(table) == 6
    assert verdict.iloc[0].startswith("reproduced")  # 0.9 s and 1.2 s: about a second
    # 250 and 700 MiB: PyTorch's within 2× of 140 MB, TensorFlow's not, its libraries alone
    # holding more than the question's 340 MB.
    assert verdict.iloc[1].startswith("differs: TensorFlow 2.2× more; the libraries alone (Ten")
    assert verdict.iloc[1].endswith("TensorFlow 2.8× PyTorch (the question: 2.4×)")
    glibc, mmap, jemalloc = (verdict[f"N = 10,000, PyTorch under {a}"]
                             for a in ("glibc", "glibc-mmap", "jemalloc"))  # fmt: skip
    assert glibc.startswith("differs") and "dynamic mmap threshold" in glibc
    assert "glibc-mmap (260.0 MiB)" in glibc and "jemalloc" not in glibc  # jemalloc's grew
    assert mmap.startswith("reproduced")  # a minute, 260 MiB against 250 at N = 1,000
    assert jemalloc.startswith("differs: 10.0× faster than a minute (glibc-mmap: 1 min 0 s")
    assert "memory grows: +150.0 MiB" in jemalloc
    tf = table.loc["N = 10,000, TensorFlow"]
    assert tf["verdict"] == "reproduced: fails for lack of memory after minutes"
    assert tf["measured here"].startswith("killed at the 16.0 GiB cap after 3 min 20 s")


@pytest.mark.parametrize(
    "status,wall,word",
    [("memory-cap", 30.0, "reproduced, sooner"), ("ok", 30.0, "differs: it finished"),
     ("timeout", 900.0, "differs: not stopped by memory")],
)  # fmt: skip
def test_tensorflow_at_16_gib_whatever_became_of_it(tmp_path, status, wall, word):
    rows = [_row("tensorflow", "question", 10_000, status, mem_cap=16 * GIB, wall_s=wall,
                 cold_s=wall, warm_peak=GIB, cold_peak=GIB, watched_peak_rss=GIB)]  # fmt: skip
    assert reproduced.tf_fails(_results(tmp_path, rows)).verdict.startswith(word)


def test_cases_a_profile_left_out_are_marked_standard_only(tmp_path):
    df = _results(tmp_path, QUESTION_ROWS[:5])
    table = reproduced.table(df)
    assert list(table["measured here"][3:]) == [reproduced.STANDARD_ONLY] * 3
    assert reproduced.STANDARD_ONLY in table["verdict"][2]  # no allocator to compare with


def test_speedups_against_the_question_program(tmp_path):
    df = _results(tmp_path, QUESTION_ROWS)
    # PyTorch's program finished under glibc-mmap (60 s) and jemalloc (6 s): the reference is
    # the faster, so the speed-up is read against the program at its best, 6 s against 10 ms.
    ref = question.reference(df, "torch")
    assert ref["allocator"] == "jemalloc"
    best = queries.best(df, "torch", 10_000)
    text = question.against(best, ref, "torch")
    assert text.startswith("600× faster than the question's program under jemalloc")
    # Against the slower allocator's run, as the speed-ups table also lists it.
    mmap = question.program(df, "torch", 10_000, "glibc-mmap")
    assert question.against(best, mmap, "torch").startswith(
        "6000× faster than the question's program under glibc-mmap"
    )
    assert "2.5× less memory beyond the inputs" in question.against(best, mmap, "torch")
    tf = question.against(queries.best(df, "tensorflow", 10_000),
                            question.reference(df, "tensorflow"), "tensorflow")  # fmt: skip
    assert tf == "the question's program failed at the 16.0 GiB cap after 3 min 20 s"
    jax = question.against(queries.best(df, "jax", 10_000), question.reference(df, "jax"), "jax")
    assert jax.startswith("1200× faster than the question's PyTorch program under jemalloc")
    # Every pick is pathwise (10, 20 and 5 ms); beyond the inputs (210 MiB before the first
    # call) it holds 20, 20 and 30 MiB against the program's 50 (glibc-mmap) and 190 (jemalloc).
    table = question.speedups(df)
    assert list(table.columns) == ["framework", "fastest strategy", "the question's program",
                                   "the fastest against it"]  # fmt: skip
    assert table.values.tolist() == [
        ["PyTorch", "pathwise", "PyTorch, glibc: memory cap (8.0 GiB)",
         "the question's program under glibc failed at the 8.0 GiB cap after 1 min 20 s"],
        ["PyTorch", "pathwise", "PyTorch, glibc-mmap: 1 min 0 s",
         "6000× faster than the question's program under glibc-mmap, 2.5× less memory beyond "
         "the inputs"],
        ["PyTorch", "pathwise", "PyTorch, jemalloc: 6.00 s",
         "600× faster than the question's program under jemalloc, 9.5× less memory beyond the "
         "inputs"],
        ["TensorFlow", "pathwise", "TensorFlow, 16.0 GiB cap: memory cap (16.0 GiB)",
         "the question's program failed at the 16.0 GiB cap after 3 min 20 s"],
        ["JAX", "pathwise", "PyTorch, jemalloc: 6.00 s",
         "1200× faster than the question's PyTorch program under jemalloc, 6.3× less memory "
         "beyond the inputs"],
    ]  # fmt: skip
    # The "In short" box reads the same ratio: 6 s under jemalloc over 10 ms.
    assert question.over_best(df) == pytest.approx(600)


def _timed(seconds, beyond_inputs, status="ok", **more) -> pd.Series:
    """A row with a warm time and the memory it held beyond its inputs."""
    return pd.Series({"warm_median_s": seconds, "peak_over_inputs": beyond_inputs,
                      "status": status, **more})  # fmt: skip


@pytest.mark.parametrize(
    ("theirs", "said"),
    [
        (190 * MIB, "9.5× less memory beyond the inputs"),
        (400 * MIB, "20× less memory beyond the inputs"),  # from 10×, no decimal
        (14 * MIB, "1.4× more memory beyond the inputs"),  # 20 against 14 MiB
        (21 * MIB, "about the same memory beyond the inputs"),  # within 1.1× either way
        (22 * MIB, "about the same memory beyond the inputs"),  # 1.1× exactly: still the same
        (24 * MIB, "1.2× less memory beyond the inputs"),
        (18 * MIB, "1.1× more memory beyond the inputs"),  # 20 / 18 = 1.11
        (None, "memory not measured"),
    ],
)
def test_memory_against_says_less_more_or_about_the_same(theirs, said):
    assert question.memory_against(_timed(0.01, 20 * MIB), _timed(6.0, theirs)) == said


def test_against_brief_in_a_table_cell():
    best = _timed(0.01, 20 * MIB)
    assert question.against_brief(best, _timed(6.0, 190 * MIB)) == "600× faster, 9.5× less memory"
    assert question.against_brief(best, _timed(0.005, 14 * MIB)) == (
        "2.0× slower, 1.4× more memory"
    )
    assert question.against_brief(best, _timed(0.025, 21 * MIB)) == (
        "2.5× faster, about the same memory"
    )
    capped = _timed(None, None, "memory-cap", mem_cap=16 * GIB)
    assert (
        question.against_brief(best, capped) == "the question's program failed at the 16.0 GiB cap"
    )
    late = _timed(None, None, "timeout", timeout=600.0, mem_cap=8 * GIB)
    assert question.against_brief(best, late) == "the question's program: timeout (600 s)"
    assert question.against_brief(best, None) == "standard profile only"
    assert question.against_brief(None, capped) == formats.NOT_MEASURED


# --- The committed fixture, edited row by row -------------------------------------------------
# Its question rows: PyTorch's and TensorFlow's programs ran at N = 1,000 under glibc (cold
# 0.524 s and 1.175 s, warm 0.351 s and 0.508 s); at N = 10,000 PyTorch's was killed at its
# 4 GiB cap after 13.35 s holding 4,295,327,744 bytes, and TensorFlow's was skipped at a 4 GiB
# cap, its model predicting 68,602,331,840 bytes. No row under glibc-mmap or jemalloc.


def _at(df: pd.DataFrame, **conditions) -> int:
    """The index of the one row that meets the conditions."""
    rows = queries.where(df, **conditions)
    assert len(rows) == 1, conditions
    return rows.index[0]


def _set(df: pd.DataFrame, index, **values) -> pd.DataFrame:
    for column, value in values.items():
        df.loc[index, column] = value
    return df


def _add(df: pd.DataFrame, like, **values) -> pd.DataFrame:
    """df with one more row: a copy of row `like` with values changed."""
    new = df.loc[[like]].copy()
    new.index = [df.index.max() + 1]
    out = pd.concat([df, _set(new, new.index[0], **values)])
    out.attrs = df.attrs
    return out


def _torch_question(df, paths=1000):
    return _at(df, framework="torch", strategy="question", paths=paths, allocator="glibc")


def _tf_question(df, paths=10_000):
    return _at(df, framework="tensorflow", strategy="question", paths=paths)


def _torch_at_10k(df, allocator, status="ok", **values):
    """df with PyTorch's program at N = 10,000 under an allocator (a copy of its N = 1,000 row)."""
    return _add(df, _torch_question(df), paths=10_000, allocator=allocator, status=status,
                **values)  # fmt: skip


def test_pytorchs_program_under_each_allocator_in_words(small):
    # Killed at its 4 GiB cap after 13.3515 s, holding 4,295,327,744 bytes (4.0 GiB).
    assert question.torch_in_words(small, "glibc") == (
        "killed at the 4.0 GiB cap after 13.35 s, holding 4.0 GiB"
    )
    assert question.torch_in_words(small, "glibc-mmap") == reproduced.STANDARD_ONLY
    df = _torch_at_10k(small, "glibc-mmap", cold_s=62.4, peak=259 * MIB)
    assert question.torch_in_words(df, "glibc-mmap") == (
        "1 min 2 s for the first call, the process peaking at 259.0 MiB"
    )
    df = _torch_at_10k(df, "jemalloc", "timeout", timeout=600.0, watched_peak_rss=GIB)
    assert question.torch_in_words(df, "jemalloc") == (
        "still running at the 10 min 0 s timeout, holding 1.0 GiB"
    )
    # No row at the size asked about.
    assert question.torch_in_words(small, "glibc", 5000) == reproduced.STANDARD_ONLY


def test_tensorflows_program_under_16_gib_in_words(small):
    # Its only row at N = 10,000 ran under a 4 GiB cap, below the question's 16 GiB.
    assert question.tensorflow_in_words(small) == reproduced.STANDARD_ONLY
    df = _set(small, _tf_question(small), mem_cap=16 * GIB)
    assert question.tensorflow_in_words(df) == (
        "not run: the model predicts 63.9 GiB, above its 16.0 GiB cap"
    )
    _set(df, _tf_question(df), status="memory-cap", wall_s=101.0, watched_peak_rss=16 * GIB)
    assert question.tensorflow_in_words(df) == (
        "killed at the 16.0 GiB cap after 1 min 41 s, holding 16.0 GiB"
    )
    _set(df, _tf_question(df), status="ok", cold_s=242.0)
    assert question.tensorflow_in_words(df) == "finished in 4 min 2 s"


DIFFER = (
    "The two differ in time: under glibc-mmap the first call takes {}× as long as under "
    "jemalloc, which reuses the pages that glibc-mmap maps afresh for every row."
)
ABOUT_SAME = "The two take about the same time, or jemalloc the longer: see the table."


@pytest.mark.parametrize(
    "mmap,jemalloc,expected",
    [
        ((62.0, "ok"), (5.7, "ok"), DIFFER.format("10.9")),  # 62.0 / 5.7 = 10.88
        ((6.7, "ok"), (6.0, "ok"), DIFFER.format("1.1")),  # 1.117: just past a tenth
        ((6.5, "ok"), (6.0, "ok"), ABOUT_SAME),  # 1.083: within a tenth
        ((6.0, "ok"), (6.0, "ok"), ABOUT_SAME),  # a tie
        ((5.0, "ok"), (6.0, "ok"), ABOUT_SAME),  # glibc-mmap the faster
        ((None, "memory-cap"), (6.0, "ok"), "Only one of the two finished here: see the table."),
        ((6.0, "ok"), (None, "timeout"), "Only one of the two finished here: see the table."),
        ((None, "memory-cap"), (None, "timeout"), "Neither finished here: see the table."),
        (None, (6.0, "ok"), f"Their times at this size are {reproduced.STANDARD_ONLY}."),
        (None, None, f"Their times at this size are {reproduced.STANDARD_ONLY}."),
    ],
)
def test_glibc_mmap_against_jemalloc_in_time(small, mmap, jemalloc, expected):
    df = small
    for allocator, measured in (("glibc-mmap", mmap), ("jemalloc", jemalloc)):
        if measured is not None:
            seconds, status = measured
            df = _torch_at_10k(df, allocator, status, cold_s=seconds)
    assert question.mmap_against_jemalloc(df) == expected


def test_one_path_array_of_the_question():
    # (M + 1) x N float32 values, M = 52: 53 * 10,000 * 4 bytes.
    assert question.path_array_bytes() == 2_120_000
    assert formats.size(question.path_array_bytes()) == "2.0 MiB"
    assert question.path_array_bytes(1000) == 212_000


def test_tensorflows_predicted_peak_is_the_rows_else_the_models(small):
    assert question.tensorflow_predicted_peak(small) == 68_602_331_840
    df = _set(small.copy(), _tf_question(small), predicted_peak=10**12)
    assert question.tensorflow_predicted_peak(df) == 10**12
    # Without a row, the memory model: at least 3.2 cotangent batches of N path arrays of
    # 53 * N * 4 bytes, plus less than a GiB of libraries, inputs and tracing.
    batch = 3.2 * 10_000 * 2_120_000
    no_row = small.drop(_tf_question(small))
    no_value = _set(df, _tf_question(df), predicted_peak=None)
    for without in (no_row, no_value):
        assert batch < question.tensorflow_predicted_peak(without) < batch + GIB
    assert question.tensorflow_predicted_peak(small.drop(_tf_question(small)), 1000) < 2 * GIB


@pytest.mark.parametrize(
    "framework,paths,expected",
    [
        ("torch", 10_000, "memory cap (4.0 GiB)"),
        ("tensorflow", 10_000, "skipped (needs 63.9 GiB)"),
        ("torch", 1000, "351.2 ms"),  # warm median 0.351181 s
        ("tensorflow", 1000, "508.2 ms"),
        ("torch", 5000, formats.NOT_MEASURED),  # no row at this size
        ("jax", 10_000, "(no program in the question)"),
        ("numpy", 10_000, "closed form, no program"),
    ],
)
def test_the_question_program_as_written(small, framework, paths, expected):
    assert question.as_written(small, framework, paths) == expected


def test_the_fastest_strategy_follows_the_rows(small):
    # At N = 10,000: PyTorch's pathwise (8.5 ms) beats jvp (20.1 ms); JAX has pathwise only;
    # TensorFlow and numpy have no strategy row that ran.
    picks = {fw: queries.value(row, "strategy") for fw, row in question.fastest(small).items()}
    assert picks == {"torch": "pathwise", "tensorflow": None, "jax": "pathwise", "numpy": None}
    jvp = _at(small, framework="torch", strategy="jvp", paths=10_000)
    pathwise = _at(small, framework="torch", strategy="pathwise", paths=10_000)
    # The question's program is never the pick, however fast.
    df = _set(small.copy(), _torch_question(small, 10_000), status="ok", warm_median_s=1e-6)
    assert queries.best(df, "torch", 10_000)["strategy"] == "pathwise"
    # A faster jvp becomes the pick; at a tie the first in name order stays it.
    for seconds in (0.001, small.loc[pathwise, "warm_median_s"]):
        df = _set(small.copy(), jvp, warm_median_s=seconds)
        assert queries.best(df, "torch", 10_000)["strategy"] == "jvp"
    # pathwise killed at its cap: jvp is the fastest that ran.
    df = _set(small.copy(), pathwise, status="memory-cap", warm_median_s=None)
    assert queries.best(df, "torch", 10_000)["strategy"] == "jvp"
    assert all(row is None for row in question.fastest(small, 5000).values())


def test_the_question_program_where_it_finished(small):
    assert question.finished(small, "torch", 1000)["warm_median_s"] == pytest.approx(0.351181)
    assert question.finished(small, "tensorflow", 1000)["peak"] == 1_143_877_632
    assert question.finished(small, "torch", 10_000) is None  # killed at its cap
    assert question.finished(small, "torch", 5000) is None  # no row
    df = _set(small, _torch_question(small), status="timeout")
    assert question.finished(df, "torch", 1000) is None


def test_the_speedup_against_the_question_program(small):
    # PyTorch's program only ran under glibc, killed at its cap: no ratio, what stopped it.
    assert question.speedup(small, "torch") == (
        "pathwise (the question's program under glibc failed at the 4.0 GiB cap after 13.35 s)"
    )
    assert question.speedup(small, "tensorflow") == formats.NOT_MEASURED
    assert question.over_best(small) is None
    # Under glibc-mmap it finished in 60 s warm, 20 MiB beyond its inputs: PyTorch's pathwise
    # (8.502 ms, 52,314,112 bytes) is 60 / 0.008502 = 7057× faster with 2.5× the memory; JAX's
    # (9.885 ms, 68,829,184 bytes) 6070× faster with 3.3× the memory.
    df = _torch_at_10k(small, "glibc-mmap", warm_median_s=60.0, peak_over_inputs=20 * MIB)
    assert question.over_best(df) == pytest.approx(60 / 0.008502, rel=1e-3)
    assert question.speedup(df, "torch") == (
        "pathwise (7057× faster than the question's program under glibc-mmap, "
        "2.5× more memory beyond the inputs)"
    )
    assert question.speedup(df, "jax") == (
        "pathwise (6070× faster than the question's PyTorch program under glibc-mmap, "
        "3.3× more memory beyond the inputs)"
    )
    # A faster jvp (6 ms, 133,738,496 bytes) is named instead: 10000× faster, 6.4× the memory.
    _set(df, _at(df, framework="torch", strategy="jvp", paths=10_000), warm_median_s=0.006)
    assert question.speedup(df, "torch") == (
        "jvp (10000× faster than the question's program under glibc-mmap, "
        "6.4× more memory beyond the inputs)"
    )
    table = question.speedups(df)
    assert list(table["framework"]) == ["PyTorch", "PyTorch", "TensorFlow", "JAX"]
    assert list(table["fastest strategy"]) == ["jvp", "jvp", "–", "pathwise"]
    assert table["the question's program"][2] == reproduced.STANDARD_ONLY


def test_the_reproduced_table_on_the_fixture_follows_its_rows(small):
    verdict = reproduced.table(small)["verdict"]
    # First calls of 0.524 s and 1.175 s: both within 3× of a second.
    assert verdict[0] == "reproduced: both within 3× of a second"
    assert verdict[2] == (
        "differs: its memory grows until the cap stops it; the same program under the other "
        f"allocators is {reproduced.STANDARD_ONLY}"
    )
    # PyTorch's first call at 0.2 s: 5× faster than a second, no longer reproduced.
    df = _set(small, _torch_question(small), cold_s=0.2)
    assert reproduced.table(df)["verdict"][0] == "differs: PyTorch 5.0× faster"
