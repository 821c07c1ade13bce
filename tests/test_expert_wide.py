"""The wide chapter's readings of the results: warm ratios and the crossover's two sides."""

import pandas as pd

from jacbench.report import formats
from jacbench.report.chapters import wide as expert


def _row(status="ok", warm=1.0):
    return pd.Series({"status": status, "warm_median_s": warm})


def test_warm_ratio_divides_warm_times_and_says_when_a_row_is_missing():
    assert expert.warm_ratio(_row(warm=3.0), _row(warm=1.5)) == "2.0×"
    assert expert.warm_ratio(_row(warm=1.0), _row(warm=4.0)) == "0.2×"
    assert expert.warm_ratio(None, _row()) == formats.NOT_MEASURED
    assert expert.warm_ratio(_row(status="memory-cap", warm=float("nan")), _row()) == (
        formats.NOT_MEASURED
    )


def _shapes(times, status="ok"):
    return [
        {"outputs": m, "inputs": n, "mode": mode, "warm_median_s": t, "status": status}
        for (m, n), (fwd, rev) in times.items()
        for mode, t in (("forward", fwd), ("reverse", rev))
    ]


def test_crossover_sides_count_each_side_of_the_square_shape():
    times = {(64, 1): (1.0, 9.0), (16, 4): (2.0, 1.0), (8, 8): (1.0, 1.0),
             (4, 16): (3.0, 1.0), (1, 64): (5.0, 1.0)}  # fmt: skip
    text = expert.crossover_sides(_shapes(times))
    assert text == (
        "reverse mode is faster at 2 of the 2 wide shapes (m < n), "
        "forward mode at 1 of the 2 tall ones (m > n)"
    )
    assert expert.crossover_sides(_shapes(times, status="timeout")) == formats.NOT_MEASURED
    assert expert.crossover_sides([]) == formats.NOT_MEASURED
