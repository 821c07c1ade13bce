"""The tall-to-wide crossover (chapter 5): where reverse mode starts to beat forward mode as a
Jacobian of a fixed total m * n turns from tall to wide, read from the crossover rows, and said
once where the frameworks agree."""

from __future__ import annotations

from pathlib import Path

from jacbench.constants import AD_FRAMEWORKS, FRAMEWORK_NAMES
from jacbench.measure import crossover as tall_to_wide
from jacbench.report import formats

# --- the tall-to-wide crossover -------------------------------------------------------------


def crossover_rows(path: str | Path) -> list[dict]:
    """The crossover rows of the largest total m * n in a crossover file; [] where there is no
    file."""
    path = Path(path)
    return tall_to_wide.largest_total(tall_to_wide.read(path)) if path.exists() else []


def _of(rows: list[dict], framework: str | None) -> list[dict]:
    return [r for r in rows if framework is None or r["framework"] == framework]


def aspects(shapes: list[dict]) -> dict[str, float | None]:
    """Per AD framework, the aspect m / n from which reverse mode beats forward mode at every
    wider shape (measure.crossover.crossover); None where there is none or no row."""
    return {fw: tall_to_wide.crossover(_of(shapes, fw)) for fw in AD_FRAMEWORKS}


def aspect(a: float | None) -> str:
    """An aspect as text: 'm / n = 4', 'm / n = 1/16', or 'no shape (forward mode stays as fast
    or faster)' for None."""
    if a is None:
        return "no shape (forward mode stays as fast or faster)"
    return f"m / n = {a:g}" if a >= 1 else f"m / n = 1/{1 / a:g}"


def crossover_aspect(shapes: list[dict], framework: str) -> str:
    """Where reverse mode starts to win for good in a framework, 'm / n = 1/4'; NOT_MEASURED
    where the framework has no crossover row."""
    rows = _of(shapes, framework)
    return aspect(tall_to_wide.crossover(rows)) if rows else formats.NOT_MEASURED


def sides(rows: list[dict], framework: str | None = None) -> tuple[int, int, int, int] | None:
    """Counted over the shapes where both modes ran, framework by framework (of one framework,
    where given) and summed: (wide shapes where reverse mode is faster, wide shapes, tall shapes
    where forward mode is, tall shapes); None where no shape has both."""
    by_shape: dict[tuple[str | None, int, int], dict[str, float]] = {}
    for r in _of(rows, framework):
        if r.get("status", "ok") == "ok":
            shape = (r.get("framework"), r["outputs"], r["inputs"])
            by_shape.setdefault(shape, {})[r["mode"]] = r["warm_median_s"]
    both = {s: t for s, t in by_shape.items() if "forward" in t and "reverse" in t}
    if not both:
        return None
    wide = [t["reverse"] < t["forward"] for (_, m, n), t in both.items() if m < n]
    tall = [t["forward"] < t["reverse"] for (_, m, n), t in both.items() if m > n]
    return sum(wide), len(wide), sum(tall), len(tall)


def crossover_sides(rows: list[dict], framework: str | None = None) -> str:
    """On which side of m = n each mode wins, counted over the shapes (of a framework, where
    given) where both modes ran: 'reverse mode is faster at 4 of the 4 wide shapes (m < n),
    forward mode at 3 of the 4 tall ones (m > n)'; NOT_MEASURED where no shape has both."""
    counted = sides(rows, framework)
    if counted is None:
        return formats.NOT_MEASURED
    wide, wide_n, tall, tall_n = counted
    return (
        f"reverse mode is faster at {wide} of the {wide_n} wide shapes (m < n), "
        f"forward mode at {tall} of the {tall_n} tall ones (m > n)"
    )


def shapes_total(shapes: list[dict]) -> int | None:
    """The total m * n every crossover shape holds; None where there is no shape or several
    totals."""
    totals = {r["outputs"] * r["inputs"] for r in shapes}
    return totals.pop() if len(totals) == 1 else None


def aspect_range(shapes: list[dict]) -> str:
    """The aspects measured, tall to wide: 'from m / n = 64 to m / n = 1/64'; NOT_MEASURED
    where no shape ran."""
    measured_aspects = sorted({r["outputs"] / r["inputs"] for r in shapes if r["status"] == "ok"})
    if not measured_aspects:
        return formats.NOT_MEASURED
    return f"from {aspect(measured_aspects[-1])} to {aspect(measured_aspects[0])}"


def square_times(shapes: list[dict]) -> str:
    """The square shape's time in its faster mode, per framework: '691 µs in PyTorch, 605 µs in
    JAX'; NOT_MEASURED where no square shape ran."""
    square: dict[str, float] = {}
    for r in shapes:
        if r["status"] == "ok" and r["outputs"] == r["inputs"]:
            fw = r["framework"]
            square[fw] = min(square.get(fw, float("inf")), r["warm_median_s"])
    times = [f"{formats.time(square[fw])} in {FRAMEWORK_NAMES[fw]}"
             for fw in AD_FRAMEWORKS if fw in square]  # fmt: skip
    return ", ".join(times) or formats.NOT_MEASURED


def slower_against_floor(shapes: list[dict]) -> dict[str, tuple[str, float, float]]:
    """Per AD framework with a square shape where both modes ran: the slower mode there, its time
    there and its floor (its fastest time over every shape, which bounds its per-call overhead
    from above)."""
    found = {}
    for fw in AD_FRAMEWORKS:
        ok = [r for r in _of(shapes, fw) if r["status"] == "ok"]
        square = {r["mode"]: r["warm_median_s"] for r in ok if r["outputs"] == r["inputs"]}
        if {"forward", "reverse"} <= set(square):
            mode = max(square, key=square.get)
            floor = min(r["warm_median_s"] for r in ok if r["mode"] == mode)
            found[fw] = (mode, square[mode], floor)
    return found


# Where the slower mode's floor is at least this share of its time at the square shape, its
# per-call overhead may be as large as its arithmetic there; below LITTLE, the arithmetic decides.
HALF, LITTLE = 0.5, 0.2


def regime_measured(shapes: list[dict]) -> str:
    """Whether overhead or arithmetic decides at the square shape, where the crossover is read,
    from the slower mode's time there against its floor (slower_against_floor); NOT_MEASURED
    where no framework has a square shape with both modes."""
    found = slower_against_floor(shapes)
    if not found:
        return formats.NOT_MEASURED
    modes = {mode for mode, _, _ in found.values()}
    own = " its own fastest time over these shapes"
    parts = [f"{formats.times(t / floor)}{own if i == 0 else ''}"
             f" in {FRAMEWORK_NAMES[fw]} ({'' if len(modes) == 1 else f'{mode} mode, '}"
             f"{formats.time(t)} against {formats.time(floor)})"
             for i, (fw, (mode, t, floor)) in enumerate(found.items())]  # fmt: skip
    slower = f"the slower mode ({modes.pop()} mode)" if len(modes) == 1 else "the slower mode"
    shares = [floor / t for _, t, floor in found.values()]
    said = (
        f"At the square shape, where the crossover is read, {slower} takes "
        f"{formats.listing(parts)}. That fastest time bounds its per-call overhead from above "
        f"and is {formats.span([100 * x for x in shares], '{:.0f}%'.format)} of its time at the "
        "square shape"
    )
    if max(shares) >= HALF:
        large = [FRAMEWORK_NAMES[fw] for fw, (_, t, floor) in found.items() if floor / t >= HALF]
        where = "" if len(large) == len(found) else f" in {_listed(large)}"
        return (f"{said}: per-call overhead may be as large as the arithmetic there{where}, so "
                "the crossover is not the arithmetic's alone.")  # fmt: skip
    if max(shares) < LITTLE:
        return f"{said}: the arithmetic decides there."
    return f"{said}: per-call overhead is still part of what decides there."


# --- the crossover in words -----------------------------------------------------------------


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
