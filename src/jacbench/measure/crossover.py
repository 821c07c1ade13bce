"""The tall-to-wide crossover: forward against reverse Jacobian time as m x n moves, m * n fixed.

Each framework, mode and shape is one case of the shapes problem, measured like every other
case (its own capped worker, cold and warm calls, the spread of the warm ones) into a results
file of its own; :func:`crossover` reads off, per framework, the shape where reverse mode
starts to beat forward mode.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from jacbench.measure import harness, profiles, runner, store
from jacbench.measure.case import Case
from jacbench.measure.targets import MODES, CrossoverTarget, parse
from jacbench.problems import shapes
from jacbench.units import parse_bytes


def cases(
    frameworks: list[str],
    total: int,
    steps: int,
    repeats: int,
    warm_budget_s: float = 2.0,
    threads: int = 1,
    mem_cap: int | str | None = None,
    timeout: float = 300,
    side: int | None = None,
    ram: int | None = None,
) -> list[Case]:
    """Both modes at every shape from tall to wide, in each framework (without a cap, the
    default of a machine with ram bytes of RAM, else of this one). side: the longest side m or
    n at the tall and wide extremes (None: total, from a single column to a single row); a
    large total with a shorter side measures where arithmetic, not per-call overhead,
    dominates."""
    cap = parse_bytes(mem_cap) if mem_cap else harness.default_mem_cap(ram)
    return [
        Case(framework=fw, strategy=CrossoverTarget(fw, mode).text, problem="shapes",
             outputs=m, inputs=n, repeats=repeats, warm_budget_s=warm_budget_s,
             threads=threads, mem_cap=cap, timeout=timeout)
        for fw in frameworks
        for m, n in shapes.shapes(total, steps, side)
        for mode in MODES
    ]  # fmt: skip


def measure(
    frameworks: list[str],
    total: int,
    steps: int = 9,
    repeats: int = 7,
    warm_budget_s: float = 2.0,
    threads: int = 1,
    mem_cap: int | str | None = None,
    timeout: float = 300,
    out: Path | None = None,
    jobs: int = 1,
    quiet: bool = True,
    side: int | None = None,
) -> list[dict]:
    """Measure the crossover's cases into out (a temporary file if None); its rows."""
    todo = cases(frameworks, total, steps, repeats, warm_budget_s, threads, mem_cap, timeout,
                 side)  # fmt: skip
    if out is not None:
        return _of(todo, read(runner.run_sweep(todo, Path(out), quiet=quiet, jobs=jobs)))
    with tempfile.TemporaryDirectory(prefix="jacbench-crossover-") as tmp:
        path = Path(tmp) / "crossover.csv"
        return _of(todo, read(runner.run_sweep(todo, path, quiet=quiet, jobs=jobs)))


def _of(todo: list[Case], rows: list[dict]) -> list[dict]:
    """The rows of these cases' shapes: a file kept from an earlier crossover of another total
    or side holds rows of other shapes too."""
    wanted = {(c.framework, c.outputs, c.inputs) for c in todo}
    return [r for r in rows if (r["framework"], r["outputs"], r["inputs"]) in wanted]


def largest_total(rows: list[dict]) -> list[dict]:
    """The rows of the largest total m * n in a crossover file (one that was kept from an
    earlier, smaller crossover holds both)."""
    if not rows:
        return rows
    total = max(r["outputs"] * r["inputs"] for r in rows)
    return [r for r in rows if r["outputs"] * r["inputs"] == total]


def profile_cases(profile: profiles.Profile, ram: int | None = None) -> list[Case]:
    """The cases of a profile's crossover (its parsed "crossover" entry)."""
    c = profile.crossover
    return cases(list(c.frameworks), c.total, c.steps, c.repeats, c.warm_budget_s, c.threads,
                 c.mem_cap, c.timeout, c.side, ram)  # fmt: skip


def read(path: Path) -> list[dict]:
    """The crossover rows of a results file, typed, each with its mode."""
    rows = [r for r in store.typed_rows(path) if r["problem"] == "shapes"]
    for r in rows:
        r["mode"] = parse(r["framework"], r["strategy"]).name
    return rows


def crossover(rows: list[dict]) -> float | None:
    """The aspect m / n from which reverse mode beats forward mode at every wider shape.

    Going from tall to wide, the tallest shape where reverse is faster there and at every
    shape after it: a single noisy shape where reverse happens to win does not count. Shapes
    where either mode did not finish are left out.
    """
    by_shape: dict[tuple[int, int], dict[str, float]] = {}
    for r in rows:
        if r.get("status", "ok") == "ok":
            by_shape.setdefault((r["outputs"], r["inputs"]), {})[r["mode"]] = r["warm_median_s"]
    both = [(m, n) for (m, n), t in by_shape.items() if "forward" in t and "reverse" in t]
    found = None
    for m, n in sorted(both, key=lambda s: s[0] / s[1]):  # from wide to tall
        t = by_shape[(m, n)]
        if t["reverse"] >= t["forward"]:
            break
        found = m / n
    return found
