"""Chapter 5's facts (report.chapters.limit): the machine's limit, each form's fastest Jacobian
against it, the loop's strategies, the loops drawing their own normals and the Asian payoff."""

import pandas as pd
import pytest

from jacbench.report import data, queries
from jacbench.report.chapters import limit
from jacbench.report.chapters.limit import TABLE_N, tables
from jacbench.strategies import registry
from tests.chapters.conftest import REFERENCE
from tests.chapters.rows import at, edit


@pytest.fixture(scope="module")
def ref_facts():
    return limit.facts(data.load(REFERENCE))


def _rows(df, **conditions):
    return queries.where(df, status="ok", **{**queries.BASE, **conditions})


def test_the_limit_is_numpy_s_read_of_the_normals_at_every_n(reference, ref_facts):
    reads = _rows(reference, problem="gbm", target="limit", framework="numpy")
    assert ref_facts.reads == {int(r["paths"]): pytest.approx(r["warm_median_s"])
                               for _, r in reads.iterrows()}  # fmt: skip
    assert {n for n in ref_facts.reads} >= {10_000, 100_000, 1_000_000, 10_000_000}
    for fw in ("torch", "tensorflow", "jax"):
        assert (fw, TABLE_N) in ref_facts.own_reads
    # Two ways of one bandwidth: the sweep's probe and the normals' bytes over their read.
    row = reads[reads["paths"] == TABLE_N].iloc[0]
    assert ref_facts.bandwidth_read == pytest.approx(
        int(row["steps"]) * TABLE_N * 4 / row["warm_median_s"] / 1e9
    )
    assert ref_facts.bandwidth and 0.5 < ref_facts.bandwidth / ref_facts.bandwidth_read < 2
    assert set(ref_facts.dispatch) == {"torch", "tensorflow", "jax"}


def test_the_best_of_each_form_is_its_fastest_candidate(reference, ref_facts):
    for b in ref_facts.best:
        rows = queries.candidates(_rows(reference, problem="gbm", target="strategy",
                                        framework=b.framework, form=b.form, paths=b.n))  # fmt: skip
        assert b.warm_s == pytest.approx(rows["warm_median_s"].min())
        assert registry.get(b.framework, b.name).form == b.form
        if b.n in ref_facts.reads:
            assert b.over_read == pytest.approx(b.warm_s / ref_facts.reads[b.n])
        else:  # 10^8 paths: only the loops drawing their own normals ran, and no read
            assert b.over_read is None and b.n > max(ref_facts.reads)
    for fw in ("torch", "tensorflow", "jax"):
        a, s = ref_facts.of(fw, "array"), ref_facts.of(fw, "steps")
        assert ref_facts.gain(fw) == pytest.approx(a.warm_s / s.warm_s)


def test_a_faster_row_becomes_the_best_of_its_form(reference):
    df = reference.copy()
    before = limit.facts(df).of("jax", "array")
    i = at(df, "jax", "jacfwd", paths=TABLE_N)
    fast = before.warm_s / 1000
    edit(df, i, warm_median_s=fast)
    after = limit.facts(df)
    assert after.of("jax", "array").name == "jacfwd" and after.of("jax", "array").warm_s == fast
    # The step form's best is untouched: the forms are ranked apart.
    assert after.of("jax", "steps") == limit.facts(reference).of("jax", "steps")


def test_the_step_table_holds_the_loops_not_those_drawing_their_own(reference, ref_facts):
    names = {(s.framework, s.name) for s in ref_facts.steps}
    assert ("jax", "steps-carry") in names and ("jax", "steps-jit") in names
    drawn = {(s.framework, s.name) for s in registry.STRATEGIES if s.drawn}
    assert not names & drawn
    assert not any(n.startswith(("drawn-", "draws-")) for _, n in names)
    carry = ref_facts.step("jax", "steps-carry")
    row = reference.loc[at(reference, "jax", "steps-carry", paths=TABLE_N)]
    assert carry.ratio == pytest.approx(row["ratio_median"]) and carry.compiled


def test_the_loops_drawing_their_own_reach_the_largest_n(reference, ref_facts):
    top = ref_facts.largest_drawn
    assert top == 100_000_000
    assert {d.framework for d in ref_facts.drawn_at(top)} == {"torch", "tensorflow", "jax"}
    for d in ref_facts.drawn:
        if d.draws_s is not None:
            assert d.draw_share == pytest.approx(d.draws_s / d.warm_s)
    assert ref_facts.blocked_draw_share and ref_facts.blocked_n == 10_000_000
    assert ref_facts.philox is not None and ref_facts.philox[0] > ref_facts.philox[1]


def test_the_asian_payoff_has_both_forms_in_every_framework(ref_facts):
    assert set(ref_facts.asian) == {(fw, form) for fw in ("torch", "tensorflow", "jax")
                                   for form in ("array", "steps")}  # fmt: skip


def test_the_tables_show_every_fact(ref_facts):
    assert len(tables.reads(ref_facts)) == len(ref_facts.reads)
    forms = tables.forms(ref_facts)
    assert len(forms) == 6 and list(forms["× one read"]).count("–") == 0
    assert len(tables.steps(ref_facts)) == len(ref_facts.steps)
    assert len(tables.drawn(ref_facts, ref_facts.largest_drawn)) == 3
    assert isinstance(tables.asian(ref_facts), pd.DataFrame) and len(tables.asian(ref_facts)) == 6
    carries = {
        "torch": "steps-compiled-carry",
        "tensorflow": "steps-carry-xla",
        "jax": "steps-carry",
    }
    held = tables.held(ref_facts, carries)
    assert len(held) == 3 and "–" not in held.to_numpy().ravel().tolist()


def test_the_loops_memory_at_ten_million_paths_is_read_from_its_rows(reference, ref_facts):
    """The loops' rows at HELD_N, each with its peak over the inputs, a warm call's own peak
    and what its inputs took, and the normals' bytes there: M x N float32 values."""
    normals = ref_facts.normals_held
    assert normals == 52 * limit.HELD_N * 4
    outputs = 3 * limit.HELD_N * 4  # S_T and the N x 2 Jacobian, float32
    for name, fw in (("steps-compiled-carry", "torch"), ("steps-carry-xla", "tensorflow"),
                     ("steps-carry", "jax")):  # fmt: skip
        t = ref_facts.step(fw, name, limit.HELD_N)
        row = reference.loc[at(reference, fw, name, paths=limit.HELD_N)]
        assert t.beyond_inputs == pytest.approx(row["peak_over_inputs"])
        assert t.call_held == pytest.approx(row["warm_peak_over_baseline"])
        assert t.inputs_held == pytest.approx(row["cold_rss_before"] - row["inputs_rss_before"])
        # A warm call writes its outputs and holds less than a tenth of the normals beside them
        assert outputs * 0.9 < t.call_held < 0.1 * normals, (fw, t.call_held)
        # PyTorch's tensor shares numpy's normals; TensorFlow and JAX copy them with the inputs
        assert (t.inputs_held > 0.9 * normals) == (fw != "torch"), (fw, t.inputs_held)
        # growing with N, by less than a path's normals (208 bytes); the first call's peak is
        # the larger of the compiler's and the data's, so the slope need not reach the outputs'
        assert 0 < ref_facts.per_path(fw, name) < 208, (fw, ref_facts.per_path(fw, name))
