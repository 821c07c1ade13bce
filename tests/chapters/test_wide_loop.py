"""The loop of gradients against its vectorized forms at every n (report.chapters.wide_loop):
the verdict at the question's n beside the other sizes, TensorFlow's loop against its compiled
call, and the rule's advice framework by framework."""

from jacbench.report.chapters import wide_loop as wl
from tests.chapters.test_wide import NM, _timed

N = 100_000
FORMS = ("functional-vectorized", "batched-backward", "jacrev")


def _torch(small, sizes: dict):
    """PyTorch's loop and its three forms at each n: {n: (loop, form) warm seconds}."""
    df = small
    for n, (loop, form) in sizes.items():
        df = _timed(df, "torch", {"grad-loop": loop, **dict.fromkeys(FORMS, form)}, n=n)
    return df


def test_the_loop_is_read_at_every_n_it_ran(small):
    # Faster at n and at 10^6, slower at 10^7, within the noise under a millisecond (10^3).
    df = _torch(small, {1000: (0.0005, 0.0003), N: (0.002, 0.004), 10**6: (0.02, 0.04),
                        10**7: (0.8, 0.5)})  # fmt: skip
    by_n = wl.outcomes_by_n(df, "torch", 1.094)
    assert list(by_n) == [1000, N, 10**6, 10**7]
    assert set(by_n[10**7].values()) == {wl.FORM_FASTER}
    assert set(by_n[1000].values()) == {wl.WITHIN_NOISE}
    assert wl.elsewhere(by_n, N) == (
        "At n = 1,000,000 the loop is also faster than vectorizing them; at n = 1,000 it is "
        "about as fast as vectorizing them (within the noise of the measurement); at "
        "n = 10,000,000 it is slower than vectorizing them."
    )
    # Read at 10^7 instead, no other size agrees with it: no 'also'.
    assert wl.elsewhere(by_n, 10**7).startswith(
        "At n = 1,000 the loop is about as fast as vectorizing them"
    )
    assert "also" not in wl.elsewhere(by_n, 10**7)
    # One size only: nothing else to say, and said so.
    assert wl.elsewhere({N: by_n[N]}, N) == "The loop was compared with them at no other n."


def test_the_rule_s_advice_follows_each_framework_s_sizes(small):
    df = _torch(small, {N: (0.002, 0.004), 10**6: (0.02, 0.04), 10**7: (0.8, 0.5)})
    df = _timed(df, "tensorflow", {"tape-jacobian-loop": 0.03, "tape-jacobian-function": 0.0025})
    by = {fw: wl.outcomes_by_n(df, fw, 1.1) for fw in ("torch", "tensorflow", "jax")}
    assert wl.rule_advice(by) == (
        "in PyTorch no vectorized form beat it by more than the noise at n = 100,000 and "
        "1,000,000, and functional-vectorized, batched-backward and jacrev beat it at "
        "n = 10,000,000; in TensorFlow tape-jacobian-function beat it at n = 100,000; no loop of "
        "gradients was measured in JAX"
    )
    # The loop enough at every n of three or more: said as every n measured.
    df = _torch(small, {1000: (0.002, 0.004), N: (0.002, 0.004), 10**6: (0.02, 0.04)})
    assert wl.rule_advice({"torch": wl.outcomes_by_n(df, "torch", 1.1)}) == (
        "in PyTorch no vectorized form beat it by more than the noise at every n measured "
        "(n = 1,000 to 1,000,000)"
    )


def test_tensorflow_s_loop_over_its_compiled_call_at_n_and_over_every_n(small):
    df = _timed(small, "tensorflow", {"tape-jacobian-loop": 0.03, "tape-jacobian-function": 0.0025})
    df = _timed(df, "tensorflow", {"tape-jacobian-loop": 0.4, "tape-jacobian-function": 0.1},
                n=10**7)  # fmt: skip
    assert wl.loop_of("tensorflow") == "tape-jacobian-loop" and wl.loop_of("torch") == "grad-loop"
    assert wl.loop_over_form(df, N, "tensorflow", "tape-jacobian-function") == (
        "12.0× its time at n = 100,000 (4.0× to 12.0× over n = 100,000 to 10,000,000)"
    )
    assert wl.loop_over_form(df, 1000, "tensorflow", "tape-jacobian-function") == NM
    assert wl.loop_over_form(df, N, "tensorflow", None) == NM
