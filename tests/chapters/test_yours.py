"""Chapter 7's facts ("Your function"): one advice and the basket's series, on advice written
here (so that the answer is known) and on the reference advice the book is built from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jacbench.advise import reference as advice_runs
from jacbench.report.chapters import yours
from jacbench.report.chapters.yours import tables

ROOT = Path(__file__).resolve().parents[2]


def _row(n, warm, status="ok"):
    return {"n": n, "status": status, "message": "", "warm_median_s": warm, "warm_min_s": warm,
            "warm_max_s": warm, "warm_n": 3, "cold_s": warm * 2, "peak_bytes": 2**20 * n // 100,
            "max_rel_error": 1e-7}  # fmt: skip


def _strategy(name, mode, rows, status="ok", reason=""):
    return {"name": name, "mode": mode, "status": status, "reason": reason, "rows": rows,
            "predicted_s": rows[-1]["warm_median_s"] * 10 if status == "ok" else None,
            "predicted_peak_bytes": 2**30 if status == "ok" else None, "per_row": False,
            "fits": {"warm": {"scale": 1e-6, "exponent": 1.0, "points": 2},
                     "peak": {"scale": 1e4, "exponent": 1.0, "points": 2}}}  # fmt: skip


def _write(folder: Path, inputs: int, forward_s: float, per_row_s: float, coupled=False) -> Path:
    folder.mkdir(parents=True)
    per_row = (
        _strategy("per-row", "pathwise", [_row(100, 1.0)], "refused", "rows are coupled: ...")
        if coupled
        else _strategy("per-row", "pathwise", [_row(100, per_row_s / 10), _row(1000, per_row_s)])
    )
    strategies = [
        _strategy("jacfwd", "forward", [_row(100, forward_s / 10), _row(1000, forward_s)]),
        per_row,
        _strategy(
            "jacrev",
            "reverse",
            [_row(100, 0.5), _row(1000, 0.0, "memory-cap")],
            "memory-cap",
            "at n=1,000: killed at 8.0 GiB",
        ),  # fmt: skip
    ]
    fastest = min((s for s in strategies if s["status"] == "ok"),
                  key=lambda s: s["rows"][-1]["warm_median_s"])  # fmt: skip
    advice = {
        "function": "mine.py:f", "framework": "torch", "inputs": inputs, "outputs": 100,
        "sizes": [100, 1000], "target": 10_000, "order": 1, "strategies": strategies,
        "pick": {"strategy": fastest["name"], "tied": [], "predicted_s": 0.1,
                 "predicted_peak_bytes": 2**30, "one_call": fastest["name"]},
        "check": {"fd_status": "ok", "fd_error": 3e-7, "fd_agree": 1.0}, "margins": {"warm": 1.2},
        "code": "def jacobian(theta, data):\n    return None\n",
    }  # fmt: skip
    (folder / "advice.json").write_text(json.dumps(advice))
    return folder


@pytest.fixture
def basket(tmp_path) -> Path:
    # forward mode grows with the inputs; per-row overtakes beyond the margin from 8 inputs.
    for inputs, fwd, row in ((2, 1.0, 1.1), (4, 2.0, 1.2), (8, 4.0, 1.3), (16, 8.0, 1.5)):
        _write(tmp_path / f"basket-{inputs // 2}", inputs, fwd, row)
    return tmp_path


def test_series_reads_inputs_and_finds_where_per_row_overtakes(basket):
    ser = yours.series(basket)
    assert ser.inputs == (2, 4, 8, 16) and ser.n == 1000
    assert ser.ratio("jacfwd", "per-row", 16) == pytest.approx(8.0 / 1.5)
    assert not ser.ahead("per-row", "jacfwd", 2)  # 1.1 against 1.0: forward is faster
    assert ser.ahead("per-row", "jacfwd", 4)
    assert ser.overtakes("per-row", "jacfwd") == 4


def test_overtaking_needs_to_stay_ahead(tmp_path):
    for inputs, fwd, row in ((2, 1.0, 0.5), (4, 2.0, 2.0), (8, 4.0, 1.0)):
        _write(tmp_path / f"basket-{inputs // 2}", inputs, fwd, row)
    ser = yours.series(tmp_path)
    assert ser.ahead("per-row", "jacfwd", 2) and not ser.ahead("per-row", "jacfwd", 4)
    assert ser.overtakes("per-row", "jacfwd") == 8  # ahead at 2, tied at 4: from 8 on


def test_ahead_needs_the_calls_apart_not_only_the_medians(tmp_path):
    # At 4 inputs per-row's median (1.2) is under jacfwd's (2.0), but its slowest call (2.5)
    # reaches past jacfwd's fastest (1.8): the rule calls them tied there, so per-row is
    # ahead only from 8 inputs.
    folder = _write(tmp_path / "basket-2", 4, 2.0, 1.2)
    _write(tmp_path / "basket-4", 8, 4.0, 1.3)
    raw = json.loads((folder / "advice.json").read_text())
    raw["strategies"][1]["rows"][-1]["warm_max_s"] = 2.5
    raw["strategies"][0]["rows"][-1]["warm_min_s"] = 1.8
    (folder / "advice.json").write_text(json.dumps(raw))
    ser = yours.series(tmp_path)
    assert not ser.ahead("per-row", "jacfwd", 4) and ser.ahead("per-row", "jacfwd", 8)
    assert ser.overtakes("per-row", "jacfwd") == 8


def test_advice_sorts_strategies_by_outcome(tmp_path):
    adv = yours.advice(_write(tmp_path / "one", 2, 1.0, 2.0, coupled=True))
    assert adv.passed == ("jacfwd",) and adv.refused == ("per-row",)
    assert adv.failed == ("jacrev",)
    assert adv.picked == "jacfwd" and adv.picked_mode == "forward"
    assert adv.fastest_measured() == ("jacfwd", 1.0)
    assert adv.measured_at_target is None
    shown = tables.strategies(adv)
    assert list(shown["strategy"]) == ["jacfwd", "per-row", "jacrev"]
    assert list(shown[""]) == ["pick", "", ""]
    assert set(tables.reasons(adv)["status"]) == {"refused", "memory-cap"}


def test_the_data_reaches_the_mmap_threshold_where_its_bytes_say(tmp_path):
    import dataclasses

    adv = yours.advice(_write(tmp_path / "one", 2, 1.0, 2.0))
    assert adv.mmap_at is None  # no data recorded
    # 416,000 bytes at 1,000 rows: 416 a row, 32 MiB = 33,554,432 bytes at 80,660 rows.
    big = dataclasses.replace(adv, data_bytes=416_000, probe_n=1000, target=10**6)
    assert big.mmap_at == 80_660
    assert dataclasses.replace(big, target=80_000).mmap_at is None  # past the target


def test_reference_advice_is_read_as_reference(tmp_path):
    assert yours.is_reference(ROOT / "book/reference/advice/heston")
    assert not yours.is_reference(tmp_path / "advice")


def test_reference_runs_name_one_factory_per_basket_size():
    runs = advice_runs.runs()
    assert set(runs) == {f"basket-{a}" for a in advice_runs.ASSETS} | {"heston"}
    from jacbench.problems import basket

    assert advice_runs.ASSETS == basket.ASSETS
    for a in advice_runs.ASSETS:
        assert hasattr(basket, runs[f"basket-{a}"].factory.rpartition(":")[2])


REFERENCE = ROOT / "book/reference/advice"


def test_reference_advice_picks_passed_strategies():
    for folder in sorted(p for p in REFERENCE.iterdir() if p.is_dir()):
        adv = yours.advice(folder)
        assert adv.picked in adv.passed, folder.name
        # The Heston loop's truncation puts kinks near some paths; most outputs still agree.
        assert adv.fd_agree is not None and adv.fd_agree > 0.9, folder.name
        assert "def jacobian(theta, data)" in adv.code
