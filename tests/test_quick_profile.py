"""The quick profile, swept once per session: every case a row, every outcome sound."""

from jacbench.measure import sweep
from jacbench.measure.worker import TOLERANCE


def test_every_case_has_exactly_one_row(quick_results):
    out, cases = quick_results
    rows = sweep.read_rows(out)
    assert len(rows) == len(cases)
    assert len({r["key"] for r in rows}) == len(cases)


def test_every_row_is_ok_or_an_expected_failure(quick_results):
    out, _ = quick_results
    for r in sweep.read_rows(out):
        label = f"{r['framework']}/{r['strategy']} N={r['paths']}"
        if r["strategy"] == "question" and int(r["paths"]) == 10_000:
            continue
        assert r["status"] == "ok", f"{label}: {r['status']} {r['message']}"
        assert r["hwm_reset"] == "True"
        if r["target"] == "strategy":
            assert float(r["max_rel_error"]) <= TOLERANCE[r["dtype"]], label


def test_question_programs_at_their_size_are_recorded_as_failures(quick_results):
    out, _ = quick_results
    rows = [r for r in sweep.read_rows(out) if r["strategy"] == "question"]
    big = {r["framework"]: r for r in rows if int(r["paths"]) == 10_000}
    assert set(big) == {"torch", "tensorflow"}
    for r in big.values():
        assert r["status"] in ("memory-cap", "skipped-predicted"), r
        if r["status"] == "skipped-predicted":
            assert int(r["predicted_peak"]) > 1.5 * int(r["mem_cap"])
