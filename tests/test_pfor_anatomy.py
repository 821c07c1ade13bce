"""TensorFlow's pfor program for the GBM: the batches it makes and holds, against the memory
model's coefficient and the reference dataset's measured peak."""

import pytest

from jacbench.problems.gbm import GBMParams
from jacbench.report import data, dataset, queries
from jacbench.strategies import pfor_anatomy, registry

PFOR = ("tensorflow", "tape-jacobian-pfor")


@pytest.fixture(scope="module")
def traced():
    return pfor_anatomy.anatomy(200, 52)


def test_spans_overlap_counted():
    assert pfor_anatomy._most_alive([(0, 3), (1, 2), (4, 5)]) == 2
    assert pfor_anatomy._most_alive([(0, 1), (1, 2), (2, 3)]) == 2  # freed after its last read
    assert pfor_anatomy._most_alive([]) == 0


@pytest.mark.slow  # TensorFlow traced in child processes: about 10 s
def test_batches_do_not_depend_on_the_sizes(traced):
    other = pfor_anatomy.anatomy(64, 10)
    assert traced.made and other.made == traced.made
    assert (other.in_order, other.when_ready) == (traced.in_order, traced.when_ready)
    # Running ready operations side by side can only hold more at once than one at a time.
    assert 1 <= traced.in_order <= traced.when_ready <= len(traced.made)


@pytest.mark.slow  # TensorFlow traced in child processes: about 10 s
def test_model_counts_the_batches_alive_when_ready(traced):
    batch = registry.get(*PFOR).memory.batch
    assert traced.when_ready <= batch < traced.when_ready + 0.5


@pytest.mark.slow  # TensorFlow traced in child processes: about 10 s
def test_measured_peak_is_the_batches_alive_when_ready(traced):
    df = data.load(dataset.RESULTS)
    row = queries.largest_ok(df, *PFOR)
    n = int(row["paths"])
    measured = row["peak_over_inputs"] / (n * GBMParams(paths=n).path_array_bytes)
    assert n >= 1000
    assert traced.when_ready <= measured < traced.when_ready + 0.5
