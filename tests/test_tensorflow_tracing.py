"""Why TensorFlow's eager tape.jacobian stays slow when warm: pfor traces it again every call.

Eager GradientTape.jacobian hands its loop to pfor, which wraps it in a new tf.function each
time: the loop body is traced and vectorized on every call, warm or not. The registered
tape-jacobian-function strategy puts the tape inside one tf.function, traced once.
"""

import numpy as np
import pytest

# A plain import: TensorFlow is pinned, and a broken install must fail here, not skip.
from tensorflow.python.ops.parallel_for import control_flow_ops

from jacbench.problems import moments
from jacbench.strategies import registry

CALLS = 4


@pytest.fixture
def conversions(monkeypatch):
    """How many times pfor vectorized a loop body (once per trace of its function)."""
    count = [0]
    original = control_flow_ops._pfor_impl

    def counted(*args, **kwargs):
        count[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(control_flow_ops, "_pfor_impl", counted)
    return count


@pytest.fixture(scope="module")
def case():
    return moments.make_case(moments.MomentsParams(inputs=200, dtype="float64"))


def test_eager_tape_jacobian_vectorizes_again_on_every_call(case, conversions):
    run = registry.get("tensorflow", "tape-jacobian-pfor").build(case)
    for _ in range(CALLS):
        run()
    assert conversions[0] == CALLS


def test_tape_jacobian_in_a_function_is_traced_once(case, conversions):
    run = registry.get("tensorflow", "tape-jacobian-function").build(case)
    results = [run() for _ in range(CALLS)]
    assert conversions[0] == 1 and run.traces() == 1
    expected = moments.jacobian_closed_form(case.x)
    for out in results:
        np.testing.assert_allclose(out.jacobian, expected, rtol=1e-12)
