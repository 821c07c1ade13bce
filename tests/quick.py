"""What the quick profile leaves out, for the tests that hold it to every registered strategy."""

# PyTorch's compiled loops over the steps but the carried tangent and the pathwise gradient:
# unrolling 52 steps takes each half a minute to compile, and tests/test_steps.py checks them
# (and every other strategy) on a loop of six steps.
LEFT_OUT = {
    ("torch", name)
    for name in (
        "steps-compiled-jvp",
        "steps-compiled-jacfwd",
        "steps-compiled-checkpoint",
        "steps-segmented-carry",
    )
}
