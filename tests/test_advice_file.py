"""advice.json's one schema (report.advice): every committed advice reads and writes back to equal
JSON, and the keys a file may lack stay absent where they were."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jacbench.report.advice import Advice, Load, Measured, Row, Strategy, StrategyRow

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = sorted((ROOT / "book/reference/advice").glob("**/advice.json"))


def test_the_reference_advice_is_there():
    assert {p.parent.name for p in COMMITTED} >= {"heston", "basket-1", "basket-16"}


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.parent.name)
def test_every_committed_advice_round_trips_to_equal_json(path):
    raw = json.loads(path.read_text())
    advice = Advice.from_json(raw)
    assert advice.to_json() == raw
    # Read back from what it wrote, it is the same record.
    assert Advice.from_json(json.loads(json.dumps(advice.to_json()))) == advice


def test_a_size_not_run_keeps_its_three_keys_and_a_failed_one_its_nones():
    not_run = {"n": 4000, "status": "timeout", "message": "not run at n=4,000"}
    assert Row.from_json(not_run).to_json() == not_run
    assert not Row.from_json(not_run).ran
    failed = {"n": 4000, "status": "memory-cap", "message": "killed", "warm_median_s": None,
              "warm_min_s": None, "warm_max_s": None, "warm_n": None, "cold_s": None,
              "max_rel_error": None, "peak_bytes": None, "cold_peak_bytes": None,
              "wall_s": 3.5}  # fmt: skip
    assert Row.from_json(failed).to_json() == failed
    # A strategy's row adds the function's time and the evaluations, even where not run.
    row = {**not_run, "function_s": None, "evaluations": None}
    assert StrategyRow.from_json(row).to_json() == row


def test_a_prediction_is_written_only_where_the_strategy_was_fitted():
    unfitted = {"name": "jacrev", "mode": "reverse", "call": "", "description": "",
                "per_row": False, "compiled": False, "reference": False, "status": "timeout",
                "reason": "at n=10: ...", "rows": [], "predicted_s": None,
                "predicted_cold_s": None, "predicted_peak_bytes": None}  # fmt: skip
    assert Strategy.from_json(unfitted).to_json() == unfitted
    fit = {"scale": 1e-6, "exponent": 1.0, "fixed": 0.0, "spread": None, "points": 2,
           "log_sd": None, "dof": None, "noise": 0.0, "x_mean": 7.0, "sxx": 0.5, "slope": 1.0,
           "slope_interval": [None, None]}  # fmt: skip
    fitted = {**unfitted, "status": "ok", "reason": "", "predicted_s": 0.1,
              "predicted_cold_s": 0.2, "predicted_peak_bytes": 1e6,
              "predicted_interval_s": [0.05, None], "predicted_spread": None, "exponent": 1.0,
              "exponent_interval": [0.9, 1.1], "flags": ["few"], "flags_said": ["fewer"],
              "fits": {"warm": fit, "cold": fit, "peak": fit}}  # fmt: skip
    assert Strategy.from_json(fitted).to_json() == fitted


def test_either_version_of_the_load_reads_back_as_written():
    first = {"before": 1.16, "cores": 2, "busy": True, "after": 1.12}
    later = {"cores": 2, "before": 0.01, "during_mean": 0.03, "during_max": 1.07, "samples": 36,
             "busy": False}  # fmt: skip
    for raw in (first, later):
        assert Load.from_json(raw).to_json() == raw


def test_the_measured_pick_keeps_its_ratios_only_where_they_were_worked_out():
    row = {"n": 10**6, "status": "timeout", "message": "killed"}
    assert Measured.from_json(row).to_json() == row
    ratios = {**row, "time_ratio": 0.9, "peak_ratio": 1.1, "within_interval": None}
    assert Measured.from_json(ratios).to_json() == ratios
