"""A named profile measured whole: its cases and its crossover, into a results file and the
crossover file beside it. What `jacbench sweep`, `make book PROFILE=...` and `jacbench reference`
run; measurement only (the book's build lives in jacbench.publish). The cases, the crossover's
too, run here (measure.runner) or, with a cluster, on a Dask cluster's machines
(measure.cluster_sweep)."""

from __future__ import annotations

import sys
from pathlib import Path

from jacbench.errors import UsageError
from jacbench.measure import crossover, profiles, runner, store
from jacbench.measure.case import Case
from jacbench.measure.dataset import Dataset


def _say(text: str) -> None:
    print(f"[jacbench] {text}", file=sys.stderr, flush=True)


def run(cases: list[Case], out: Path, cluster: str | None = None, **options) -> Path:
    """runner.run_sweep's sweep (options: quiet, fresh, jobs, wait, stop_after), here or, with
    cluster (local, tcp://HOST:PORT or slurm), on a Dask cluster."""
    if cluster is None:
        return runner.run_sweep(cases, out, **options)
    from jacbench.measure import cluster_sweep

    return cluster_sweep.run(list(cases), out, cluster, **options)


def measure_profile(profile: str, results: Path, cluster: str | None = None) -> Path:
    """Sweep a profile into results and its crossover beside them, measuring only the cases the
    files lack (both are resumable), here or on cluster where one is given: there each case of
    either is one task, like a sweep's (measure.cluster_sweep). Returns the results' path."""
    where = f" on the cluster {cluster}" if cluster else ""
    _say(f"sweeping the {profile} profile into {results}{where} (cases already measured are kept)")
    spec = profiles.load_profile(profile)
    run(profiles.expand(spec), results, cluster, jobs=spec.jobs)
    out = Dataset(results).crossover
    _say(f"the tall-to-wide crossover into {out}{where} (cases kept)")
    run(crossover.profile_cases(spec), out, cluster, jobs=spec.crossover.jobs)
    return results


def sweep(
    profile: str,
    overrides: dict | None = None,
    out: str | Path | None = None,
    fresh: bool = False,
    jobs: int | None = None,
    quiet: bool = False,
    wait: bool = False,
    stop_after: float | None = None,
    cluster: str | None = None,
) -> str:
    """The sweep command: a profile's cases (overrides applied) measured into out (default
    results/NAME.csv), after any other sweep writing it if wait, here or on a Dask cluster;
    returns a one-line account of the file."""
    spec = profiles.load_profile(profile)
    cases = profiles.expand(spec, overrides)
    if not cases:
        raise UsageError("the profile and filters select no case")
    name = spec.name
    out = Path(out) if out else Path("results") / f"{name}.csv"
    jobs = jobs if jobs is not None else spec.jobs
    if jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {jobs}")
    if stop_after is not None and not stop_after > 0:
        raise UsageError(f"--stop-after must be positive, got {stop_after}")
    run(cases, out, cluster, quiet=quiet, fresh=fresh, jobs=jobs, wait=wait, stop_after=stop_after)
    rows = store.read_rows(out)
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    tally = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
    return f"{out}: {len(rows)} rows ({tally}); metadata in {Dataset(out).meta}"
