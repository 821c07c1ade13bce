import dataclasses
import os
import re
from pathlib import Path

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# Every measuring worker the tests start (a few hundred) is forked from a process that imported
# its framework once, instead of importing it again (1 to 5 s each; measure.forks): the records
# are a fresh worker's but for the import phase. tests/test_forks.py holds the two ways side by
# side; the book's measurements start every worker fresh.
os.environ.setdefault("JACBENCH_WORKERS", "fork")
# And each worker's torch.compile finds what earlier cases and runs compiled in inductor's own
# cache, instead of a fresh one per worker (measure.compile_cost.SHARED_VARIABLE).
os.environ.setdefault("JACBENCH_INDUCTOR_CACHE", "shared")
# Under pytest-xdist (make test runs two workers on the machine's two cores) each worker computes
# on one thread: two workers each spinning up a pool of two would ask four threads of two cores.
# Measuring workers set their own threads (measure.worker), whatever these say.
if os.environ.get("PYTEST_XDIST_WORKER"):
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                 "TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS"):  # fmt: skip
        os.environ.setdefault(name, "1")
    os.environ.setdefault(
        "XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
    )

from jacbench.constants import TOLERANCE  # noqa: E402, F401 - the acceptance tolerance
from jacbench.problems import gbm  # noqa: E402

# The acceptance sizes of the registry tests: N=1,000 paths, M=52 steps. A strategy written as a
# loop over the steps is checked on a loop of LOOP_STEPS: torch.compile and XLA unroll it, and
# compiling 52 steps takes half a minute a strategy and dtype; the check holds for any M (the
# reference dataset and the quick sweep run M=52).
PATHS, STEPS, LOOP_STEPS = 1000, 52, 6


@pytest.fixture(scope="session")
def cases() -> dict[str, gbm.GBMCase]:
    """One case per dtype; float32 holds the float64 normals rounded to float32."""
    return {
        dtype: gbm.make_case(gbm.GBMParams(paths=PATHS, steps=STEPS, dtype=dtype))
        for dtype in gbm.DTYPES
    }


@pytest.fixture(scope="session")
def loop_cases() -> dict[str, gbm.GBMCase]:
    """The cases a strategy over the steps is checked on: LOOP_STEPS steps, one per dtype."""
    return {
        dtype: gbm.make_case(gbm.GBMParams(paths=PATHS, steps=LOOP_STEPS, dtype=dtype))
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


# The test sweep: each case of the quick profile's once per problem, framework, strategy and
# dtype, at its smallest size, the GBM's at no more than SWEEP_PATHS paths (a loop over N
# outputs costs N^2; TensorFlow's took 56 s at 1,000), and the questions' programs at their own
# size as well (their failures are tested); each with the fewest calls: the worker's own minimum
# of 3 warm calls and 3 pairs (measure.worker.MIN_CALLS), in the shortest budget.
SWEEP_PATHS, SWEEP_REPEATS, SWEEP_BUDGET_S = 300, 3, 0.05


def sweep_cases(cases: list) -> list:
    """The test sweep's cases (see SWEEP_PATHS) from the quick profile's, in its order."""
    from jacbench.report.picks import QUESTION_N

    smallest: dict[tuple, object] = {}  # each kind of case at its smallest size, in first order
    for c in cases:
        own = c.strategy == "question" and c.paths == QUESTION_N  # the question's program
        what = (c.problem, c.framework, c.strategy, c.dtype, own)
        size = (c.paths, c.inputs, c.batch)
        if what not in smallest or size < (smallest[what].paths, smallest[what].inputs,
                                            smallest[what].batch):  # fmt: skip
            smallest[what] = c
    kept = []
    for (*_, own), c in smallest.items():
        fewest = {"repeats": min(c.repeats, SWEEP_REPEATS), "warm_budget_s": SWEEP_BUDGET_S}
        kept.append(dataclasses.replace(c, paths=c.paths if own else min(c.paths, SWEEP_PATHS),
                                        **fewest))  # fmt: skip
    return kept


@pytest.fixture(scope="session")
def quick_results(tmp_path_factory):
    """The quick profile swept once per test session as sweep_cases trims it (about 3 minutes
    beside the other tests on 2 cores): every strategy in a capped worker as the current code
    runs it; the tests read what the rows hold, not how fast. Its crossover is left out: the
    test book is built from the reference dataset, which holds one, and the crossover's
    measuring is tested on its own (tests/test_crossover.py)."""
    from jacbench.measure import compile_cost, profiles, runner

    out = tmp_path_factory.mktemp("results") / "quick.csv"
    profile = profiles.load_profile("quick")
    cases = sweep_cases(profiles.expand(profile))
    # No second compile: nothing here reads compile_s (tests/test_compile_cost.py measures it).
    os.environ[compile_cost.MEASURE_VARIABLE] = compile_cost.SKIP
    try:
        runner.run_sweep(cases, out, quiet=True, jobs=profile.jobs)
    finally:
        del os.environ[compile_cost.MEASURE_VARIABLE]
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
# that uses one is slow, whatever its own marks say; `make test-fast` leaves them out. Under
# pytest-xdist (make test: two workers, --dist loadgroup) the tests of each fixture are one
# group, so that one worker makes it, once, while the other runs other tests.
HEAVY_FIXTURES = {"quick_results": "sweep", "built": "book"}


# Likewise the tests of a module that share a module-scoped fixture (advise's run of a reader's
# function, the strategies' Jacobians, a chapter's facts): one group per module, so the fixture
# is made on one worker, once, not on both.
SHARED_SCOPES = ("module", "class")


def _shares_a_fixture(item) -> bool:
    defs = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
    return any(d[-1].scope in SHARED_SCOPES for d in defs.values() if d)


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups into the node ids
def pytest_collection_modifyitems(items):
    for item in items:
        used = [HEAVY_FIXTURES[f] for f in getattr(item, "fixturenames", ()) if f in HEAVY_FIXTURES]
        if used:
            item.add_marker(pytest.mark.slow)
            item.add_marker(pytest.mark.xdist_group("+".join(sorted(used))))
        elif _shares_a_fixture(item):
            module = item.nodeid.split("::")[0]
            item.add_marker(pytest.mark.xdist_group(re.sub(r"\W", "_", module)))
