"""No page ranks a pair that another calls tied: every comparison a chapter's facts hold, on the
reference dataset, agrees with every other comparison of the same pair at the same size."""

import dataclasses
from collections.abc import Mapping
from pathlib import Path

import pytest

from jacbench.report import dataset, margins, picks
from jacbench.report.chapters import (
    front,
    gbm,
    method,
    modes,
    question,
    recommend,
    vectorized,
    wide,
)

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / dataset.RESULTS


def comparisons(obj, seen=None) -> list[margins.Comparison]:
    """Every Comparison reachable from a facts object: through dataclass fields, mappings and
    sequences."""
    seen = set() if seen is None else seen
    if id(obj) in seen or isinstance(obj, str | bytes | int | float | type(None)):
        return []
    seen.add(id(obj))
    if isinstance(obj, margins.Comparison):
        return [obj]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        values = [getattr(obj, f.name) for f in dataclasses.fields(obj)]
    elif isinstance(obj, Mapping):
        values = list(obj.values())
    elif isinstance(obj, list | tuple | set | frozenset):
        values = list(obj)
    else:
        return []
    return [c for v in values for c in comparisons(v, seen)]


@pytest.fixture(scope="module")
def pages():
    """Each page's facts, computed as its notebook computes them."""
    ds = dataset.Dataset(REFERENCE)
    df, found = dataset.rows(ds), dataset.margins(ds)
    book = picks.compute(df, found)
    return {
        "picks": book,
        "front": front.facts(book),
        "question": question.facts(df),
        "modes": modes.facts(df, found),
        "vectorized": vectorized.facts(df, found),
        "gbm": gbm.facts(df, book),
        "wide": wide.facts(df, book, wide.rows(ds)),
        "recommend": recommend.facts(df, book),
        "method": method.facts(df, found, dataset.sessions(ds)),
    }


def test_the_chapters_compare_through_the_rule(pages):
    found = {name: comparisons(facts) for name, facts in pages.items()}
    # The chapters that rank strategies hold their comparisons as facts.
    for name in ("picks", "modes", "vectorized", "gbm", "wide", "recommend", "method"):
        assert found[name], name


def test_no_page_ranks_a_pair_another_calls_tied(pages):
    verdicts: dict[tuple, dict[str, tuple]] = {}
    for name, facts in pages.items():
        for c in comparisons(facts):
            if len(c.key) < 2:
                continue  # one strategy under two settings (an allocator, a dtype)
            question = (c.problem, c.size, c.key, "cold" if c.basis == "cold" else "repeated")
            said = (c.ranked, c.faster if c.ranked else None)
            verdicts.setdefault(question, {})[name] = said
    disagree = {q: v for q, v in verdicts.items() if len(set(v.values())) > 1}
    assert not disagree, disagree
    assert len(verdicts) > 50  # the book compares many pairs, and these are all of them
