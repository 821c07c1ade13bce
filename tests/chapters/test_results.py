"""The All results page's table (report.chapters.results): every case, its numbers as text."""

import numpy as np
import pandas as pd
import pytest

from jacbench.report.chapters import results


@pytest.mark.parametrize(
    "x, text",
    [(1234.5, "1,230"), (123.4, "123"), (12.345, "12.3"), (0.012345, "0.0123"), (0.0, "0"),
     (-2.5, "-2.50"), (None, ""), (np.nan, "")],
)  # fmt: skip
def test_numbers_keep_three_significant_digits_without_an_exponent(x, text):
    assert results.number(x) == text


def test_a_note_names_files_not_the_paths_of_the_machine_that_ran_them():
    message = "Traceback in /home/ci/work/src/jacbench/measure/worker.py: killed"
    assert results.note(message) == "Traceback in worker.py: killed"
    assert results.note("a/b is fine and 1/2 too") == "a/b is fine and 1/2 too"
    assert results.note(pd.NA) == ""


def test_every_case_is_one_row_with_its_measurements_in_the_shown_units(small):
    table = results.table(small)
    assert len(table) == len(small)
    assert table.isna().sum().sum() == 0  # empty cells are "", which DataTables shows as blank
    row = small[(small["framework"] == "torch") & (small["strategy"] == "jvp")
                & (small["paths"] == 1000)].iloc[0]  # fmt: skip
    shown = table.loc[row.name]
    assert shown["N (paths)"] == "1,000" and shown["n (inputs)"] == ""
    assert shown["warm median (ms)"] == results.number(row["warm_median_s"] * 1000)
    assert shown["peak (MiB)"] == results.number(row["peak"] / 2**20)
    assert shown["max rel. error"] == f"{row['max_rel_error']:.1e}"


def test_a_case_that_did_not_finish_shows_its_status_and_no_time(small):
    table = results.table(small)
    capped = small.index[(small["status"] == "memory-cap")][0]
    assert table.loc[capped, "status"] == "memory-cap"
    assert table.loc[capped, "warm median (ms)"] == ""


def test_the_rows_follow_the_data(small):
    """Sorted by problem, framework, strategy and size; a changed time shows changed."""
    table = results.table(small)
    keys = list(zip(table["problem"], table["framework"], table["strategy"], strict=True))
    assert keys == sorted(keys)
    faster = small.copy()
    i = faster.index[(faster["framework"] == "jax") & (faster["strategy"] == "jvp")][0]
    faster.loc[i, "warm_median_s"] = 0.5
    assert results.table(faster).loc[i, "warm median (ms)"] == "500"


def test_two_cases_that_differ_in_their_cap_alone_are_told_apart(small):
    """The question's TensorFlow program at 8 and at 16 GiB: the same spec but for the cap."""
    table = results.table(small)
    assert table["memory cap (GiB)"].str.fullmatch(r"\d+(\.\d+)?|").all()
    row = small.index[0]
    one = small.loc[[row]]
    capped = pd.concat([one.assign(mem_cap=8 * 2**30), one.assign(mem_cap=16 * 2**30)])
    shown = results.table(capped)
    assert list(shown["memory cap (GiB)"]) == ["8", "16"]
    rest = shown.drop(columns=["memory cap (GiB)"])
    assert rest.iloc[0].equals(rest.iloc[1])
