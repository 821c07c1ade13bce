import os
from pathlib import Path

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from jacbench.constants import TOLERANCE  # noqa: E402, F401 - the acceptance tolerance
from jacbench.problems import gbm  # noqa: E402

# The acceptance sizes of the registry tests: N=1,000 paths, M=52 steps.
PATHS, STEPS = 1000, 52


@pytest.fixture(scope="session")
def cases() -> dict[str, gbm.GBMCase]:
    """One case per dtype; float32 holds the float64 normals rounded to float32."""
    return {
        dtype: gbm.make_case(gbm.GBMParams(paths=PATHS, steps=STEPS, dtype=dtype))
        for dtype in gbm.DTYPES
    }


@pytest.fixture(scope="session")
def small_results() -> Path:
    """The committed 51-row results fixture (49 rows of a quick sweep and 2 written by hand:
    PyTorch's jvp under jemalloc and its jacfwd in float64 at N = 1,000, each faster than any
    float32 glibc row there), its metadata and crossover rows beside it: the chapters'
    computations are tested on it without a sweep."""
    return Path(__file__).parent / "data" / "results-small.csv"


@pytest.fixture
def naps_profile(tmp_path) -> Path:
    """A profile of three cases that each sleep a moment (measure.probes.nap): a sweep to run
    without a framework."""
    profile = tmp_path / "naps.yaml"
    profile.write_text(
        "name: naps\ndefaults: {repeats: 1, warm_budget_s: 0.1, timeout: 30}\ngroups:\n"
        "  - frameworks: [callable]\n"
        "    strategies: [callable:jacbench.measure.probes:nap]\n"
        "    paths: [1, 2, 3]\n"
    )
    return profile


@pytest.fixture
def small(small_results):
    """The fixture as a chapter reads it (report.data.load), a fresh frame for each test."""
    from jacbench.report import data

    return data.load(small_results)


@pytest.fixture(scope="session")
def quick_results(tmp_path_factory):
    """The quick profile's cases swept once per test session (about 4 minutes on 2 cores):
    every strategy in a capped worker as the current code runs it. Its crossover is left out:
    the test book is built from the reference dataset, which holds one, and the crossover's
    measuring is tested on its own (tests/test_crossover.py)."""
    from jacbench.measure import profiles, runner

    out = tmp_path_factory.mktemp("results") / "quick.csv"
    profile = profiles.load_profile("quick")
    cases = profiles.expand(profile)
    runner.run_sweep(cases, out, quiet=True, jobs=profile.jobs)
    return out, cases


@pytest.fixture(scope="session")
def book_results() -> Path:
    """The results the test book is built from: the committed reference dataset, as `make
    book` builds the published book."""
    from jacbench.report import dataset

    return Path(__file__).resolve().parents[1] / dataset.RESULTS


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """The book built once per test session as `make book` builds it, from the reference
    dataset with nothing measured: (build folder, path of index.html).

    The folder holds src (the staging tree) and html, like _build after 'make book'.
    """
    from jacbench.publish import book

    root = Path(__file__).resolve().parents[1]
    out = tmp_path_factory.mktemp("book") / "_build"
    index = book.build(root=root, out=out)
    return out, index


# The fixtures that sweep the quick profile or build the book (minutes, once per session): a test
# that uses one is slow, whatever its own marks say; `make test-fast` leaves them out.
HEAVY_FIXTURES = {"quick_results", "built"}


def pytest_collection_modifyitems(items):
    for item in items:
        if HEAVY_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
