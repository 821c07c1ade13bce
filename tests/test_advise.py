"""jacbench advise on functions the project never saw: checks, refusals, the pick and its code.

Each scenario writes a reader's module into a temporary folder and runs the advice on it at small
sizes (a few workers each). What is asserted is what the advice decides from what it measured
(which strategies passed, which were refused and why, that the pick is the fastest it measured,
that the printed code computes the closed form), never how fast this machine is.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from jacbench import advise
from jacbench.advise import fit
from jacbench.advise.run import Request
from jacbench.cli import main
from jacbench.report.advice import Advice, Fitted, Row, Strategy

TORCH_MODULE = '''
import torch


def lognormal(theta, z):
    """One payoff per path: a smooth call on a one-step lognormal."""
    s0, vol = theta[0], theta[1]
    x = s0 * torch.exp(-0.5 * vol**2 + vol * z)
    return torch.nn.functional.softplus(x - 100.0) + 0.05 * x


def example(n):
    g = torch.Generator().manual_seed(7)
    return torch.tensor([100.0, 0.25]), torch.randn(n, generator=g)


def demeaned(theta, z):
    """Coupled rows: every output subtracts the mean of all paths."""
    x = theta[0] * torch.exp(theta[1] * z)
    return x - x.mean()


def wide(theta, w):
    """Few outputs, many inputs: tanh(W theta), W of 4 rows."""
    return torch.tanh(w @ theta)


def wide_example(n):
    g = torch.Generator().manual_seed(3)
    return torch.randn(n, generator=g) / n**0.5, torch.randn(4, n, generator=g)


def energy(theta, a):
    """One output: 0.5 theta'A theta + sum(cos theta)."""
    return 0.5 * theta @ (a @ theta) + torch.cos(theta).sum()


def energy_example(n):
    g = torch.Generator().manual_seed(5)
    b = torch.randn(n, n, generator=g, dtype=torch.float64)
    return torch.randn(n, generator=g, dtype=torch.float64), (b + b.T) / n


def features(theta, data):
    """One output from (n, 4096) features: memory in proportion to n, one backward pass."""
    z, w = data
    return torch.tanh(z[:, None] * w[None, :] * theta[0] + theta[1]).sum().reshape(1)


def features_example(n):
    g = torch.Generator().manual_seed(13)
    return torch.tensor([0.5, 0.1]), (torch.randn(n, generator=g), torch.randn(4096, generator=g))


def random_inside(theta, z):
    return theta[0] * torch.randn(z.shape[0])


def listy(theta, z):
    return [1.0, 2.0]


def infinite(theta, z):
    return theta[0] * z / 0.0


def not_a_pair(n):
    return torch.ones(3)


def square_theta(n):
    return torch.ones(2, 2), torch.randn(n)


def unseeded(n):
    return torch.tensor([100.0, 0.25]), torch.randn(n)


def raises(theta, z):
    raise ValueError("the model is not calibrated")


def raising_factory(n):
    raise RuntimeError("no market data")


def integer_theta(n):
    return torch.tensor([100, 1]), torch.randn(n)


def nan_derivative(theta, z):
    """Finite values, NaN derivatives: sqrt's derivative at 0 times a zero tangent."""
    return torch.sqrt(theta[0] * 0.0) + z


def down_and_out(theta, z):
    """A down-and-out call on 12 steps: a barrier at 90, a strike at 100."""
    s0, vol = theta[0], theta[1]
    steps = z.shape[1]
    paths = s0 * torch.exp(torch.cumsum(-0.5 * vol**2 / steps + vol * z / steps**0.5, dim=1))
    alive = (paths.min(dim=1).values > 90.0).to(paths.dtype)
    return alive * torch.clamp(paths[:, -1] - 100.0, min=0.0)


def heavy(theta, z):
    """One output per row from 256 columns of work each: calls above a millisecond from 2,000
    rows."""
    x = theta[0] * torch.exp(theta[1] * z)
    return torch.tanh(x / 100.0).mean(dim=1) * theta[0]


def heavy_example(n):
    g = torch.Generator().manual_seed(19)
    return torch.tensor([100.0, 0.25]), torch.randn(n, 256, generator=g)


def busy(theta, z):
    """Work without memory: 24 rounds of arithmetic on 8 columns a row, so that a call passes
    the 1 ms floor while the data stays far below glibc's 32 MiB threshold, 10x further on."""
    x = z * theta[1]
    for _ in range(24):
        x = x + 0.01 * theta[0] * torch.sin(x)
    return x.mean(dim=1) * theta[0]


def busy_example(n):
    g = torch.Generator().manual_seed(23)
    return torch.tensor([100.0, 0.25]), torch.randn(n, 8, generator=g)


def barrier_example(n):
    g = torch.Generator().manual_seed(17)
    return torch.tensor([100.0, 0.25]), torch.randn(n, 12, generator=g)
'''


@pytest.fixture(scope="module")
def reader(tmp_path_factory) -> Path:
    """A reader's folder holding their module (torch)."""
    folder = tmp_path_factory.mktemp("reader")
    (folder / "mine.py").write_text(textwrap.dedent(TORCH_MODULE))
    return folder


# Each worker makes its fewest calls (3 warm calls in the least budget): these tests read what
# advise decides from the rows, not how precisely they are timed.
FEWEST = {"repeats": 3, "warm_budget_s": 0.05}


def _advise(reader: Path, out: Path, function: str, factory: str = "example", **kw) -> Advice:
    req = Request(f"{reader}/mine.py:{function}", f"{reader}/mine.py:{factory}", threads=1,
                  **{**FEWEST, **kw})  # fmt: skip
    return advise.advise(req, out, progress=lambda line: None)


def _strategy(advice: Advice, name: str) -> Strategy:
    return advice.strategy(name)


def _assert_the_fastest_is_picked_or_tied(advice: Advice) -> None:
    """The strategy measured fastest at the largest size is the pick, or the advice names it
    as not told apart from the pick; the pick is the fastest by what ranked it (its prediction,
    or, where a prediction is flagged, its median at the largest size)."""
    ok = [s for s in advice.strategies if s.status == "ok"]
    largest = {s.name: s.rows[-1].warm_median_s for s in ok}
    fastest = min(largest, key=largest.get)
    pick = advice.pick
    assert fastest == pick.strategy or fastest in pick.tied, (fastest, pick)
    by = largest if pick.basis == "measured" else {s.name: s.predicted_s for s in ok}
    assert pick.strategy == min(by, key=by.get)


def _closed_lognormal(theta: np.ndarray, z: np.ndarray) -> np.ndarray:
    s0, vol = theta
    x = s0 * np.exp(-0.5 * vol**2 + vol * z)
    slope = 1 / (1 + np.exp(-(x - 100.0))) + 0.05
    return np.stack([slope * x / s0, slope * x * (z - vol)], axis=1)


# --- the fit and the pick, on numbers written here ------------------------------------------


def test_power_law_recovers_exponent_and_spread():
    ns = [1e3, 1e4, 1e5]
    exact = fit.power_law(ns, [2e-3 * (n / 1e3) ** 1.5 for n in ns])
    assert exact.exponent == pytest.approx(1.5)
    assert exact.at(1e6) == pytest.approx(2e-3 * 1e3**1.5)
    assert exact.spread == pytest.approx(1.0)
    noisy = fit.power_law(ns, [1.0, 12.0, 95.0])
    assert noisy.spread > 1.0
    two = fit.power_law([1e3, 1e4], [1.0, 10.0], spreads=[1.1, 1.3])
    assert two.exponent == pytest.approx(1.0) and two.spread == 1.3
    # Slower than n: a fixed cost plus a part in proportion to n, not a power below 1.
    overhead = fit.power_law([1e3, 1e4], [5 + 1e-3 * 1e3, 5 + 1e-3 * 1e4])
    assert overhead.fixed == pytest.approx(5.0) and overhead.at(1e5) == pytest.approx(105.0)
    one = fit.power_law([1e3], [2.0])
    assert one.at(1e4) == pytest.approx(20.0) and math.isinf(one.spread)


def _prediction(name, warm, peak=1e6, low=None, high=None, cold=None, flags=(), measured=None,
                spread=(None, None)):  # fmt: skip
    """A prediction written by hand: warm time with its interval, and the warm median at the
    largest size with its fastest and slowest calls."""
    at = warm if measured is None else measured
    lo, hi = spread
    return fit.Prediction(name, warm, cold or warm, peak, 1.0, 1.0, {}, at,
                          warm if low is None else low, warm if high is None else high,
                          at if lo is None else lo, at if hi is None else hi, cold or warm, 1000,
                          tuple(flags))  # fmt: skip


def test_pick_is_fastest_that_fits_and_names_those_whose_intervals_meet():
    a = _prediction("a", 1.0, low=0.8, high=1.25)
    b = _prediction("b", 1.1, low=0.9, high=1.3)  # meets a's interval: tied
    c = _prediction("c", 3.0, low=2.5, high=3.5)  # starts above a's end: behind
    chosen = fit.pick([c, b, a], mem_cap=1e9)
    assert (chosen.strategy, chosen.tied, chosen.basis) == ("a", ("b",), "predicted")
    big = _prediction("fast-but-big", 0.1, peak=2e9)
    chosen = fit.pick([big, a, c], mem_cap=1e9)
    assert chosen.strategy == "a" and "fast-but-big" in chosen.excluded
    assert fit.pick([big], mem_cap=1e9) is None


def test_a_flagged_prediction_makes_the_pick_from_the_largest_size_measured():
    # b is predicted faster, but from a fit 20x past the data; at the largest size a is faster
    # and its slowest call is below b's fastest: a is the pick, by what was measured.
    a = _prediction("a", 5.0, measured=0.10, spread=(0.09, 0.11))
    b = _prediction("b", 1.0, measured=0.30, spread=(0.25, 0.35), flags=("far",))
    chosen = fit.pick([a, b], mem_cap=1e9, floor=1e-3)
    assert (chosen.strategy, chosen.tied, chosen.basis) == ("a", (), "measured")
    # Calls that overlap are a tie; both under the floor, a tie whatever the factor.
    c = _prediction("c", 1.0, measured=0.13, spread=(0.105, 0.2), flags=("far",))
    assert fit.pick([a, c], mem_cap=1e9, floor=1e-3).tied == ("c",)
    tiny = [
        _prediction(n, 1.0, measured=t, flags=("floor",)) for n, t in (("x", 1e-4), ("y", 5e-4))
    ]
    assert fit.pick(tiny, mem_cap=1e9, floor=1e-3).tied == ("y",)
    assert fit.pick(tiny, mem_cap=1e9, floor=1e-5).tied == ()


def test_a_disturbance_both_felt_does_not_tie_two_strategies_apart():
    # b takes 3x a's time at every size, but each size was disturbed alike (x1, x1.6, x1.1,
    # x1.7): each fit alone has intervals that meet at 10x the data; their quotient does not
    # move, and its interval (paired) starts far above 1.
    ns = [10_000, 22_000, 46_000, 100_000]
    disturbed = [1.0, 1.6, 1.1, 1.7]

    def rows(scale):
        return [Row(n=n, status="ok", warm_median_s=scale * n * 1e-7 * d,
                    warm_min_s=scale * n * 1e-7 * d, warm_max_s=scale * n * 1e-7 * d * 1.02,
                    cold_s=1.0, peak_bytes=2**22)
                for n, d in zip(ns, disturbed, strict=True)]  # fmt: skip

    a, b = fit.predict("a", rows(1.0), 10**6, 1e-3), fit.predict("b", rows(3.0), 10**6, 1e-3)
    assert a.high_s > b.low_s  # alone, their intervals meet
    quotient, low, high = fit.paired(a, b, 10**6)
    assert quotient == pytest.approx(3.0) and low > 2.9 and high < 3.1
    assert fit.pick([a, b], 1e9, 1e-3, target=10**6).tied == ()
    assert fit.pick([a, b], 1e9, 1e-3).tied == ("b",)  # unpaired: a tie


def test_equal_times_are_ordered_by_name_not_by_position():
    a, b = _prediction("alpha", 1.0), _prediction("beta", 1.0)
    assert fit.pick([b, a], mem_cap=1e9).strategy == "alpha"
    assert fit.pick([a, b], mem_cap=1e9).strategy == "alpha"


def test_one_call_pick_reads_first_calls():
    compiled = _prediction("compiled", 1.0, cold=20.0)
    eager = _prediction("eager", 3.0, low=2.9, high=3.1, cold=3.5)
    chosen = fit.pick([compiled, eager], mem_cap=1e9)
    assert chosen.strategy == "compiled" and chosen.one_call == "eager"


def test_flags_say_why_a_prediction_is_not_trusted():
    assert fit.flags([1e3, 1e4, 1e5], [0.01, 0.1, 1.0], 1e6, 1e-3) == ()
    assert fit.flags([1e3, 1e4, 1e5], [0.01, 0.1, 1.0], 2e6, 1e-3) == ("far",)
    assert fit.flags([1e3, 1e4, 1e5], [5e-4, 0.1, 1.0], 1e5, 1e-3) == ("floor",)
    assert fit.flags([1e3, 1e4, 1e5], [0.05, 0.02, 0.01], 1e5, 1e-3) == ("falling",)
    # A dip in the middle (JAX's jacfwd on Heston: 34.1 ms at 20,000, 29.0 ms at 44,000) is a
    # fall where the later median is below the earlier size's fastest call, not within its calls.
    ns4 = [1e4, 2e4, 4.4e4, 1e5]
    dip = fit.flags(
        ns4, [0.012, 0.0341, 0.029, 0.134], 1e6, 1e-3, None, [0.011, 0.0333, 0.0288, 0.08]
    )
    assert dip == ("falling",)
    assert fit.flags(ns4, [0.012, 0.0341, 0.0335, 0.134], 1e6, 1e-3, None,
                     [0.011, 0.0333, 0.0320, 0.08]) == ()  # fmt: skip
    assert fit.flags([1e3, 1e4], [0.01, 0.1], 1e4, 1e-3) == ("few",)
    # 208 bytes a path (52 float32 normals): 20.8 MB at 10^5 is under glibc's 32 MiB mmap
    # threshold, 208 MB at 10^6 above it.
    ns, warm = [1e4, 3e4, 1e5], [0.01, 0.03, 0.1]
    assert fit.flags(ns, warm, 1e6, 1e-3, bytes_per_n=208) == ("mmap",)
    assert fit.flags(ns, warm, 1e5, 1e-3, bytes_per_n=208) == ()
    assert fit.flags([2e5, 5e5, 1e6], warm, 2e6, 1e-3, bytes_per_n=208) == ()  # above at both


def test_the_prediction_interval_holds_at_ten_times_the_data():
    # A power law with log-normal noise (sd 0.1) at 4 sizes over a decade, predicted at 10x the
    # largest: the 95% interval holds the true value in at least 93% of 1,000 draws (96% here),
    # and its centre is within 2x. A constant width (no distance from the sizes measured) holds
    # it in 86%, the normal's 1.96 in place of Student's t in 84%: both fail.
    rng = np.random.default_rng(7)
    ns = np.geomspace(1e4, 1e5, 4)
    truth = 3e-7 * 1e6**1.2
    held, within_2x = 0, 0
    for _ in range(1000):
        f = fit.power_law(ns, 3e-7 * ns**1.2 * np.exp(rng.normal(0, 0.1, ns.size)))
        low, high = f.interval(1e6)
        held += low <= truth <= high
        within_2x += 0.5 <= f.at(1e6) / truth <= 2
        assert f.slope_low < f.slope < f.slope_high
    assert held / 1000 >= 0.93
    assert within_2x / 1000 >= 0.95
    # The calls' own spread widens it: never narrower than without.
    wider = fit.power_law(ns, 3e-7 * ns**1.2, spreads=[1.2] * 4)
    assert wider.interval(1e6)[1] > fit.power_law(ns, 3e-7 * ns**1.2).interval(1e6)[1]


def test_the_exponent_interval_holds_the_true_exponent():
    # 95% intervals hold it in at least 93% of 1,000 draws at 4 sizes; with the normal's 1.96 in
    # place of Student's t they fail.
    rng = np.random.default_rng(11)
    ns = np.geomspace(1e3, 1e5, 4)
    held = 0
    for _ in range(1000):
        f = fit.power_law(ns, 1e-6 * ns**1.5 * np.exp(rng.normal(0, 0.08, ns.size)))
        held += f.slope_low <= 1.5 <= f.slope_high
    assert held / 1000 >= 0.93


def test_a_fit_survives_its_json():
    f = fit.power_law([1e3, 1e4, 1e5], [1.0, 12.0, 95.0], spreads=[1.1, 1.1, 1.2])
    back = fit.Fit.from_fitted(Fitted.from_json(f.fitted().to_json()))
    assert back.interval(1e6) == pytest.approx(f.interval(1e6))
    assert back.at(1e6) == pytest.approx(f.at(1e6))


def test_measured_again_the_pick_follows_the_workers_medians():
    def rows(*medians):
        return [Row(n=10**5, status="ok", warm_median_s=m) for m in medians]

    found = fit.checked({"a": rows(0.30, 0.31, 0.29), "b": rows(0.20, 0.21, 0.22),
                         "c": rows(0.25, 0.19, 0.26)}, floor=1e-3)  # fmt: skip
    assert found.strategy == "b" and found.tied == ("c",)
    assert found.strategies["b"].median_s == pytest.approx(0.21)
    failed = fit.checked({"a": [Row(n=10**5, status="timeout")], "b": rows(0.5)})
    assert failed.strategy == "b" and "a" not in failed.strategies


def test_a_strategy_too_slow_for_the_next_size_is_not_run():
    from jacbench.advise.run import _too_slow

    rows = [Row(n=1000, status="ok", warm_median_s=2.0, cold_s=3.0)]
    # Growing as n, 4 calls of 20 s and a first call of 3 s: 83 s, within 120 s.
    assert _too_slow(rows, 10_000, timeout=120) is None
    # Growing as n^2 (reverse mode over one output per row), 4 calls of 200 s: past it.
    why = _too_slow(rows, 10_000, timeout=120, growth=2.0)
    assert "n^2" in why and "past the 120 s limit" in why
    assert _too_slow([Row(n=1000, status="error")], 10_000, timeout=1) is None


def test_a_framework_that_cannot_allocate_is_a_memory_failure():
    from jacbench.advise.run import _status

    row = Row(n=5000, status="error", message="RESOURCE_EXHAUSTED: Out of memory\nmore")
    assert _status(row, 1e-4) == ("memory-cap", "at n=5,000: RESOURCE_EXHAUSTED: Out of memory")
    assert _status(Row(n=5, status="error", message="ValueError: x"), 1e-4)[0] == "error"
    wrong = Row(n=5, status="ok", max_rel_error=1e-2)
    assert _status(wrong, 1e-4)[0] == "wrong"


def _written_advice(overhead: bool = False) -> Advice:
    """An advice as advise writes it, by hand: two strategies at two sizes, the function."""

    def row(n, t):
        return {"n": n, "status": "ok", "warm_median_s": t, "warm_min_s": t * 0.9,
                "warm_max_s": t * 1.1, "cold_s": 2 * t, "peak_bytes": 2**20 * n // 1000,
                "evaluations": t / (n * 1e-7)}  # fmt: skip

    def strategy(name, t):
        return {"name": name, "mode": "forward", "status": "ok", "reason": "",
                "rows": [row(1000, t), row(10_000, 10 * t)], "predicted_s": 100 * t,
                "predicted_interval_s": [50 * t, 200 * t], "predicted_cold_s": 4 * t,
                "predicted_peak_bytes": 2**27, "exponent": 1.0, "exponent_interval": [0.9, 1.1],
                "flags": []}  # fmt: skip

    pick = {"strategy": "fast", "tied": [], "predicted_s": 0.1, "predicted_peak_bytes": 2**27,
            "why": "fastest predicted warm call", "one_call": "fast", "one_call_tied": [],
            "one_call_differs": False, "basis": "predicted"}  # fmt: skip
    if overhead:
        pick["overhead"] = True
    return Advice.from_json({
            "function": "mine.py:f", "framework": "torch", "inputs": 2, "outputs": 100_000,
            "sizes": [1000, 10_000], "target": 100_000, "strategies": [strategy("fast", 1e-3),
            strategy("slow", 1e-2)], "pick": pick,
            "rule": {"level": 0.95, "floor_s": 1e-3, "far": 10.0, "margin": 1.0},
            "baseline": {"status": "ok", "rows": [{"n": 1000, "status": "ok",
                         "warm_median_s": 1e-4}, {"n": 10_000, "status": "ok",
                         "warm_median_s": 1e-3}]},
            "check": {"reference": "functional-loop", "fd_status": "ok", "fd_error": 1e-8,
                      "fd_agree": 1.0}, "mem_cap_bytes": 2**33})  # fmt: skip


def test_the_printed_table_and_summary_say_what_was_decided():
    advice = _written_advice()
    table = advise.output.table(advice).splitlines()
    head = table[0].split()
    assert head[:5] == ["strategy", "mode", "status", "n=1,000", "n=10,000"]
    assert table[2].startswith("the function itself") and "1.0 ms" in table[2]
    fast = next(line for line in table if line.startswith("fast"))
    assert fast.endswith("<- pick") and "100.0 ms (50.0 ms–200.0 ms)" in fast
    assert "1.00 (0.90–1.10)" in fast and " 10 " in fast  # 10 ms over the function's 1 ms
    summary = advise.output.summary(advice)
    assert "pick at n=100,000: fast, predicted 100.0 ms (50.0 ms–200.0 ms)" in summary
    assert "overhead" not in summary
    assert "overhead, and the prediction is a lower bound" in advise.output.summary(
        _written_advice(overhead=True)
    )


def test_sizes_grow_until_the_function_takes_the_floor():
    from jacbench.advise.sizes import auto_sizes

    # 0.1 ms at 1,000: the floor (1 ms) from 10,000, five sizes over a decade.
    sizes, note = auto_sizes(1000, 1e-4, timeout=120, floor=1e-3)
    assert sizes[0] == 10_000 and sizes[-1] == 100_000 and len(sizes) == 5 and note == ""
    # Already above the floor: from the probe's size. A target far off: on to its tenth.
    sizes, _ = auto_sizes(1000, 5e-3, timeout=120, floor=1e-3, target=10**6)
    assert sizes[0] == 1000 and sizes[-1] == 100_000 and len(sizes) == 6
    # The budget (120 s / 200 a call) stops the sizes where the function takes 0.6 s, and says so.
    sizes, note = auto_sizes(1000, 0.1, timeout=120, floor=1e-3, target=10**7)
    assert sizes[-1] == 6000 and "stop at 6,000" in note
    # A function of 2 s at 1,000: the sizes end below it, at 300 (0.6 s a call).
    assert auto_sizes(1000, 2.0, timeout=120, floor=1e-3)[0] == (30, 53, 95, 170, 300)
    sizes, note = auto_sizes(1000, 1e-6, timeout=0.2, floor=1e-3)
    assert "floor" in note


def test_sizes_start_past_the_mmap_threshold_the_target_passes():
    from jacbench.advise.sizes import auto_sizes
    from jacbench.measure.heap import MMAP_THRESHOLD

    # 400 bytes a row: the largest array reaches 32 MiB at 83,886 rows, on the way to 10^6.
    sizes, note = auto_sizes(1000, 2e-3, timeout=120, floor=1e-3, target=10**6, bytes_per_n=400)
    assert 400 * sizes[0] > MMAP_THRESHOLD and sizes[-1] <= 10**6 / 2 and len(sizes) >= 3
    assert "mmap threshold" in note
    # 20 bytes a row stay under it at 10^6: the sizes are those of a function without data.
    plain, _ = auto_sizes(1000, 2e-3, timeout=120, floor=1e-3, target=10**6)
    assert auto_sizes(1000, 2e-3, timeout=120, floor=1e-3, target=10**6, bytes_per_n=20) == (
        plain,
        "",
    )
    # 4,000 bytes a row pass it at 8,389 rows; a decade from there would pass the target, which
    # is predicted from half of it; at 30,000, that would leave less than 2x: on to the target.
    sizes, _ = auto_sizes(1000, 2e-4, timeout=120, floor=1e-3, target=50_000, bytes_per_n=4000)
    assert 4000 * sizes[0] > MMAP_THRESHOLD and sizes[-1] == 25_000
    sizes, _ = auto_sizes(1000, 2e-4, timeout=120, floor=1e-3, target=30_000, bytes_per_n=4000)
    assert 4000 * sizes[0] > MMAP_THRESHOLD and sizes[-1] == 30_000
    # A target under the threshold: nothing moves.
    assert auto_sizes(1000, 2e-3, 120, 1e-3, target=50_000, bytes_per_n=400)[0][0] == 1000
    # Past the budget (0.6 s a call from 30,000 rows): the sizes stay below and the note says so.
    sizes, note = auto_sizes(1000, 2e-2, timeout=120, floor=1e-3, target=10**6, bytes_per_n=400)
    assert 400 * sizes[-1] < MMAP_THRESHOLD and "crosses it" in note


# --- the advice on a reader's functions -------------------------------------------------------


@pytest.fixture(scope="module")
def tall_out(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("tall")


@pytest.fixture(scope="module")
def tall(reader, tall_out) -> Advice:
    strategies = ("functional-loop", "jacrev", "jacfwd", "per-row")
    return _advise(reader, tall_out, "lognormal", sizes=(200, 400), strategies=strategies)


@pytest.mark.slow  # advise's worker processes: 5 to 50 s
def test_every_strategy_passes_its_check_and_the_pick_is_the_fastest(tall):
    assert {s.status for s in tall.strategies} == {"ok"}
    assert all(s.rows[0].max_rel_error < 1e-4 for s in tall.strategies)
    assert tall.check.fd_status == "ok" and tall.check.fd_error < 1e-4
    assert tall.check.fd_agree == 1.0
    _assert_the_fastest_is_picked_or_tied(tall)


@pytest.mark.slow  # advise's worker processes: 5 to 50 s
def test_advice_json_holds_what_the_issue_names(tall, tall_out):
    on_disk = json.loads((tall_out / "advice.json").read_text())
    for key in ("function", "framework", "inputs", "outputs", "sizes", "target", "strategies",
                "pick", "code"):  # fmt: skip
        assert key in on_disk
    assert (on_disk["framework"], on_disk["inputs"], on_disk["outputs"]) == ("torch", 2, 200)
    for s in on_disk["strategies"]:
        assert s["mode"] in ("forward", "reverse", "pathwise", "finite-difference")
        assert {"n", "warm_median_s", "cold_s", "peak_bytes", "max_rel_error"} <= set(s["rows"][0])
        assert s["predicted_s"] > 0 and s["predicted_peak_bytes"] > 0
    assert {"strategy", "predicted_s", "predicted_peak_bytes", "why", "one_call"} <= set(
        on_disk["pick"]
    )
    journal = (tall_out / "rows.jsonl").read_text().splitlines()
    # A row per strategy and size, and one of the function itself per size.
    assert len(journal) == 2 * (len(on_disk["strategies"]) + 1)
    assert [r["n"] for r in on_disk["baseline"]["rows"]] == [200, 400]
    assert on_disk["pick"]["basis"] == "measured"  # calls of microseconds: flagged


@pytest.mark.slow  # advise's worker processes: 5 to 50 s
def test_refit_from_the_rows_alone_gives_the_same_advice(tall):
    # What a change to the fit is checked with: the rows are fitted again, nothing measured.
    again = advise.refit(tall)
    assert again.pick.strategy == tall.pick.strategy
    assert [s.predicted_s for s in again.strategies] == pytest.approx(
        [s.predicted_s for s in tall.strategies]
    )


@pytest.mark.slow  # advise's worker processes: 5 to 50 s
def test_printed_code_computes_the_closed_form(tall, tall_out, reader, tmp_path):
    code = tall_out / "jacobian.py"
    script = (
        f"import numpy as np, runpy\n"
        f"ns = runpy.run_path({str(code)!r})\n"
        f"import sys; sys.path.insert(0, {str(reader)!r})\n"
        f"from mine import example\n"
        f"theta, z = example(300)\n"
        f"np.save({str(tmp_path / 'j.npy')!r}, ns['jacobian'](theta, z).detach().numpy())\n"
        f"np.save({str(tmp_path / 'z.npy')!r}, z.numpy())\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, cwd=tmp_path)
    j, z = np.load(tmp_path / "j.npy"), np.load(tmp_path / "z.npy")
    expected = _closed_lognormal(np.array([100.0, 0.25]), z.astype(np.float64))
    assert np.max(np.abs(j - expected)) / np.max(np.abs(expected)) < 1e-4


@pytest.mark.slow  # advise's worker processes: 5 to 50 s
def test_coupled_rows_refuse_the_per_row_strategy(reader, tmp_path):
    found = _advise(reader, tmp_path, "demeaned", sizes=(200, 300),
                    strategies=("functional-loop", "jacfwd", "per-row"))  # fmt: skip
    per_row = _strategy(found, "per-row")
    assert per_row.status == "refused" and "coupled" in per_row.reason
    assert len(per_row.rows) == 1  # not measured past the check
    assert found.pick.strategy != "per-row"
    assert _strategy(found, "jacfwd").status == "ok"


@pytest.mark.slow  # advise's worker processes: 5 to 50 s
def test_wide_function_gets_reverse_mode(reader, tmp_path):
    found = _advise(reader, tmp_path, "wide", "wide_example", sizes=(1000, 3000),
                    strategies=("jacrev", "jacfwd", "functional-forward"))  # fmt: skip
    assert _strategy(found, "jacrev").status == "ok"
    assert found.outputs == 4
    assert _strategy(found, found.pick.strategy).mode == "reverse"


@pytest.mark.slow  # advise's worker processes: 5 to 50 s
def test_hessian_of_a_one_output_function(reader, tmp_path):
    found = _advise(reader, tmp_path, "energy", "energy_example", sizes=(20, 40), order=2)
    assert {s.status for s in found.strategies} == {"ok"}
    assert found.check.fd_status == "ok" and found.check.fd_error < 1e-5
    assert found.pick.strategy in {s.name for s in found.strategies}
    # The printed code's Hessian is the closed form A - diag(cos theta), at a size not measured.
    script = (
        f"import numpy as np, runpy, sys\n"
        f"ns = runpy.run_path({str(tmp_path / 'jacobian.py')!r})\n"
        f"sys.path.insert(0, {str(reader)!r})\n"
        f"from mine import energy_example\n"
        f"theta, a = energy_example(30)\n"
        f"h = ns['jacobian'](theta, a).detach().numpy()\n"
        f"exact = a.numpy() - np.diag(np.cos(theta.numpy()))\n"
        f"np.save({str(tmp_path / 'err.npy')!r}, np.abs(h - exact).max())\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, cwd=tmp_path)
    assert float(np.load(tmp_path / "err.npy")) < 1e-10


@pytest.mark.slow  # advise's worker processes: 5 to 50 s
def test_peak_predicted_at_a_size_not_measured_holds(reader, tmp_path):
    # Each call holds (n, 4096) float32 arrays: the peak grows with n, well above the noise. At
    # n = 2,000 one array is 32.8 MB, just under glibc's largest mmap threshold (32 MiB), so it may
    # come from the heap and stay resident or not (peaks of 312 and 443 MB seen at that size, and a
    # prediction 0.41x the measured peak); from 4,000 every array is mapped and freed alike.
    found = _advise(reader, tmp_path, "features", "features_example", sizes=(4000, 8000),
                    target=16000, strategies=("jacfwd",), verify=True)  # fmt: skip
    measured = found.pick.measured
    assert measured.status == "ok" and measured.n == 16000
    assert 0.5 <= measured.peak_ratio <= 2.0


@pytest.mark.slow  # advise's worker processes: 5 to 50 s
def test_above_the_floor_the_pick_is_the_fastest_measured_and_a_rerun_agrees(reader, tmp_path):
    # Calls of milliseconds at every size, three sizes: the pick is the fastest by what ranked
    # it (predictions, unless one is flagged); the fastest measured at the largest size is it
    # or tied with it; a second run picks the same or names the first's pick as tied.
    runs = [
        _advise(
            reader,
            tmp_path / f"run{i}",
            "heavy",
            "heavy_example",
            sizes=(2000, 4000, 8000),
            strategies=("jacfwd", "functional-forward", "per-row"),
        )  # fmt: skip
        for i in (1, 2)
    ]
    for found in runs:
        # Calls of milliseconds leave nothing to flag on a quiet machine; on a busy one a size
        # can come out slower than the next (falling), and the pick then reads the calls.
        flagged = any(s.flags for s in found.strategies if s.status == "ok")
        assert found.pick.basis == ("measured" if flagged else "predicted")
        _assert_the_fastest_is_picked_or_tied(found)
        base = {r.n: r.warm_median_s for r in found.baseline.rows}
        for r in (r for s in found.strategies for r in s.rows):
            assert r.evaluations == pytest.approx(r.warm_median_s / base[r.n])
    first, second = (r.pick for r in runs)
    assert second.strategy in (first.strategy, *first.tied) or first.strategy in (second.tied)


@pytest.mark.slow  # advise's worker processes: 5 to 50 s
@pytest.mark.timing  # make test runs it alone, after the rest
def test_the_prediction_at_a_size_not_measured_is_inside_its_interval(reader, tmp_path):
    # Four sizes, the target twice the largest, the pick measured there in three workers: inside
    # its 95% interval and within 2x. A disturbed machine gets up to two more runs.
    for attempt in (1, 2, 3):
        found = _advise(reader, tmp_path / str(attempt), "heavy", "heavy_example",
                        sizes=(1000, 2000, 4000, 8000), target=16000,
                        strategies=("jacfwd",), verify=True)  # fmt: skip
        measured = found.pick.measured
        if measured.within_interval and 0.5 <= measured.time_ratio <= 2:
            break
    assert measured.n == 16000 and measured.within_interval
    assert 0.5 <= measured.time_ratio <= 2
    assert found.pick.checked.strategies["jacfwd"].workers == 3


@pytest.mark.slow  # advise's worker processes: 5 to 50 s
@pytest.mark.timing  # make test runs it alone, after the rest
def test_the_prediction_ten_times_past_the_data_is_inside_its_interval(reader, tmp_path):
    # The issue's test on small sizes: four sizes fitted from 10,000 to 40,000 rows (1.3 MiB of
    # data at the largest, 12.8 MiB at the target; checked at 1,000), the pick measured at
    # 400,000 in three workers: unflagged (no mmap crossing), inside its 95% interval and within
    # 2x. A disturbed machine gets up to two more runs.
    for attempt in (1, 2, 3):
        found = _advise(reader, tmp_path / str(attempt), "busy", "busy_example",
                        sizes=(1000, 10_000, 20_000, 30_000, 40_000), fit_from=10_000,
                        target=400_000, strategies=("per-row",), verify=True)  # fmt: skip
        measured = found.pick.measured
        if measured.within_interval and 0.5 <= measured.time_ratio <= 2:
            break
    assert "mmap" not in _strategy(found, "per-row").flags
    assert measured.n == 400_000 and measured.within_interval
    assert 0.5 <= measured.time_ratio <= 2


@pytest.mark.slow  # advise's worker processes: 5 to 50 s
def test_a_barrier_is_flagged_and_a_smooth_payoff_is_not(reader, tmp_path, tall):
    found = _advise(reader, tmp_path, "down_and_out", "barrier_example", sizes=(4000,),
                    strategies=("jacfwd",))  # fmt: skip
    assert found.boundary.jumps
    spot = found.boundary.inputs[0]
    assert spot.jumps and spot.bumped_mean > spot.per_row_mean + 3 * spot.standard_error
    assert "boundary term" in advise.output.summary(found)
    assert tall.boundary.status == "ok" and not tall.boundary.jumps


def test_check_re_picks_from_what_it_measured():
    # Written by hand: the prediction picked a, measured again at the target b is faster in every
    # worker and c overlaps b: the pick becomes b, c tied, a's prediction kept beside.
    def strategy(name, predicted):
        return {"name": name, "mode": "forward", "status": "ok", "predicted_s": predicted,
                "predicted_cold_s": 1.0, "predicted_peak_bytes": 1e6,
                "predicted_interval_s": [predicted / 2, predicted * 2]}  # fmt: skip

    def rows(*medians):
        return [Row(n=10**5, status="ok", warm_median_s=m, peak_bytes=10**6) for m in medians]

    written = Advice.from_json({
        "function": "mine.py:f", "framework": "torch", "inputs": 2, "outputs": 10**5,
        "sizes": [10**4], "target": 10**5,
        "strategies": [strategy("a", 0.1), strategy("b", 0.12), strategy("c", 0.2)],
        "pick": {"strategy": "a", "tied": ["b"], "predicted_s": 0.1,
                 "predicted_peak_bytes": 1e6}})  # fmt: skip
    found = advise.recheck(written, {"a": rows(0.30, 0.31, 0.32), "b": rows(0.20, 0.21, 0.22),
                                     "c": rows(0.215, 0.19, 0.26)})  # fmt: skip
    pick = found.pick
    assert pick.strategy == "b" and pick.tied == ("c",)
    assert pick.checked.changed and pick.checked.predicted_pick == "a"
    assert pick.measured.warm_median_s == 0.21
    assert pick.measured.time_ratio == pytest.approx(0.12 / 0.21)
    assert pick.measured.within_interval
    # A leader that failed at the target in every worker is named with its status.
    found = advise.recheck(found, {"b": rows(0.2), "d": [Row(n=10**5, status="memory-cap")]})
    assert found.pick.checked.failed == {"d": "memory-cap"}
    assert "failed at n=100,000: d (memory-cap)" in "\n".join(
        advise.output._checked_lines(found.pick)
    )


# --- bad input: one line, exit status 2, nothing written --------------------------------------

BAD = {
    "no-module": ("nowhere_at_all:f", "mine.py:example", "no module 'nowhere_at_all'"),
    "no-function": ("mine.py:absent", "mine.py:example", "has no 'absent'"),
    "not-a-pair": ("mine.py:lognormal", "mine.py:not_a_pair", "must return (theta, data)"),
    "no-tensor": ("mine.py:listy", "mine.py:example", "must return a tensor"),
    "random-inside": ("mine.py:random_inside", "mine.py:example", "different outputs"),
    "unseeded-factory": ("mine.py:lognormal", "mine.py:unseeded", "different values"),
    "infinite": ("mine.py:infinite", "mine.py:example", "NaN or infinite"),
    "theta-2d": ("mine.py:lognormal", "mine.py:square_theta", "1-D tensor"),
    "function-raises": ("mine.py:raises", "mine.py:example", "not calibrated"),
    "factory-raises": ("mine.py:lognormal", "mine.py:raising_factory", "no market data"),
    "integer-theta": ("mine.py:lognormal", "mine.py:integer_theta", "theta must be float"),
    "nan-derivative": ("mine.py:nan_derivative", "mine.py:example", "NaN or infinite entries"),
    "hessian-of-many": ("mine.py:lognormal", "mine.py:example", "one output", "--hessian"),
    "other-framework": (
        "mine.py:lognormal",
        "mine.py:example",
        "gives torch",
        "--framework",
        "jax",
    ),
    "no-sizes": ("mine.py:lognormal", "mine.py:example", "at least one size", "--sizes", ","),
    "zero-size": ("mine.py:lognormal", "mine.py:example", "at least 1", "--sizes", "0"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_exits_2_with_one_line(case, reader, tmp_path, capsys, monkeypatch):
    function, factory, said, *options = BAD[case]
    monkeypatch.chdir(reader)
    out = tmp_path / "advice"
    if "--sizes" not in options:
        options += ["--sizes", "50"]
    rc = main(["advise", function, "--example", factory, "--out", str(out), *options])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert said in err[-1] and err[-1].startswith("jacbench: error:")
    assert sum(line.startswith("jacbench: error:") for line in err) == 1
    assert not any("Traceback" in line for line in err)
    assert not out.exists()


def test_unknown_strategy_suggests_the_nearest(reader, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(reader)
    rc = main(["advise", "mine.py:lognormal", "--example", "mine.py:example", "--sizes", "50",
               "--strategies", "jacrevv", "--out", str(tmp_path / "x")])  # fmt: skip
    assert rc == 2 and "did you mean jacrev?" in capsys.readouterr().err


def test_measure_refuses_what_does_not_apply(capsys):
    assert main(["measure", "--callable", "nowhere_at_all:f"]) == 2
    assert "no module" in capsys.readouterr().err
    assert main(["measure", "--framework", "torch", "--strategy", "jvp", "--inputs", "10"]) == 2
    assert "--inputs does not apply to the gbm problem" in capsys.readouterr().err


# --- the other frameworks, and what a strategy cannot run ------------------------------------

# One module a framework, as a reader's would be: each worker imports the reader's module, and a
# JAX function's workers need not import TensorFlow too (3 s each).
OTHERS = '''
import jax
import jax.numpy as jnp
import numpy as np


def jax_heat(theta, x):
    """Per path: a two-input smooth function of its own row."""
    return theta[0] * jnp.sin(x) + jnp.exp(theta[1] * x)


def jax_example(n):
    return jnp.array([0.7, 0.3]), jnp.asarray(np.random.default_rng(1).standard_normal(n))


def jax_branchy(theta, x):
    """A Python branch on a traced value: jit cannot run it."""
    if theta[0] > 0:
        return theta[0] * x
    return theta[1] * x
'''

OTHERS_TF = '''
import numpy as np
import tensorflow as tf


def tf_wide(theta, w):
    """Few outputs, many inputs: tanh(W theta), W of 3 rows."""
    return tf.tanh(tf.linalg.matvec(w, theta))


def tf_example(n):
    rng = np.random.default_rng(2)
    theta = tf.constant(rng.standard_normal(n) / np.sqrt(n), dtype=tf.float32)
    return theta, tf.constant(rng.standard_normal((3, n)), dtype=tf.float32)
'''

TORCH_BRANCH = '''
import torch


def branchy(theta, z):
    """A data-dependent Python branch (.item()): torch.func.vmap refuses it."""
    if (theta[0] * z).sum().item() > 0:
        return theta[0] * z + theta[1]
    return theta[0] * z - theta[1]


def example(n):
    g = torch.Generator().manual_seed(11)
    return torch.tensor([1.5, 0.5]), torch.randn(n, generator=g)
'''


@pytest.fixture(scope="module")
def others(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("others")
    (folder / "theirs.py").write_text(textwrap.dedent(OTHERS))
    (folder / "theirs_tf.py").write_text(textwrap.dedent(OTHERS_TF))
    (folder / "branch.py").write_text(textwrap.dedent(TORCH_BRANCH))
    return folder


def _run(folder: Path, module: str, function: str, factory: str, out: Path, **kw) -> Advice:
    req = Request(f"{folder}/{module}:{function}", f"{folder}/{module}:{factory}", threads=1,
                  **{**FEWEST, **kw})  # fmt: skip
    return advise.advise(req, out, progress=lambda line: None)


@pytest.mark.slow  # advise's worker processes: 5 to 50 s
def test_jax_function_gets_a_checked_pick_and_working_code(others, tmp_path):
    found = _run(others, "theirs.py", "jax_heat", "jax_example", tmp_path, sizes=(300, 600))
    assert found.framework == "jax"
    assert {s.status for s in found.strategies} == {"ok"}
    _assert_the_fastest_is_picked_or_tied(found)
    script = (
        f"import runpy, sys, numpy as np\n"
        f"ns = runpy.run_path({str(tmp_path / 'jacobian.py')!r})\n"
        f"sys.path.insert(0, {str(others)!r})\n"
        f"from theirs import jax_example\n"
        f"theta, x = jax_example(50)\n"
        f"j = np.asarray(ns['jacobian'](theta, x))\n"
        f"x = np.asarray(x, dtype=np.float64)\n"
        f"want = np.stack([np.sin(x), x * np.exp(0.3 * x)], axis=1)\n"
        f"assert np.max(np.abs(j - want)) / np.max(np.abs(want)) < 1e-5, j\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, cwd=tmp_path)


@pytest.mark.slow  # advise's worker processes: 5 to 50 s
def test_a_branch_under_jit_is_a_row_with_its_reason(others, tmp_path):
    found = _run(others, "theirs.py", "jax_branchy", "jax_example", tmp_path, sizes=(100, 200),
                 strategies=("vjp-loop", "jacfwd"))  # fmt: skip
    jacfwd = _strategy(found, "jacfwd")
    assert jacfwd.status == "error" and "traced" in jacfwd.reason
    assert found.pick.strategy == "vjp-loop"


@pytest.mark.slow  # advise's worker processes: 5 to 50 s
def test_torch_item_branch_is_a_row_with_its_reason(others, tmp_path):
    found = _run(others, "branch.py", "branchy", "example", tmp_path, sizes=(100, 200),
                 strategies=("functional-loop", "per-row"))  # fmt: skip
    assert _strategy(found, "per-row").status == "error"
    assert "item" in _strategy(found, "per-row").reason
    assert found.pick.strategy == "functional-loop"


@pytest.mark.slow  # advise's worker processes: 5 to 50 s
def test_tensorflow_wide_function_gets_reverse_mode(others, tmp_path):
    strategies = ("tape-jacobian-loop-function", "tape-jacobian-pfor-function",
                  "forward-accumulator-function")  # fmt: skip
    found = _run(others, "theirs_tf.py", "tf_wide", "tf_example", tmp_path, sizes=(2000, 4000),
                 strategies=strategies)  # fmt: skip
    assert found.framework == "tensorflow" and found.outputs == 3
    assert {s.status for s in found.strategies} == {"ok"}
    assert _strategy(found, found.pick.strategy).mode == "reverse"


@pytest.mark.slow
def test_book_renders_the_chapter_for_a_readers_advice(tall, tall_out, tmp_path):
    # What jacbench advise --book builds: the chapter, its last section reading this advice.
    from jacbench.publish import single

    root = Path(__file__).resolve().parents[1]
    page = single.build_page("08-your-function", root, out=tmp_path / "book",
                             parameters={"advice": str(tall_out)})  # fmt: skip
    html = page.read_text()
    assert "mine.py:lognormal" in html
    assert tall.pick.strategy in html
    assert "Traceback" not in html


# --- the committed advice, fitted again by this version ---------------------------------------

REFERENCE_ADVICE = Path(__file__).resolve().parents[1] / "book/reference/advice"


@pytest.mark.parametrize("name", sorted(p.name for p in REFERENCE_ADVICE.iterdir() if p.is_dir()))
def test_the_committed_advice_refits_to_its_own_picks(name):
    # What the book shows is what this version decides from the same rows: the same pick, the
    # same ties, the same one-call pick, the same predictions and intervals, the same re-pick
    # from --check's measurements.
    committed = advise.load(REFERENCE_ADVICE / name)
    again = advise.refit(committed)
    for key in ("strategy", "tied", "one_call", "basis"):
        assert getattr(again.pick, key) == getattr(committed.pick, key), key
    assert again.pick.predicted_s == pytest.approx(committed.pick.predicted_s)
    for old, new in zip(committed.strategies, again.strategies, strict=True):
        assert new.status == old.status and new.flags == old.flags
        if old.predicted_s is not None:
            assert new.predicted_interval_s == pytest.approx(old.predicted_interval_s)
    if committed.pick.checked:
        assert again.pick.checked.strategy == committed.pick.checked.strategy


def test_the_probe_grows_the_size_until_the_function_takes_the_floor(reader):
    from jacbench.measure import user_probe
    from jacbench.problems.user import UserParams

    p = UserParams(f"{reader}/mine.py:heavy", f"{reader}/mine.py:heavy_example", n=10)
    found = user_probe.floor_size(p, 1e-6, {"floor_s": 1e-3, "budget_s": 10.0, "max_n": 10**6})
    # It stops at the first size whose call took the floor, or at the cap.
    assert found["floor_n"] > 10
    assert found["floor_n_s"] >= 1e-3 or found["floor_n"] == 10**6
    # A floor no call reaches stops at max_n; a budget every call passes stops at the first step.
    capped = user_probe.floor_size(p, 1e-6, {"floor_s": 1e3, "budget_s": 1e3, "max_n": 500})
    assert capped["floor_n"] == 500
    first = user_probe.floor_size(p, 1e-6, {"floor_s": 1e3, "budget_s": 0.0, "max_n": 10**6})
    assert first["floor_n"] == 100  # 10 grown by 10x once, then the budget stops it
