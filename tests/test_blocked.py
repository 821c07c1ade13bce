"""The path-blocked strategies: one block of paths at a time, the normals drawn per block.

Against the closed form from the same streamed normals (N a multiple of the block and not), the
stream itself (a path's normals depend on the seed and its index only), the blocked simulation
baselines, a memory model flat in N but for the result, and the measure command's targets.
"""

import json

import numpy as np
import pytest
from conftest import TOLERANCE

from jacbench.cli import main
from jacbench.measure import profiles
from jacbench.problems import gbm, make_case
from jacbench.strategies import blocked, memory_model, registry

BLOCKED = [s for s in registry.STRATEGIES if s.blocked]
PAIRS = [(s, d) for s in BLOCKED for d in s.dtypes]
EXECUTIONS = sorted({(s.framework, s.execution) for s in BLOCKED})


def _id(pair) -> str:
    return f"{pair[0].key}-{pair[1]}"


def _streamed(paths: int, dtype: str = "float32", **kw) -> gbm.GBMCase:
    return make_case("gbm", {"paths": paths, "dtype": dtype, **kw}, streamed=True)


def _twin(strategy) -> registry.Strategy:
    """The unblocked strategy a blocked one blocks."""
    return registry.get(strategy.framework, strategy.blocks)


def _build(strategy, case, block_size=None):
    """The strategy's builder called with an explicit block size (None: the model's)."""
    return registry._load(strategy.entry("gbm"))(case, block_size)


def test_every_framework_has_a_blocked_forward_and_pathwise_strategy():
    for fw in ("torch", "tensorflow", "jax"):
        modes = {(s.mode, s.batching) for s in BLOCKED if s.framework == fw}
        assert modes == {("forward", "loop"), ("reverse", "single-pass")}, fw
        assert any(registry.is_blocked(e) for e in registry.executions(fw)), fw
    for s in BLOCKED:
        twin = _twin(s)
        assert (twin.mode, twin.batching, twin.engine) == (s.mode, s.batching, s.engine)
        assert not twin.blocked and not twin.blocks


@pytest.mark.parametrize("pair", PAIRS, ids=[_id(p) for p in PAIRS])
@pytest.mark.parametrize("block", [250, 300])  # N = 1,000: 4 blocks, or 3 and a ragged 100
def test_blocked_jacobian_matches_the_closed_form_of_the_streamed_normals(pair, block):
    strategy, dtype = pair
    case = _streamed(1000, dtype)
    out = _build(strategy, case, block)()
    assert out.jacobian.shape == (1000, 2) and out.terminal.shape == (1000,)
    assert out.jacobian.dtype == np.dtype(dtype)
    reference = gbm.jacobian_closed_form(case)  # whole-array closed form, same stream
    assert gbm.relative_error(out.jacobian, reference) < TOLERANCE[dtype]
    rtol = {"float32": 1e-5, "float64": 1e-12}[dtype]
    np.testing.assert_allclose(out.terminal, gbm.terminal_closed_form(case), rtol=rtol)
    # The worker's check (block by block) gives the whole-array check's number.
    assert strategy.error(case, out) == pytest.approx(gbm.relative_error(out.jacobian, reference))


@pytest.mark.parametrize("strategy", BLOCKED, ids=[s.key for s in BLOCKED])
def test_the_block_size_does_not_change_the_answer(strategy):
    case = _streamed(2000)
    one = _build(strategy, case, 2000)()
    many = _build(strategy, case, 700)()
    np.testing.assert_allclose(many.jacobian, one.jacobian, rtol=1e-6)
    np.testing.assert_allclose(many.terminal, one.terminal, rtol=1e-6)


@pytest.mark.parametrize("strategy", BLOCKED, ids=[s.key for s in BLOCKED])
def test_on_held_normals_a_blocked_strategy_computes_what_its_twin_does(strategy):
    """A case holding make_case's normals gives each block its slice of them."""
    case = gbm.make_case(gbm.GBMParams(paths=1000))
    a, b = _build(strategy, case, 300)(), _twin(strategy).build(case)()
    np.testing.assert_allclose(a.jacobian, b.jacobian, rtol=2e-5)
    np.testing.assert_allclose(a.terminal, b.terminal, rtol=2e-5)


@pytest.mark.parametrize("framework,execution", EXECUTIONS)
def test_blocked_simulation_matches_the_streamed_reference(framework, execution):
    for dtype, rtol in (("float32", 1e-5), ("float64", 1e-12)):
        case = _streamed(1000, dtype, chunk_size=1)  # a 1 MiB budget: blocks of 309 paths
        assert blocked.block_size(case) < 1000
        terminal = registry.simulation(framework, execution)(case)()
        assert terminal.dtype == np.dtype(dtype) and terminal.shape == (1000,)
        np.testing.assert_allclose(terminal, gbm.terminal_closed_form(case), rtol=rtol)


# --- the stream of normals ------------------------------------------------------------------


def test_a_paths_normals_depend_on_the_seed_and_its_index_only():
    p = gbm.GBMParams(paths=40_000, steps=5, dtype="float64")
    whole = gbm.stream_normals(p, 0, 40_000)
    # Any window, across the stream's groups or inside one, reads the same numbers.
    for start, stop in ((20_000, 30_000), (16_383, 16_385), (0, 1), (39_999, 40_000)):
        np.testing.assert_array_equal(gbm.stream_normals(p, start, stop), whole[:, start:stop])
    # N is not an input: a case of fewer paths holds the first of them.
    small = gbm.GBMParams(paths=100, steps=5, dtype="float64")
    np.testing.assert_array_equal(gbm.stream_normals(small, 0, 100), whole[:, :100])
    other = gbm.GBMParams(paths=40_000, steps=5, dtype="float64", seed=7)
    assert not np.array_equal(gbm.stream_normals(other, 0, 100), whole[:, :100])
    # Standard normals: mean 0, variance 1 within sampling error (2 x 10^5 draws).
    assert abs(whole.mean()) < 0.01 and abs(whole.var() - 1) < 0.01


def test_float32_streams_the_float64_normals_rounded():
    p64 = gbm.GBMParams(paths=3000, steps=4, dtype="float64")
    p32 = gbm.GBMParams(paths=3000, steps=4, dtype="float32")
    z32 = gbm.stream_normals(p32, 100, 3000)
    assert z32.dtype == np.float32
    np.testing.assert_array_equal(z32, gbm.stream_normals(p64, 100, 3000).astype(np.float32))


def test_block_normals_slice_held_normals_and_pad_with_zeros():
    case = gbm.make_case(gbm.GBMParams(paths=1000, steps=6))
    out = np.full((6, 400), np.nan, dtype=np.float32)
    case.block_normals(800, 1000, out=out)
    np.testing.assert_array_equal(out[:, :200], case.normals[:, 800:1000])
    assert not out[:, 200:].any()


def test_a_streamed_case_holds_no_normals():
    case = _streamed(10**8)  # would be 20.8 GB of normals if it held them
    assert case.streamed and case.normals is None
    assert case.block_normals(10**8 - 5, 10**8).shape == (52, 5)


def test_the_streamed_error_check_finds_a_wrong_row():
    case = _streamed(3000, "float64")
    j = gbm.jacobian_closed_form(case)
    assert gbm.jacobian_error(case, j) == 0.0
    j[2500, 1] += 0.5 * np.max(np.abs(j[:, 1]))
    assert gbm.jacobian_error(case, j) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="shape"):
        gbm.jacobian_error(case, j[:10])


# --- the block and the memory model -----------------------------------------------------------


def test_block_paths_fit_the_budget_and_the_streams_groups():
    assert memory_model.BLOCK_ROUND == gbm.STREAM_GROUP
    for dtype in ("float32", "float64"):
        itemsize = np.dtype(dtype).itemsize
        for budget in (64, 256, 1024):
            b = memory_model.block_paths(10**8, 52, dtype, budget)
            assert memory_model.BLOCK_ARRAYS * 53 * b * itemsize <= budget * 2**20
            # A multiple of the stream's groups, within one group of the budget (or, below one
            # group, within one path of it).
            step = memory_model.BLOCK_ROUND if b >= memory_model.BLOCK_ROUND else 1
            assert b % step == 0
            more = b + step
            assert memory_model.BLOCK_ARRAYS * 53 * more * itemsize > budget * 2**20
    assert memory_model.block_paths(1000, 52, "float32", 256) == 1000
    # 16 arrays of 53 float32 values a path: 3,392 bytes. 1 MiB holds 309 paths (below one
    # group: not rounded); 64 MiB holds 19,784, rounded down to one group of 16,384.
    assert memory_model.block_paths(10**6, 52, "float32", 1) == 309
    case = _streamed(10**6, chunk_size=64)
    assert blocked.block_size(case) == 16_384
    assert blocked.block_size(case, 1234) == 1234
    with pytest.raises(ValueError, match="at least 1"):
        blocked.block_size(case, 0)


@pytest.mark.parametrize("strategy", BLOCKED, ids=[s.key for s in BLOCKED])
def test_the_model_says_peak_memory_is_flat_in_n_but_for_the_result(strategy):
    m, fw = strategy.memory, strategy.framework
    assert m.blocked and m.arrays == m.batch == m.chunk == 0

    def peak(n):
        return m.peak(fw, n, 52, "float32")

    def result(n):
        return memory_model.RESULT_VALUES * n * 4  # J (N, 2) and S_T (N,) in float32

    # Beyond its result the peak is the same at 10^6, 10^7 and 10^8 paths ...
    flat = peak(10**6) - result(10**6)
    assert peak(10**7) - result(10**7) == pytest.approx(flat, rel=1e-9)
    assert peak(10**8) - result(10**8) == pytest.approx(flat, rel=1e-9)
    # ... the result is 3 / (M+1) of one path array, so at 10^7 the whole peak is within 1.5x
    # of 10^6's, and at 10^8 under the 8 GiB cap, where the unblocked twin is far above it.
    assert peak(10**7) <= 1.5 * peak(10**6)
    assert peak(10**8) < 8 * 2**30
    assert _twin(strategy).memory.peak(fw, 10**8, 52, "float32") > 8 * 2**30


# --- measuring by hand every target a sweep measures --------------------------------------------


def _measured(monkeypatch):
    """Run `jacbench measure` without a worker: the case it would measure."""
    from jacbench.measure import runner

    seen = []

    def measure_one(case):
        seen.append(case)
        return {"strategy": case.strategy, "status": "not run"}

    monkeypatch.setattr(runner, "measure_one", measure_one)
    return seen


def test_measure_accepts_every_target_of_the_standard_and_full_profiles(monkeypatch, capsys):
    seen = _measured(monkeypatch)
    targets = set()
    for name in ("quick", "standard", "full"):
        for c in profiles.expand(profiles.load_profile(name)):
            targets.add((c.problem, c.framework, c.strategy, c.batch))
    assert ("gbm", "jax", "simulation:jit", 0) in targets
    assert ("gbm", "torch", "simulation:blocked-eager", 0) in targets
    for problem, fw, strategy, batch in sorted(targets):
        args = ["measure", "--framework", fw, "--strategy", strategy]
        if problem in ("gbm", "asian"):  # --paths is an option of theirs only: others refuse it
            args += ["--problem", problem, "--paths", "100"]
        else:
            args += ["--problem", "moments", "--inputs", "100", "--batch", str(batch)]
        assert main(args) == 0, (problem, fw, strategy)
        assert json.loads(capsys.readouterr().out.splitlines()[-1])["strategy"] == strategy
    assert {(c.problem, c.framework, c.strategy, c.batch) for c in seen} == targets


def test_measure_runs_a_simulation_baseline_and_a_blocked_one(capsys):
    for strategy in ("simulation:jit", "simulation:blocked-jit"):
        args = ["measure", "--framework", "jax", "--strategy", strategy, "--paths", "2000"]
        assert main([*args, "--steps", "8", "--repeats", "1", "--timeout", "120"]) == 0
        row = json.loads(capsys.readouterr().out.splitlines()[-1])
        assert (row["strategy"], row["target"], row["status"]) == (strategy, "simulation", "ok")


def test_measure_names_the_simulations_of_a_framework(capsys):
    args = ["measure", "--framework", "jax", "--strategy", "simulation:eager", "--paths", "10"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "simulation:blocked-jit" in err and "simulation:jit" in err


def test_the_jacobian_command_streams_a_blocked_strategy(monkeypatch, capsys):
    monkeypatch.setattr(gbm, "draw_normals", _refuse)
    args = ["jacobian", "--framework", "torch", "--strategy", "blocked-pathwise"]
    assert main([*args, "--paths", "20000", "--steps", "6", "--chunk-size", "1"]) == 0
    line = capsys.readouterr().out
    assert "torch/blocked-pathwise" in line and "N=20000" in line
    assert float(line.rsplit("max relative error ", 1)[1].split()[0]) < TOLERANCE["float32"]


def _refuse(*args, **kwargs):
    raise AssertionError("a blocked target drew the whole (M, N) normals")


def test_the_worker_streams_a_blocked_target(monkeypatch):
    """The worker makes a blocked target's case without normals, and checks it block by block
    against the closed form (draw_normals, the whole-array draw, is never called)."""
    from jacbench.measure import worker

    monkeypatch.setattr(gbm, "draw_normals", _refuse)
    spec = {
        "target": {"framework": "jax", "name": "blocked-pathwise"},
        "baseline": "simulation:blocked-jit",
        "problem": "gbm",
        "params": {"paths": 5000, "steps": 12, "chunk_size": 1},
        "repeats": 2,
        "warm_budget_s": 0.1,
    }
    rec = worker.run(spec)
    assert rec["status"] == "ok", rec.get("message")
    assert rec["max_rel_error"] < TOLERANCE["float32"]
    assert len(rec["ratio_values"]) >= 1


# --- the chapter's figure (its numbers: tests/chapters/test_gbm.py) ---------------------------


def _blocked_rows(df):
    """JAX's jvp rows of the small results fixture relabelled as blocked-jvp at N x 1,000."""
    rows = df[(df["framework"] == "jax") & (df["strategy"] == "jvp")].copy()
    rows["strategy"] = "blocked-jvp"
    rows["paths"] = rows["paths"] * 1000
    return rows


def test_the_blocked_figure_has_a_panel_per_framework_where_no_blocked_row_is(small):
    from jacbench.report import figures

    assert registry.blocked_pairs("numpy") == []
    fig = figures.blocked(small)
    assert len(fig.axes) == 3


def test_the_blocked_figure_draws_a_blocked_strategy_beside_the_one_it_blocks(small):
    import pandas as pd

    from jacbench.report import figures
    from jacbench.report.figures.gbm import _blocked_names

    df = pd.concat([small, _blocked_rows(small)], ignore_index=True)
    assert "simulation:blocked-jit" in _blocked_names("jax")
    assert ("blocked-pathwise-function", "pathwise-function") in registry.blocked_pairs(
        "tensorflow"
    )
    fig = figures.blocked(df, "memory")
    drawn = {line.get_gid() for ax in fig.axes for line in ax.get_lines()}
    assert "jax/blocked-jvp" in drawn and "jax/jvp" in drawn
