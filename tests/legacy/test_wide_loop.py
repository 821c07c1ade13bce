"""The loop of gradients against its vectorized forms at every n (report.legacy.wide_loop):
the verdict at the question's n beside the other sizes, TensorFlow's loop against its compiled
call, and the rule's advice framework by framework."""

import pytest

from jacbench.report.legacy import wide_loop as wl
from tests.legacy.test_wide import NM, _timed

N = 100_000
FORMS = ("functional-vectorized", "batched-backward", "jacrev")


def _torch(small, sizes: dict):
    """PyTorch's loop and its three forms at each n: {n: (loop, form) warm seconds}."""
    df = small
    for n, (loop, form) in sizes.items():
        df = _timed(df, "torch", {"grad-loop": loop, **dict.fromkeys(FORMS, form)}, n=n)
    return df


def test_the_loop_is_read_at_every_n_it_ran(small):
    # Faster at n and at 10^6, slower at 10^7, not ranked where both are under a millisecond.
    df = _torch(small, {1000: (0.0005, 0.0003), N: (0.002, 0.004), 10**6: (0.02, 0.04),
                        10**7: (0.8, 0.5)})  # fmt: skip
    by_n = wl.outcomes_by_n(df, "torch", 1.094)
    assert list(by_n) == [1000, N, 10**6, 10**7]
    assert set(by_n[10**7].values()) == {wl.FORM_FASTER}
    assert set(by_n[1000].values()) == {wl.UNRANKED}
    assert wl.loop_verdict(by_n[1000]) == (
        "not ranked against vectorizing them (every call is under a millisecond)"
    )
    assert wl.elsewhere(by_n, N) == (
        "At n = 1,000,000 the loop is also faster than vectorizing them; at n = 1,000 every call "
        "is under a millisecond, where this report does not rank them; at n = 10,000,000 it is "
        "slower than vectorizing them."
    )
    # Read at 10^7 instead, no other size agrees with it: no 'also', and the loop is named in
    # the first clause that ranks it.
    assert wl.elsewhere(by_n, 10**7).startswith(
        "At n = 1,000 every call is under a millisecond, where this report does not rank them; "
        "at n = 100,000 and 1,000,000 the loop is faster"
    )
    assert "also" not in wl.elsewhere(by_n, 10**7)
    # One size only: nothing else to say, and said so.
    assert wl.elsewhere({N: by_n[N]}, N) == "The loop was compared with them at no other n."


def test_the_rule_s_advice_follows_each_framework_s_sizes(small):
    df = _torch(small, {N: (0.002, 0.004), 10**6: (0.02, 0.04), 10**7: (0.8, 0.5)})
    df = _timed(df, "tensorflow", {"tape-jacobian-loop": 0.03, "tape-jacobian-function": 0.0025})
    by = {fw: wl.outcomes_by_n(df, fw, 1.1) for fw in ("torch", "tensorflow", "jax")}
    assert wl.rule_advice(by) == (
        "In PyTorch no vectorized form beat the loop at n = 100,000 and 1,000,000, and "
        "functional-vectorized, batched-backward and jacrev beat it at n = 10,000,000. In "
        "TensorFlow only the compiled tape-jacobian-function (tf.function) beat the eager loop at "
        "n = 100,000; the eager vectorized forms never did, and no loop inside tf.function is "
        "among the strategies. No loop of gradients was measured in JAX."
    )
    # An eager form beating the loop too: the compiled one is not 'only', and the eager ones did.
    both = _timed(df, "tensorflow", {"tape-jacobian-pfor": 0.01})
    said = wl.rule_advice({"tensorflow": wl.outcomes_by_n(both, "tensorflow", 1.1)})
    assert said == (
        "In TensorFlow tape-jacobian-pfor beat it at n = 100,000, and the compiled "
        "tape-jacobian-function (tf.function) beat the eager loop at n = 100,000; no loop inside "
        "tf.function is among the strategies."
    )
    # The loop enough at every n of three or more: said as every n measured; calls under a
    # millisecond said apart, as not ranked.
    df = _torch(small, {1000: (0.0005, 0.0004), 10**4: (0.002, 0.004), N: (0.002, 0.004),
                        10**6: (0.02, 0.04)})  # fmt: skip
    assert wl.rule_advice({"torch": wl.outcomes_by_n(df, "torch", 1.1)}) == (
        "In PyTorch every call is under a millisecond at n = 1,000, where this report does not "
        "rank them; no vectorized form beat the loop at n = 10,000, 100,000 and 1,000,000."
    )
    df = _torch(small, {1000: (0.002, 0.004), N: (0.002, 0.004), 10**6: (0.02, 0.04)})
    assert wl.rule_advice({"torch": wl.outcomes_by_n(df, "torch", 1.1)}) == (
        "In PyTorch no vectorized form beat the loop at every n measured (n = 1,000 to 1,000,000)."
    )


def test_a_ranking_just_past_the_margin_is_said_so(small):
    # jacrev 1.10x faster than the loop against a margin of 1.094 (within THIN of it);
    # functional-vectorized 1.5x faster, clear of it.
    df = _timed(small, "torch", {"grad-loop": 0.0110, "jacrev": 0.0100,
                                 "functional-vectorized": 0.0073})  # fmt: skip
    thin = wl.thin_wins(df, N, "torch", 1.094)
    assert thin == {"jacrev": pytest.approx(1.1)}
    assert wl.loop_verdict(wl.outcomes(df, N, "torch", 1.094), thin, 1.094) == (
        "slower than vectorizing them (jacrev by 1.10×, just past the margin of 1.094×)"
    )
    assert wl.thin_wins(df, N, "torch", 1.0) == {}
    # The loop beating one form thinly and losing to another: the note stays with its clause.
    df = _timed(small, "torch", {"grad-loop": 0.0110, "batched-backward": 0.0121,
                                 "jacrev": 0.0073, "functional-vectorized": 0.0073})  # fmt: skip
    thin = wl.thin_wins(df, N, "torch", 1.094)
    assert thin == {"batched-backward": pytest.approx(1.1)}
    assert wl.loop_verdict(wl.outcomes(df, N, "torch", 1.094), thin, 1.094) == (
        "faster than batched-backward (by 1.10×, just past the margin of 1.094×), slower than "
        "functional-vectorized and jacrev"
    )


def test_tensorflow_s_loop_over_its_compiled_call_at_n_and_over_every_n(small):
    df = _timed(small, "tensorflow", {"tape-jacobian-loop": 0.03, "tape-jacobian-function": 0.0025})
    df = _timed(df, "tensorflow", {"tape-jacobian-loop": 0.4, "tape-jacobian-function": 0.1},
                n=10**7)  # fmt: skip
    assert wl.loop_of("tensorflow") == "tape-jacobian-loop" and wl.loop_of("torch") == "grad-loop"
    assert wl.loop_over_form(df, N, "tensorflow", "tape-jacobian-function") == (
        "12.0× as long as tape-jacobian-function at n = 100,000 (4.0× to 12.0× over n = 100,000 "
        "to 10,000,000)"
    )
    assert wl.loop_over_form(df, 1000, "tensorflow", "tape-jacobian-function") == NM
    assert wl.loop_over_form(df, N, "tensorflow", None) == NM


def test_the_noise_rule_names_the_margins_where_there_are_any():
    said = wl.noise_rule({"torch": 1.094, "tensorflow": 1.894, "jax": 1.147})
    assert said == (
        "its median is shorter by more than the framework's margin (PyTorch 1.094×, TensorFlow "
        "1.894×, JAX 1.147×), and the other's fastest call is slower than that median; two calls "
        "both under a millisecond are not ranked"
    )
    assert wl.noise_rule(dict.fromkeys(("torch", "jax"), 1.0)).startswith(
        "its median is shorter, and"
    )


def test_the_question_s_advice_where_every_call_is_under_a_millisecond(small):
    df = _torch(small, {N: (0.0005, 0.0004)})
    assert wl.loop_advice(wl.outcomes(df, N), N) == (
        "With a handful of outputs, at n = 100,000 every call is under a millisecond, where this "
        "report does not rank them."
    )
    assert wl.vectorizing_reason(wl.outcomes(df, N)).endswith(
        "here every call is under a millisecond, where this report does not rank them."
    )
