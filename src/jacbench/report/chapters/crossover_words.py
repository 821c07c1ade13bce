"""The tall-to-wide crossover in words (chapter 5): where reverse mode starts to win for good and
which mode wins on each side of m = n, said once where the frameworks agree."""

from __future__ import annotations

from jacbench.constants import AD_FRAMEWORKS, FRAMEWORK_NAMES
from jacbench.report.chapters.tall_wide import crossover_aspect, crossover_sides


def _listed(parts: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


def crossover_said(shapes: list[dict], frameworks=AD_FRAMEWORKS) -> str:
    """'Reverse mode wins for good from m / n = 1 on in all three frameworks. Counted shape by
    shape, in each of them reverse mode is faster at ...' where the frameworks agree; each
    framework's own where they do not."""
    aspects = {fw: crossover_aspect(shapes, fw) for fw in frameworks}
    sides = {fw: crossover_sides(shapes, fw) for fw in frameworks}
    every = "all three frameworks" if len(frameworks) == 3 else "every framework"
    if len(set(aspects.values())) == 1:
        first = f"Reverse mode wins for good from {next(iter(aspects.values()))} on in {every}."
    else:
        first = (
            "Reverse mode wins for good "
            + _listed([f"from {a} on in {FRAMEWORK_NAMES[fw]}" for fw, a in aspects.items()])
            + "."
        )
    if len(set(sides.values())) == 1:
        second = f"Counted shape by shape, in each of them {next(iter(sides.values()))}."
    else:
        second = (
            "Counted shape by shape, "
            + "; ".join(f"in {FRAMEWORK_NAMES[fw]} {s}" for fw, s in sides.items())
            + "."
        )
    return f"{first} {second}"
