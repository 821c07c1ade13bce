"""A named profile measured whole: its cases and its crossover, into a results file and the
crossover file beside it. What `make book PROFILE=...` and `jacbench reference` run before the
book is built; measurement only (the book's build lives in jacbench.publish)."""

from __future__ import annotations

import sys
from pathlib import Path

from jacbench.measure import crossover, profiles, runner


def _say(text: str) -> None:
    print(f"[jacbench] {text}", file=sys.stderr, flush=True)


def measure_profile(profile: str, results: Path) -> Path:
    """Sweep a profile into results and its crossover beside them, measuring only the cases the
    files lack (both are resumable). Returns the results' path."""
    _say(f"sweeping the {profile} profile into {results} (cases already measured are kept)")
    spec = profiles.load_profile(profile)
    runner.run_sweep(profiles.expand(spec), results, jobs=spec.jobs)
    _say(f"the tall-to-wide crossover into {crossover.path_for(results)} (cases kept)")
    crossover.run_profile(spec, results)
    return results
