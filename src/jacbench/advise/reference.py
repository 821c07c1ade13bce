"""The advice the reference book shows, measured by ``make reference`` into FOLDER, beside the
reference dataset: a basket of 1 to 16 correlated GBM assets (2 to 32 inputs, problems.basket,
PyTorch) at the same sizes, so that a reader sees where per-path reverse mode overtakes forward
mode as inputs grow, and a Heston loop with full truncation (problems.heston, JAX, its steps a
lax.scan) at the sizes advise chooses itself, checked at its target."""

from __future__ import annotations

from pathlib import Path

from jacbench.advise.run import Request
from jacbench.measure.dataset import ADVICE as FOLDER

# As the reference dataset's profile runs its cases: two threads. A worker that would run past
# TIMEOUT_S is a timeout row (the loops over 10^4 outputs take many minutes and would show
# nothing more), the 16-asset basket's compilation by torch.compile well within it.
THREADS = 2
TIMEOUT_S = 120.0
# The baskets share their sizes (the chapter compares them at each), four over a decade, the
# target 10x past the largest: a prediction there is not flagged as far.
BASKET_SIZES = (2_000, 5_000, 10_000, 20_000)
BASKET_TARGET = 200_000
HESTON_SIZES = ()  # chosen by advise from the function's own time (run.auto_sizes)
HESTON_TARGET = 1_000_000
# The baskets' numbers of assets, one factory each in problems.basket (written here: importing
# that module imports torch, which the parent of the workers never does).
ASSETS = (1, 2, 4, 8, 16)


def runs() -> dict[str, Request]:
    """Each reference advice by its folder's name."""
    found = {
        f"basket-{a}": Request(
            "jacbench.problems.basket:value",
            f"jacbench.problems.basket:example_{a}",
            sizes=BASKET_SIZES,
            target=BASKET_TARGET,
            timeout=TIMEOUT_S,
            threads=THREADS,
            verify=a == max(ASSETS),
        )
        for a in ASSETS
    }
    found["heston"] = Request(
        "jacbench.problems.heston:value",
        "jacbench.problems.heston:example",
        sizes=HESTON_SIZES,
        target=HESTON_TARGET,
        timeout=TIMEOUT_S,
        threads=THREADS,
        verify=True,
    )
    return found


def missing(folder: Path = FOLDER) -> list[str]:
    """The reference advice not yet measured into folder."""
    from jacbench.advise import ADVICE

    return [name for name in runs() if not (Path(folder) / name / ADVICE).exists()]


def measure(folder: Path = FOLDER, fresh: bool = False, progress=print) -> list[Path]:
    """Measure into folder the reference advice that is missing (every one if fresh); the
    folders written."""
    from jacbench.advise import advise

    wanted = list(runs()) if fresh else missing(folder)
    written = []
    for name in wanted:
        progress(f"advice {name}")
        out = Path(folder) / name
        advise(runs()[name], out, progress=lambda line: progress("  " + line))
        (out / "rows.jsonl").unlink(missing_ok=True)  # advice.json holds every row
        (out / "jacobian.py").unlink(missing_ok=True)  # and the code
        written.append(out)
    return written
