"""The path-blocked strategies against the strategies they block: the numbers of the GBM
chapter's "beyond memory" section (its figure is figures.blocked; strategies.blocked says what
blocking is)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from jacbench.constants import AD_FRAMEWORKS, FRAMEWORK_NAMES
from jacbench.measure.targets import SimulationTarget
from jacbench.problems.gbm import GBMParams
from jacbench.report import formats, queries
from jacbench.report.formats import NOT_MEASURED
from jacbench.report.legacy import method
from jacbench.strategies import catalog, registry
from jacbench.strategies.memory_model import block_paths

# The size the section's prose is about: where one path array no longer fits in memory.
LARGE_N = 10**8


def path_array_bytes(paths: int = LARGE_N, steps: int = 52, dtype: str = "float32") -> int:
    """The bytes of one (M+1) x N path array: 21,200,000,000 (19.7 GiB) at N = 10^8 in float32."""
    return GBMParams(paths=paths, steps=steps, dtype=dtype).path_array_bytes


def default_block(paths: int = LARGE_N, steps: int = 52, dtype: str = "float32") -> int:
    """The paths of one block under the default memory budget (GBMParams.chunk_size MiB):
    65,536 at N = 10^8, M = 52 in float32."""
    return block_paths(paths, steps, dtype, GBMParams().chunk_size)


def summary(df: pd.DataFrame, framework: str, name: str) -> dict[str, str]:
    """The numbers of one blocked strategy: the largest N it ran, its time, peak and ratio to
    its blocked simulation there, its peak at N = 10^6, and the largest N the strategy it
    blocks ran. Missing values read NOT_MEASURED."""
    twin = registry.get(framework, name).blocks
    top = queries.largest_ok(df, framework, name)
    at_million = queries.one(queries.gbm(df, framework=framework, strategy=name, status="ok"),
                             paths=1_000_000)  # fmt: skip
    twin_top = queries.largest_ok(df, framework, twin)
    return {
        "name": name,
        "twin": twin,
        "n": NOT_MEASURED if top is None else formats.count(top["paths"]),
        "time": NOT_MEASURED if top is None else formats.time(top["warm_median_s"]),
        "peak": NOT_MEASURED if top is None else formats.size(top["peak"]),
        "ratio": NOT_MEASURED if top is None else formats.ratio_with_spread(top),
        "peak_1e6": NOT_MEASURED if at_million is None else formats.size(at_million["peak"]),
        "twin_n": NOT_MEASURED if twin_top is None else formats.count(twin_top["paths"]),
    }


def table(df: pd.DataFrame, frameworks=AD_FRAMEWORKS) -> pd.DataFrame:
    """One row per blocked strategy ("jax/blocked-jvp"): summary's numbers, the last the
    largest N of the strategy it blocks, with short column names so that the table fits the
    book's column; "–" where a value was not measured."""
    rows = [summary(df, fw, b) | {"key": f"{fw}/{b}"}
            for fw in frameworks for b, _ in registry.blocked_pairs(fw)]  # fmt: skip
    columns = {"key": "strategy", "n": "largest N", "time": "time", "peak": "peak",
               "peak_1e6": "peak at 10^6", "ratio": "× simulation",
               "twin_n": "unblocked to N"}  # fmt: skip
    # In a cell a dash says "not measured" (the prose says it in words).
    out = pd.DataFrame(rows, columns=list(columns)).replace(NOT_MEASURED, "–")
    return out.rename(columns=columns)


def furthest(df: pd.DataFrame, framework: str) -> str | None:
    """The framework's blocked strategy that ran correctly at the largest N (the lower ratio
    to its simulation among equals), or None where none ran."""
    best = None
    for name, _ in registry.blocked_pairs(framework):
        top = queries.largest_ok(df, framework, name)
        if top is None:
            continue
        ratio = top["ratio_median"] if pd.notna(top["ratio_median"]) else np.inf
        key = (-int(top["paths"]), ratio)
        if best is None or key < best[0]:
            best = (key, name)
    return None if best is None else best[1]


def furthest_lead(df: pd.DataFrame, frameworks=AD_FRAMEWORKS) -> str:
    """How the blocked strategy named for each framework was chosen: where every one of them
    reached the same largest N, that the lower ratio to its simulation decided ('Every blocked
    strategy reached N = 10,000,000; in each framework, the one with the lower time over its
    blocked simulation'); else 'The blocked strategy that went furthest in each framework'."""
    tops = [queries.largest_ok(df, fw, name) for fw in frameworks
            for name, _ in registry.blocked_pairs(fw)]  # fmt: skip
    sizes = {int(t["paths"]) for t in tops if t is not None}
    if len(sizes) == 1 and all(t is not None for t in tops) and len(tops) > len(frameworks):
        return (f"Every blocked strategy reached N = {formats.count(sizes.pop())}; in each "
                "framework, the one with the lower time over its blocked simulation")  # fmt: skip
    return (
        "The blocked strategy that went furthest in each framework (among equals, the lower "
        "time over its blocked simulation)"
    )


def phrase(df: pd.DataFrame, framework: str) -> str:
    """'blocked-pathwise to N = 10,000,000: peak 715.6 MiB (572.5 MiB at N = 10^6), 1.33×
    [1.30–1.36] its blocked simulation's time' for the framework's furthest blocked strategy;
    NOT_MEASURED where none ran."""
    name = furthest(df, framework)
    if name is None:
        return NOT_MEASURED
    s = summary(df, framework, name)
    at_million = "" if s["peak_1e6"] == NOT_MEASURED else f" ({s['peak_1e6']} at N = 10^6)"
    ratio = "" if s["ratio"] == "–" else f", {s['ratio']} its blocked simulation's time"
    return f"{name} to N = {s['n']}: {s['time']} a call, peak {s['peak']}{at_million}{ratio}"


# --- how a blocked strategy's memory grows --------------------------------------------------------


def result_bytes(row) -> float:
    """What a blocked strategy returns: S_T and the N x 2 Jacobian, three values a path."""
    params = GBMParams(paths=int(row["paths"]), steps=int(row["steps"]), dtype=row["dtype"])
    return 3 * params.path_array_bytes / (params.steps + 1)


def memory_growth(df: pd.DataFrame, frameworks=AD_FRAMEWORKS) -> pd.DataFrame:
    """Each blocked strategy between consecutive sizes at which both ran whole blocks (N at
    least one block of the default budget): how much its memory beyond the inputs, less its
    result (result_bytes), grew ("growth", bytes; negative where it fell), beside what one path
    array grows by over the same sizes ("array_growth")."""
    rows = []
    for fw in frameworks:
        for name, _ in registry.blocked_pairs(fw):
            ran = queries.gbm(df, framework=fw, strategy=name, status="ok")
            ran = ran[[r["paths"] >= _block(r) for _, r in ran.iterrows()]]
            beyond = [(int(r["paths"]), r["peak_over_inputs"] - result_bytes(r),
                       path_array_bytes(int(r["paths"]), int(r["steps"]), r["dtype"]))
                      for _, r in ran.iterrows()]  # fmt: skip
            for (n1, m1, a1), (n2, m2, a2) in zip(beyond, beyond[1:], strict=False):
                rows.append({"framework": fw, "strategy": name, "from": n1, "to": n2,
                             "growth": float(m2 - m1), "array_growth": float(a2 - a1)})  # fmt: skip
    return pd.DataFrame(rows, columns=["framework", "strategy", "from", "to", "growth",
                                       "array_growth"])  # fmt: skip


def _block(row) -> int:
    """The paths of one whole block at the row's size under the default budget."""
    return block_paths(10**12, int(row["steps"]), row["dtype"], GBMParams().chunk_size)


def _signed(x: float) -> str:
    return ("−" if x < 0 else "+") + formats.size(abs(x))


# Growth over a step in N below this share of one path array's is "not growing with N".
BOUNDED = 0.1


def _changed_by(values: pd.Series) -> str:
    """'grew by 30.7 MiB to 173.0 MiB', 'fell by ...', or 'changed by −81.6 MiB to +2.3 MiB'."""
    if values.min() > 0:
        return f"grew by {formats.span(values, formats.size)}"
    if values.max() < 0:
        return f"fell by {formats.span(-values, formats.size)}"
    return f"changed by {formats.span(values, _signed)}"


def malloc_settings(df: pd.DataFrame, frameworks=AD_FRAMEWORKS) -> dict[int, str]:
    """How glibc's malloc ran for the blocked strategies at each N, from their rows' malloc_env:
    'as it comes', 'with its thresholds fixed', or 'mixed' where the rows of one N differ."""
    found: dict[int, set[str]] = {}
    for fw in frameworks:
        for name, _ in registry.blocked_pairs(fw):
            for _, r in queries.gbm(df, framework=fw, strategy=name, status="ok").iterrows():
                words = method.malloc_words(r["malloc_env"], detail=False)
                found.setdefault(int(r["paths"]), set()).add(words)
    return {n: w.pop() if len(w) == 1 else "mixed" for n, w in sorted(found.items())}


def memory_sentence(df: pd.DataFrame) -> str:
    """How a blocked strategy's memory beyond its result grew between the sizes at which it ran
    whole blocks (memory_growth), the smallest first, beside one path array's growth; under
    which malloc settings each size ran (malloc_settings); and over which sizes it did not grow
    (a step's largest growth under BOUNDED of one path array's), saying where malloc's settings
    changed over those sizes too, so that the rows cannot tell blocking from the allocator."""
    growth = memory_growth(df)
    if growth.empty:
        return ("How a blocked strategy's memory grows with N was not measured at two sizes of "
                "whole blocks in this build.")  # fmt: skip
    steps = sorted(growth.groupby(["from", "to"]), key=lambda x: x[0][1])
    said, bounded = [], []
    for i, ((lo, hi), g) in enumerate(steps):
        top = g.loc[g["growth"].idxmax()]
        whom = "a blocked strategy's memory beyond its result" if i == 0 else "it"
        bounded.append(bool(g["growth"].max() <= BOUNDED * g["array_growth"].iloc[0]))
        most = (f" ({FRAMEWORK_NAMES[top['framework']]}'s {top['strategy']} the most)"
                if not bounded[-1] and len(g) > 1 else "")  # fmt: skip
        said.append(
            f"From N = {formats.count(lo)} to {formats.count(hi)} {whom} "
            f"{_changed_by(g['growth'])}{most}, while one path array grows by "
            f"{formats.size(g['array_growth'].iloc[0])}."
        )
    settings = malloc_settings(df)
    sizes = sorted({n for (lo, hi), _ in steps for n in (lo, hi)})
    by_setting: dict[str, list[int]] = {}
    for n in sizes:
        by_setting.setdefault(settings.get(n, "mixed"), []).append(n)
    if len(by_setting) > 1:
        parts = [f"{w} at N = {formats.listing([formats.count(n) for n in ns])}"
                 for w, ns in by_setting.items()]  # fmt: skip
        said.append(f"The blocked strategies ran glibc's malloc {formats.listing(parts)}.")
    # The steps at the top over which it did not grow, and whether malloc changed over them.
    flat = 0
    while flat < len(bounded) and bounded[len(bounded) - 1 - flat]:
        flat += 1
    top_n = steps[-1][0][1]
    since = steps[len(steps) - max(flat, 1)][0][0]
    changed = settings.get(since) != settings.get(top_n) or "mixed" in (
        settings.get(since), settings.get(top_n))  # fmt: skip
    span = f"from N = {formats.count(since)} to {formats.count(top_n)}"
    if not flat:
        said.append(f"So it still grew with N at the largest sizes measured, {span}.")
        if changed:
            said.append("The settings of glibc's malloc also changed there.")
        return " ".join(said)
    said.append(f"So its memory did not grow {span}.")
    if changed:
        said.append("The settings of glibc's malloc also changed there, so these rows do not "
                    "show that blocking alone keeps it flat.")  # fmt: skip
    return " ".join(said)


# --- what share of a blocked case is drawing the random numbers -------------------------------


def drawing_shares(df: pd.DataFrame, paths: int | None, frameworks=AD_FRAMEWORKS) -> pd.DataFrame:
    """One row per blocked strategy and blocked simulation of each framework that ran correctly
    at N = paths beside the drawing alone (simulation:blocked-draws, the same blocks and draws,
    no path): its warm median, the drawing's, and the drawing's share of its time. The two are
    timed in separate workers, so a share is read to about a tenth. Empty where paths is None."""
    rows = []
    for fw in frameworks if paths is not None else ():
        draws = queries.simulation(df, fw, catalog.BLOCKED_DRAWS, paths)
        if draws is None:
            continue
        pairs = registry.blocked_pairs(fw)
        executions = sorted({registry.get(fw, b).execution for b, _ in pairs})
        targets = [(SimulationTarget(fw, e).text, True, queries.simulation(df, fw, e, paths))
                   for e in executions]  # fmt: skip
        targets += [(b, False, queries.one(queries.gbm(df, framework=fw, strategy=b,
                                                        status="ok"), paths=paths))
                    for b, _ in pairs]  # fmt: skip
        for name, simulation, row in targets:
            if row is None:
                continue
            rows.append({
                "framework": fw, "strategy": name, "simulation": simulation,
                "time_s": float(row["warm_median_s"]), "draws_s": float(draws["warm_median_s"]),
            })  # fmt: skip
    out = pd.DataFrame(rows, columns=["framework", "strategy", "simulation", "time_s", "draws_s"])
    out["simulation"] = out["simulation"].astype(bool)
    out["share"] = out["draws_s"] / out["time_s"]
    return out


def drawing_size(df: pd.DataFrame, frameworks=AD_FRAMEWORKS) -> int | None:
    """The largest N at which some framework's drawing alone and one of its blocked strategies
    both ran correctly, or None."""
    sizes = set()
    for fw in frameworks:
        draws = queries.gbm(df, "simulation", framework=fw, status="ok",
                            strategy=SimulationTarget(fw, catalog.BLOCKED_DRAWS).text)  # fmt: skip
        for b, _ in registry.blocked_pairs(fw):
            ran = queries.gbm(df, framework=fw, strategy=b, status="ok")
            sizes |= set(draws["paths"]) & set(ran["paths"])
    return int(max(sizes)) if sizes else None


def _percent(share: float) -> str:
    return f"{share:.0%}"


def drawing_sentence(shares: pd.DataFrame, paths: int | None) -> str:
    """What share of the blocked simulations' and blocked strategies' warm time drawing the
    normals alone takes at N = paths, as a range over the frameworks; says where it was not
    measured."""
    if paths is None or shares.empty:
        return ("Drawing the normals alone (simulation:blocked-draws) was not measured in this "
                "build, so the share of a blocked case's time that is random numbers is not "
                "known here.")  # fmt: skip
    sims = shares[shares["simulation"]]
    strategies = shares[~shares["simulation"]]
    parts = []
    if len(sims):
        parts.append(f"{formats.span(sims['share'], _percent)} of the blocked simulations' time")
    if len(strategies):
        parts.append(f"{formats.span(strategies['share'], _percent)} of the blocked strategies'")
    said = " and ".join(parts)
    most = strategies.loc[strategies["share"].idxmax()] if len(strategies) else None
    tail = ""
    # "Most" only where the share clears a half by more than its uncertainty (a tenth).
    if most is not None and most["share"] >= 0.6:
        tail = (f"; for {most['strategy']} in {FRAMEWORK_NAMES[most['framework']]}, the random "
                f"numbers are most of the Jacobian's cost")  # fmt: skip
    return (
        f"At N = {formats.count(paths)}, drawing the normals alone takes {said}{tail} "
        "(the two timed in separate workers, so a share is good to about a tenth)."
    )


# --- TensorFlow drawing inside a compiled function ---------------------------------------------


def tensorflow_drawing(df: pd.DataFrame) -> dict | None:
    """TensorFlow's simulation drawing its own normals (stateless_normal) in a tf.function, under
    XLA with the default algorithm and under XLA with philox named, at the largest N where the
    tf.function one ran correctly: {"n", and per name (function, xla, philox) its row or
    None}; None where the tf.function one never ran."""
    names = {"function": "function-draws", "xla": "xla-draws", "philox": "xla-philox-draws"}
    assert set(names.values()) == set(catalog.TENSORFLOW_DRAWS)
    names = {kind: SimulationTarget("tensorflow", name).text for kind, name in names.items()}
    sims = queries.gbm(df, "simulation", framework="tensorflow")
    ran = sims[(sims["strategy"] == names["function"]) & (sims["status"] == "ok")]
    if ran.empty:
        return None
    n = int(ran["paths"].max())
    return {"n": n} | {kind: queries.one(sims, strategy=name, paths=n)
                       for kind, name in names.items()}  # fmt: skip


def tensorflow_drawing_sentence(found: dict | None) -> str:
    """How long TensorFlow's simulation takes when it draws its normals in a tf.function and
    under jit_compile=True, with the default algorithm and with philox: how many times the
    tf.function's each takes, or what stopped it."""
    if found is None:
        return ("TensorFlow drawing its normals inside a compiled function was not measured in "
                "this build.")  # fmt: skip
    base = found["function"]
    t = float(base["warm_median_s"])

    def against(row) -> str:
        if row is None:
            return "not measured"
        if row["status"] != "ok":
            return formats.outcome(row)
        k = float(row["warm_median_s"]) / t
        how = formats.compared(k, "as long", "about the same")
        return f"{formats.time(row['warm_median_s'])}, {how}"

    said = (
        f"At N = {formats.count(found['n'])} (M = {int(base['steps'])}), TensorFlow's "
        f"simulation drawing its own normals with tf.random.stateless_normal takes "
        f"{formats.time(t)} in a tf.function; with jit_compile=True, "
        f"{against(found['xla'])}; with jit_compile=True and alg='philox' named, "
        f"{against(found['philox'])}."
    )

    def over(row) -> float | None:
        ok = row is not None and row["status"] == "ok"
        return float(row["warm_median_s"]) / t if ok else None

    xla, philox = over(found["xla"]), over(found["philox"])
    xla_failed = found["xla"] is not None and found["xla"]["status"] != "ok"
    if (xla_failed or (xla is not None and xla >= 3)) and philox is not None and philox < 1.5:
        said += (" Under XLA the default algorithm's CPU kernels are the slow part: whoever "
                 "compiles the drawing with jit_compile=True should name alg='philox', or draw "
                 "outside the compiled function.")  # fmt: skip
    elif xla_failed or (xla is not None and xla >= 3):
        said += (" Under XLA drawing is slow whichever algorithm is named: draw outside the "
                 "compiled function.")  # fmt: skip
    elif xla is not None and xla < 1.5:
        said += " Here XLA's drawing costs no more than a tf.function's."
    return said
