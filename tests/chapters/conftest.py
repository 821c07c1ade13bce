"""What the chapters' tests share: the reference dataset, fresh for each test that edits it,
and its other measuring sessions, which the margins read."""

from pathlib import Path

import pytest

from jacbench.report import data, dataset

REFERENCE = Path(__file__).resolve().parents[2] / dataset.RESULTS


@pytest.fixture(scope="session")
def others():
    """The other sessions' rows beside the reference dataset."""
    return dataset.others(dataset.Dataset(REFERENCE))


@pytest.fixture
def reference():
    """The reference dataset's rows, a fresh frame for each test (tests edit them)."""
    return data.load(REFERENCE)
