"""What to use (chapter 6), the limits of its rules for the tall Jacobian: compiled variants
against their eager twins, forward mode's memory against the pathwise gradient's, and the
unblocked forms' predicted peaks where only blocked ones ran, on the committed fixture and on
rows edited from it."""

import pytest

from jacbench.report import formats
from jacbench.report.legacy import caveats as cv
from jacbench.strategies import registry
from tests.legacy.rows import at, copy, edit

NM = formats.NOT_MEASURED


# --- Compiled against eager -------------------------------------------------------------------


def test_compiled_variants_that_beat_their_twins_everywhere(small):
    # At N = 1,000: PyTorch's compiled-pathwise 338 µs against pathwise 413 µs; TensorFlow's
    # forward-accumulator-function 1.5 ms against 31.5 ms, pathwise-function 882 µs against
    # 7.9 ms.
    pairs = cv.compiled_pairs(small)
    assert list(zip(pairs["compiled"], pairs["eager"], strict=True)) == [
        ("compiled-pathwise", "pathwise"),
        ("forward-accumulator-function", "forward-accumulator"),
        ("pathwise-function", "pathwise"),
    ]
    assert cv.compiled_sentence(small) == (
        "per call, PyTorch's and TensorFlow's beat their eager twins by more than the noise in "
        "2 of the 3 pairs measured, at N = 1,000; in the other 1 the two are within the noise or "
        "under a millisecond."
    )
    # With a margin wider than TensorFlow's 8.9x and 21x, neither of its pairs is clear.
    wide = cv.compiled_sentence(small, {"tensorflow": 25.0})
    assert "by more than the noise in 0 of the 3 pairs" in wide and "other 3" in wide


def test_a_compiled_variant_slower_than_its_twin_is_named(small):
    # TensorFlow's pathwise-function made slower than its eager pathwise (7.9 ms): within the
    # noise by its fastest call, then by more than it.
    i = at(small, "tensorflow", "pathwise-function", paths=1000)
    edit(small, i, warm_median_s=0.0095, warm_min_s=0.0075)
    said = cv.compiled_sentence(small)
    assert said.endswith(
        "in the other 2 the two are within the noise or under a millisecond, and in 1 of those "
        "the compiled one is the slower by the median: TensorFlow's pathwise-function (9.5 ms) "
        "against pathwise (7.9 ms) at N = 1,000."
    )
    edit(small, i, warm_median_s=0.0195, warm_min_s=0.019)
    said = cv.compiled_sentence(small)
    assert said.endswith(
        "; in 1 the eager twin was the faster by more than the noise: TensorFlow's "
        "pathwise-function (19.5 ms) against pathwise (7.9 ms) at N = 1,000."
    )


def test_without_an_eager_twin_nothing_is_compared(small):
    no_twins = small[~small["strategy"].isin(["pathwise", "forward-accumulator"])]
    assert cv.compiled_pairs(no_twins).empty
    assert cv.compiled_sentence(no_twins) == (
        f"per call, against their eager twins, they were {NM}."
    )


# --- Forward mode's memory against the pathwise gradient's -------------------------------------


def test_forward_mode_against_the_pathwise_gradient_framework_by_framework(small):
    # Largest N where both ran: JAX N = 1,000 (jvp 41,021,440 B, pathwise 45,961,216 B: 1.12
    # apart, less), PyTorch N = 10,000 (133,738,496 B against 52,314,112 B: more), TensorFlow
    # N = 1,000 (10,027,008 B against 4,333,568 B: more).
    assert cv.forward_against_pathwise(small) == (
        "At M = 52, at the largest N where both ran, forward mode held less beyond the inputs "
        "than the pathwise gradient in JAX (jvp 39.1 MiB against 43.8 MiB, N = 1,000) and more "
        "in PyTorch (jvp 127.5 MiB against 49.9 MiB, N = 10,000) and TensorFlow "
        "(forward-accumulator 9.6 MiB against 4.1 MiB, N = 1,000)."
    )


def test_forward_mode_at_one_n_and_about_the_same(small):
    # Only TensorFlow and JAX at N = 1,000; TensorFlow's two peaks made within 1.1 of each other.
    df = small[small["framework"] != "torch"].copy()
    edit(df, at(df, "tensorflow", "forward-accumulator", paths=1000), peak_over_inputs=4.5e6)
    assert cv.forward_against_pathwise(df) == (
        "At M = 52 and N = 1,000 forward mode held less beyond the inputs than the pathwise "
        "gradient in JAX (jvp 39.1 MiB against 43.8 MiB) and about the same in TensorFlow "
        "(forward-accumulator 4.3 MiB against 4.1 MiB)."
    )
    none = small[~small["strategy"].isin(["pathwise"])]
    assert cv.forward_against_pathwise(none) == (
        f"Forward mode's memory beside the pathwise gradient's was {NM}."
    )


# --- What the unblocked forms would need where only blocked ones ran --------------------------


def with_blocked(small, n=10**6):
    """The fixture with PyTorch's blocked-jvp at N = n (a copy of its jvp row at 100,000)."""
    return copy(small, at(small, "torch", "jvp", paths=100_000), strategy="blocked-jvp", paths=n)


def test_where_only_blocked_forms_ran_the_unblocked_ones_are_predicted(small):
    df = with_blocked(small)
    assert cv.blocked_only(df) == (10**6, 4 * 2**30)
    needs = cv.unblocked_needs(df)
    # The largest N an unblocked candidate ran is 100,000: PyTorch's jvp alone.
    assert list(needs["strategy"]) == ["jvp"] and list(needs["from"]) == [100_000]
    model = registry.get("torch", "jvp").memory.peak("torch", 10**6, 52, "float32")
    assert needs["predicted"].iloc[0] == model
    # Its peak 371,261,440 B at 10,000 and 746,774,528 B at 100,000, carried to 10^6.
    slope = (746_774_528 - 371_261_440) / 90_000
    assert needs["carried"].iloc[0] == pytest.approx(746_774_528 + slope * 900_000, rel=1e-6)
    said = cv.beyond_sentence(df, "PyTorch's blocked-jvp")
    assert said.startswith(
        "At N = 1,000,000 only the blocked forms were measured (PyTorch's blocked-jvp): one "
        "block of paths at a time (how their memory grows with N is measured in the GBM "
        "chapter). "
        "The unblocked forms were not run there. For those that ran at N = 100,000, the memory "
        f"model predicts peaks of {formats.size(model)} (PyTorch's jvp) to "
        f"{formats.size(model)} (PyTorch's jvp) at N = 1,000,000, against the 4.0 GiB cap there"
    )
    # Both estimates (2.4 and 4.2 GiB) within 1.25x the 4 GiB cap: it might have run there.
    assert said.endswith(
        f"(PyTorch's jvp): predictions, not measurements. PyTorch's jvp "
        f"({formats.span([model, needs['carried'].iloc[0]], formats.size)} by the two "
        "estimates) are not predicted well above the cap: they might have run there."
    )


def test_an_unblocked_form_predicted_well_above_the_cap_is_not_named(small, monkeypatch):
    # Both estimates (2.4 and 4.2 GiB) above half the 4 GiB cap: with "well above" meaning
    # more than half the cap, PyTorch's jvp is not named as one that might have run.
    monkeypatch.setattr(cv, "NEAR_CAP", 0.5)
    said = cv.beyond_sentence(with_blocked(small), "x")
    assert said.endswith("predictions, not measurements.") and "might have run" not in said


def test_an_unblocked_form_that_failed_there_is_not_called_unrun(small):
    df = with_blocked(small)
    df = copy(df, at(df, "torch", "jvp", paths=100_000), paths=10**6, status="memory-cap")
    assert "No unblocked form finished there." in cv.beyond_sentence(df, "x")


def test_no_blocked_only_size_where_an_unblocked_form_ran_as_far(small):
    # Blocked at 100,000, where PyTorch's jvp ran too.
    df = with_blocked(small, 100_000)
    assert cv.blocked_only(df) is None
    assert cv.unblocked_needs(df).empty
    assert cv.beyond_sentence(df, "x") == (
        "The blocked forms (x) hold one block of paths at a time; here an unblocked form ran "
        "at every N where a blocked one did."
    )
    assert cv.beyond_sentence(small, "x") == (
        f"The blocked forms (x) hold one block of paths at a time; they were {NM}."
    )
