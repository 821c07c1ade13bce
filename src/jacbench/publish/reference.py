"""The reference dataset: the standard profile measured on the reference machine, committed in
``book/reference/`` so that the book's numbers ship with its code.

``make book`` builds the book from it without measuring; ``make reference`` measures the cases
it lacks (the resumable sweep, then the crossover) and redraws the README's figure from it. Local
sweeps write to ``results/`` and never here. Its coverage is checked against the profile: a case
the standard profile expands to and the dataset lacks, or a strategy the dataset holds and the
registry no longer has, is named with the command that fixes it.
"""

from __future__ import annotations

from pathlib import Path

from jacbench.errors import UsageError
from jacbench.measure import crossover, profiles, store
from jacbench.measure.case import Case
from jacbench.measure.dataset import PROFILE, Dataset
from jacbench.measure.targets import parse


def expected_cases(meta: dict, profile: str = PROFILE) -> list[Case]:
    """The profile's cases and its crossover's, as the dataset's machine expands them: a case
    without a cap of its own gets min(8 GiB, half that machine's RAM), not this one's."""
    spec = profiles.load_profile(profile)
    ram = meta.get("ram_bytes")
    return profiles.expand(spec, ram=ram) + crossover.profile_cases(spec, ram=ram)


def _compare(results: Path, profile: str) -> tuple[list[str], list[str]]:
    """The labels of the profile's cases (crossover included) that the dataset holds no row of,
    and of the dataset's rows that are no case of the profile (measured with other settings, or
    of a case the profile dropped: the book would show them beside the profile's own), keyed
    with the dataset's own environment. One expansion of the profile, one read of the files."""
    ds = Dataset(results)
    meta = ds.metadata
    env = meta.get("environment_key", "")
    expected = {c.key(env): c for c in expected_cases(meta, profile)}
    rows = _rows(ds)
    have = {r["key"] for r in rows}
    missing = [c.label() for key, c in expected.items() if key not in have]
    extra = [_label(r) for r in rows if r["key"] not in expected]
    return missing, extra


def _rows(ds: Dataset) -> list[dict]:
    """The rows of the results and of the crossover beside them, where each exists."""
    return [r for path in (ds.results, ds.crossover) if path.exists()
            for r in store.read_rows(path)]  # fmt: skip


def _label(r: dict) -> str:
    size = f"N={int(r['paths']):,}" if r["paths"] else f"n={int(r['inputs']):,}"
    if r["problem"] == "shapes":
        size = f"{r['outputs']}x{r['inputs']}"
    return f"{r['problem']} {r['framework']}/{r['strategy']} {size} {r['allocator']}"


def unknown_strategies(results: Path) -> list[str]:
    """framework/name of every target in the dataset (crossover included) that the registry
    no longer knows."""
    unknown = set()
    for r in _rows(Dataset(results)):
        try:
            parse(r["framework"], r["strategy"])  # looks the record up: UsageError if gone
        except UsageError:
            unknown.add(f"{r['framework']}/{r['strategy']}")
    return sorted(unknown)


def coverage_problems(results: Path, profile: str = PROFILE) -> list[str]:
    """What is wrong with the dataset against the code, one line each (empty when nothing)."""
    problems = []
    missing, extra = _compare(results, profile)
    if missing:
        shown = ", ".join(missing[:12]) + (
            f" and {len(missing) - 12} more" if len(missing) > 12 else ""
        )
        problems.append(
            f"the {profile} profile has {len(missing)} case(s) that {results} lacks: {shown}; "
            "run `make reference` to measure them"
        )
    if extra:
        more = f" and {len(extra) - 12} more" if len(extra) > 12 else ""
        problems.append(
            f"{results} holds {len(extra)} row(s) that are no case of the {profile} profile: "
            + ", ".join(extra[:12])
            + more
            + "; delete them (the profile's settings changed, or they were measured by hand)"
        )
    unknown = unknown_strategies(results)
    if unknown:
        problems.append(
            f"{results} holds strategies the registry no longer has: {', '.join(unknown)}; "
            "remove their rows or run `make reference` after restoring them"
        )
    return problems


def older_method(results: Path) -> str:
    """One line on the rows (crossover included) measured with a method older than the one a
    sweep uses now for their case (store.current), which `make reference` measures again; empty
    when there is none. Not a coverage problem: the dataset is whole while they are measured
    again, row by row."""
    rows = _rows(Dataset(results))
    older = sum(not store.row_current(r) for r in rows)
    if not older:
        return ""
    return (
        f"{older} of its {len(rows)} rows were measured with an older method than the current "
        f"one for their case ({store.METHOD}, see store.METHOD); `make reference` measures "
        "them again, each row replaced where it stands"
    )


def discard(results: Path) -> list[Path]:
    """Remove the dataset's results, its crossover and their metadata, so that every case is
    measured again (the old files stay in git's history); returns what was removed."""
    files = Dataset(results).files()
    gone = [files[name] for name in ("results", "meta", "crossover", "crossover meta")
            if files[name].exists()]  # fmt: skip
    for p in gone:
        p.unlink()
    return gone


def draw_figure(results: Path, out: Path) -> Path:
    """The README's figure from a results file: the GBM chapter's warm time against N in each
    framework (its figure of the same name), as a PNG."""
    from jacbench.report import data, figures

    df = data.load(results)
    steps = sorted({int(v) for v in df.loc[df["problem"] == "gbm", "steps"].dropna()})
    title = (
        "The N×2 Jacobian of a GBM simulation (spot, vol): warm time against N\n"
        f"{figures.profile_of(df)}, M = {'/'.join(map(str, steps))} steps, float32, CPU"
    )
    fig = figures.scaling_grid(
        df, metric="time", frameworks=["torch", "tensorflow", "jax"], title=title
    )
    out = Path(out)
    fig.savefig(out, dpi=100, bbox_inches="tight")
    return out
