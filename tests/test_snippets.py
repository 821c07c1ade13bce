"""The answer's snippets (book/snippets): each runs as a reader pastes it, checks itself against
the closed form, and is the strategy the book picks; no curly quote in any code."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from jacbench.report import data, dataset, picks
from jacbench.report.chapters import front
from jacbench.report.chapters.front.facts import FOLDER
from jacbench.second import registry as second
from jacbench.strategies import registry
from tests.chapters.rows import at, edit

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / dataset.RESULTS


def test_every_snippet_is_a_file_of_15_to_25_lines_with_its_answer_marked():
    files = {p.name for p in (ROOT / FOLDER).glob("*.py")}
    assert files == {s.file for s in front.SNIPPETS}
    for s in front.SNIPPETS:
        text = (ROOT / s.path).read_text()
        lines = [ln for ln in text.splitlines() if ln.strip()]
        assert 15 <= len(lines) <= 25, (s.file, len(lines))
        assert text.count("# [answer]") == 1 and text.count("# [/answer]") == 1, s.file
        assert max(len(ln) for ln in text.splitlines()) <= 90, s.file  # fits the page's column


def test_every_snippet_names_registered_strategies():
    for s in front.SNIPPETS:
        for name in filter(None, (s.first, s.compiled)):
            assert registry.get(s.framework, name).problems
        if s.hessian:
            assert second.get(s.framework, s.hessian)


@pytest.mark.slow  # about a minute: torch.compile, TensorFlow and JAX start up
@pytest.mark.parametrize("snippet", front.SNIPPETS, ids=lambda s: s.file)
def test_each_snippet_runs_and_checks_itself(snippet):
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run([sys.executable, str(ROOT / snippet.path)], capture_output=True,
                          text=True, env=env, timeout=600, cwd=ROOT)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "match the closed form" in done.stdout or "matches the closed form" in done.stdout


CHECKS = {  # the book's other runnable files, each with what it prints when its checks hold
    "pathwise_check.py": "catches the coupled ones",
    "blocked_paths.py": "matches the closed form",
}


def test_the_books_other_files_are_the_two_it_shows():
    assert {p.name for p in (ROOT / FOLDER / "checks").glob("*.py")} == set(CHECKS)
    shown = (ROOT / "notebooks" / "04-gbm.md").read_text() + (
        ROOT / "notebooks" / "07-recommend.md"
    ).read_text()
    for name in CHECKS:
        assert f"snippets/checks/{name}" in shown, name


@pytest.mark.slow  # PyTorch starts up; the blocks take seconds
@pytest.mark.parametrize("name", sorted(CHECKS))
def test_the_coupling_check_and_the_blocks_run_as_pasted(name):
    """The pathwise check passes on independent paths and fails on moment-matched ones (its own
    asserts say so), and the blocked Jacobian matches the closed form."""
    done = subprocess.run([sys.executable, str(ROOT / FOLDER / "checks" / name)],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert CHECKS[name] in done.stdout
    if name == "pathwise_check.py":
        gaps = [float(line.rsplit(": ", 1)[1].split()[0]) for line in done.stdout.splitlines()
                if line.startswith("paths coupled")]  # fmt: skip
        assert gaps[0] < 1e-5 and gaps[1] > 0.5, gaps


def test_every_snippet_is_a_pick_on_the_reference_and_stops_being_one_when_it_slows():
    df = data.load(REFERENCE)
    found = dataset.margins(dataset.Dataset(REFERENCE))
    assert front.facts(picks.compute(df, found)).all_picked
    i = at(df, "jax", "steps-carry", paths=picks.QUESTION_N)
    warm, ratio = df.loc[i, "warm_median_s"] * 20, df.loc[i, "ratio_median"] * 20
    edit(df, i, warm_median_s=warm, warm_min_s=warm, ratio_median=ratio)
    edit(df, i, ratio_lo=ratio * 0.95, ratio_hi=ratio * 1.05)
    f = front.facts(picks.compute(df, found))
    assert not f.answer("tall", "jax").repeated_pick and not f.all_picked


CURLY = re.compile("[\u2018\u2019\u201c\u201d]")


def _code(text: str) -> list[str]:
    """The code a Markdown page holds: fenced blocks and inline code."""
    fences = re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.S | re.M)
    inline = re.findall(r"`([^`\n]+)`", re.sub(r"^```.*?^```", "", text, flags=re.S | re.M))
    return fences + inline


def test_no_curly_quote_in_any_code():
    sources = [*(ROOT / "notebooks").glob("*.md"), *(ROOT / "book").glob("*.md")]
    for path in sources:
        for code in _code(path.read_text()):
            assert not CURLY.search(code), f"{path.name}: {code[:80]}"
    for s in front.SNIPPETS:
        assert not CURLY.search((ROOT / s.path).read_text()), s.file
