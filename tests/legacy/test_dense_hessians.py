"""What to use (chapter 6), dense Hessians: where one first did not finish, whether the matrices
would have fitted, and each method's readings (what it held, what stopped it), on the fixture's
one dense method (JAX's hessian: ok at n = 1,000, skipped at 100,000) and on rows built from it."""

import pandas as pd
import pytest

from jacbench.report import formats
from jacbench.report.legacy import dense_hessians as dh

NM = formats.NOT_MEASURED
GIB = 2**30


def method_rows(small, sizes):
    """JAX's hessian at each (n, status, peak beyond the inputs, memory before the first call,
    memory cap), built from the fixture's row at n = 1,000."""
    (index,) = small.index[(small["strategy"] == "second:hessian") & (small["inputs"] == 1000)]
    rows = []
    for n, status, peak_over, before, cap in sizes:
        row = small.loc[index].copy()
        row["inputs"], row["status"], row["peak_over_inputs"] = n, status, peak_over
        row["cold_rss_before"], row["mem_cap"] = before, cap
        rows.append(row)
    return pd.DataFrame(rows).reset_index(drop=True)


def ok_of(rows):
    return rows[rows["status"] == "ok"]


def test_one_hessian_is_n_squared_float32_numbers():
    assert dh.hessian_bytes(1000) == 4_000_000
    assert dh.hessian_bytes(10_000) == 400_000_000


def test_what_a_method_held_from_two_sizes_at_least_twice_apart(small):
    # One output's Hessian: 4e6 B at n = 1,000, 3.6e7 B at 3,000; the peak grew by ten of them.
    rows = method_rows(small, [(1000, "ok", 80e6, 2e8, 8 * GIB),
                               (3000, "ok", 80e6 + 10 * 32e6, 2e8, 8 * GIB)])  # fmt: skip
    assert dh.held(ok_of(rows)) == (
        "grew by the equivalent of 10.0 n × n arrays from n = 1,000 to 3,000"
    )
    assert dh.counted(ok_of(rows))


def test_growth_below_the_three_hessians_says_what_else_fell(small):
    # JAX's hessian on the reference: 72,060,928 B beyond the inputs at n = 1,000 (its three
    # Hessians 12e6 B), 159,723,520 B at 3,000 (108e6 B): grew by 87.66e6 / 32e6 = 2.74 arrays,
    # fewer than the three it returns, because the rest fell from 60.06e6 B (57.3 MiB) to
    # 51.72e6 B (49.3 MiB).
    rows = method_rows(small, [(1000, "ok", 72_060_928, 2e8, 8 * GIB),
                               (3000, "ok", 159_723_520, 2e8, 8 * GIB)])  # fmt: skip
    assert dh.held(ok_of(rows)) == (
        "grew by the equivalent of 2.7 n × n arrays from n = 1,000 to 3,000; what it held "
        "besides its three Hessians fell, from 57.3 MiB to 49.3 MiB"
    )
    # The rest held steady (60.06e6 B at both): the growth is the three Hessians, no note.
    steady = method_rows(small, [(1000, "ok", 72_060_928, 2e8, 8 * GIB),
                                 (3000, "ok", 60_060_928 + 108e6, 2e8, 8 * GIB)])  # fmt: skip
    assert dh.held(ok_of(steady)) == (
        "grew by the equivalent of 3.0 n × n arrays from n = 1,000 to 3,000"
    )


def test_two_sizes_too_close_or_one_size_read_the_peak(small):
    close = method_rows(small, [(1000, "ok", 80e6, 2e8, 8 * GIB),
                                (1500, "ok", 100 * 2**20, 2e8, 8 * GIB)])  # fmt: skip
    assert dh.held(ok_of(close)) == "100.0 MiB beyond the inputs at n = 1,500"
    assert not dh.counted(ok_of(close))
    one = method_rows(small, [(1000, "ok", 80 * 2**20, 2e8, 8 * GIB)])
    assert dh.held(ok_of(one)) == "80.0 MiB beyond the inputs at n = 1,000"
    assert dh.held(ok_of(one).iloc[0:0]) == NM


def test_what_stopped_a_method_above_its_largest_finished_size(small):
    rows = method_rows(small, [(1000, "ok", 80e6, 1e8, 8 * GIB),
                               (3000, "ok", 400e6, 2e8, 8 * GIB),
                               (10_000, "memory-cap", None, None, 8 * GIB)])  # fmt: skip
    # The cap less what the process held before its first call at n = 3,000, in one output's
    # Hessians at n = 10,000: (8 GiB - 2e8) / 4e8 = 20.97.
    assert dh.stopped_at(rows, ok_of(rows)) == (
        "memory cap (8.0 GiB) at n = 10,000, over 20 n × n arrays"
    )
    assert dh.stopped_at(rows.iloc[:2], ok_of(rows.iloc[:2])) == "–"
    # A failure below the largest finished size did not stop it.
    below = method_rows(small, [(1000, "memory-cap", None, None, 8 * GIB),
                                (3000, "ok", 400e6, 2e8, 8 * GIB)])  # fmt: skip
    assert dh.stopped_at(below, ok_of(below)) == "–"


def test_the_fixtures_method_stopped_by_a_skip(small):
    table = dh.dense_methods(small)
    assert table.to_dict("records") == [
        {
            "method": "hessian",
            "framework": "JAX",
            "how it builds the Hessian": (
                "jacfwd over jacrev under jit: the n × n identity as tangents, fused by XLA"
            ),
            "what it held": "80.1 MiB beyond the inputs at n = 1,000",  # 83,980,288 B
            "what stopped it": "skipped (needs 119.4 GiB) at n = 100,000",  # 1.28e11 B predicted
        }
    ]


def test_where_the_hessians_themselves_exceed_the_cap(small):
    # At n = 100,000 one Hessian is 4e10 B (37.3 GiB), three 111.8 GiB, over the 4 GiB cap.
    assert dh.dense_limit(small) == (
        "Dense Hessians first failed to finish at n = 100,000, where one "
        "output's Hessian is 37.3 GiB in float32, all three 111.8 GiB, and "
        "the memory cap was 4.0 GiB."
    )
    assert dh.dense_verdict(small) == (
        "There the Hessians themselves exceed the cap; at smaller n, what limits the methods is "
        "what they build on the way, n × n arrays that fixed costs hide at the one size each "
        "method finished here."
    )


def built(small, stop=True):
    """The fixture's dense rows replaced by one method finished at n = 1,000 and 3,000 and,
    where stop, stopped at the 8 GiB cap at 10,000."""
    sizes = [(1000, "ok", 80e6, 2e8, 8 * GIB), (3000, "ok", 400e6, 2e8, 8 * GIB)]
    sizes += [(10_000, "memory-cap", None, None, 8 * GIB)] if stop else []
    others = small[small["strategy"] != "second:hessian"]
    return pd.concat([others, method_rows(small, sizes)], ignore_index=True)


def test_where_the_hessians_would_fit_but_the_methods_did_not(small):
    # At n = 10,000 one Hessian is 4e8 B (381.5 MiB), three 1.1 GiB, under the 8 GiB cap.
    df = built(small)
    assert dh.dense_limit(df) == (
        "Dense Hessians first failed to finish at n = 10,000, where one "
        "output's Hessian is 381.5 MiB in float32, all three 1.1 GiB, and "
        "the memory cap was 8.0 GiB."
    )
    assert dh.dense_verdict(df) == (
        "The three Hessians would fit under that cap; what does not fit is what the methods "
        "build on the way: several n × n arrays per method."
    )
    assert dh.dense_methods(df).iloc[0]["what it held"] == (
        "grew by the equivalent of 10.0 n × n arrays from n = 1,000 to 3,000"
    )


def test_where_every_method_finished_or_none_ran(small):
    df = built(small, stop=False)
    assert dh.dense_limit(df) == (
        "Every dense Hessian method of this build finished at every size tried, up to n = 3,000."
    )
    assert dh.dense_verdict(df) == (
        "What grows with n is what the methods build on the way: several n × n arrays per method."
    )
    none = small[small["strategy"] != "second:hessian"]
    assert dh.dense_limit(none) == f"Dense Hessians are {NM}."
    assert dh.dense_verdict(none) == "What the methods build on the way is therefore unknown here."
    assert dh.dense_methods(none).empty


def test_growth_that_does_not_carry_to_the_size_that_stopped(small):
    # 80e6 + 0.9 * 32e6 at 3,000 (0.9 arrays grown), stopped above 20 arrays at 10,000.
    rows = method_rows(small, [(1000, "ok", 80e6, 1e8, 8 * GIB),
                               (3000, "ok", 80e6 + 0.9 * 32e6, 2e8, 8 * GIB),
                               (10_000, "memory-cap", None, None, 8 * GIB)])  # fmt: skip
    others = small[small["strategy"] != "second:hessian"]
    df = pd.concat([others, rows], ignore_index=True)
    said = dh.outgrown(df)
    assert said.startswith(
        "Growth at small n does not always carry to larger n: JAX's hessian "
        "grew by the equivalent of 0.9 n × n arrays from n = 1,000 to 3,000 yet needed more "
        "than 20 at n = 10,000."
    )
    assert dh.arrays_grown(ok_of(rows)) == (pytest.approx(0.9), 1000, 3000)
    assert dh.arrays_over(rows, ok_of(rows)) == (10_000, 20)
    # Growth of ten arrays against the 20 the cap held: within reach, nothing said.
    steady = method_rows(small, [(1000, "ok", 80e6, 1e8, 8 * GIB),
                                 (3000, "ok", 80e6 + 10 * 32e6, 2e8, 8 * GIB),
                                 (10_000, "memory-cap", None, None, 8 * GIB)])  # fmt: skip
    assert dh.outgrown(pd.concat([others, steady], ignore_index=True)) == ""
    assert dh.outgrown(small) == ""  # skipped, not capped
