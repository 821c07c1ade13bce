"""Vectorized Jacobians (chapter 3): each framework's reverse-mode strategies, what vectorized
reverse mode holds in memory, each loop of VJPs against the strategy that vectorizes it (the
registry's ``vectorizes`` role) at every N where both ran, and every reverse-mode strategy
against its memory model at one size."""

from __future__ import annotations

import pandas as pd

from jacbench.constants import FRAMEWORK_NAMES
from jacbench.problems.gbm import GBMParams
from jacbench.report import formats, queries
from jacbench.strategies import registry


def reverse_strategies(framework: str) -> list[str]:
    """A framework's reverse-mode GBM strategies that are no variant of another: the question's
    program first, then by batching (loop, vectorized, chunked, single-pass: the pathwise
    gradient), in the registry's order within each."""
    rev = [
        s
        for s in registry.by_framework(framework, "gbm")
        if s.mode == "reverse" and not s.variant_of
    ]
    order = sorted(rev, key=lambda s: (not s.faithful, registry.BATCHINGS.index(s.batching)))
    return [s.name for s in order]


def reverse_by_framework() -> dict[str, list[str]]:
    """reverse_strategies of every framework that has some, in the frameworks' order."""
    return {fw: names for fw in registry.FRAMEWORKS if (names := reverse_strategies(fw))}


def reverse_memory(params: GBMParams, strategy: registry.Strategy) -> dict[str, float]:
    """What reverse mode holds for a GBM case, in bytes: one path array ((M + 1) x N numbers,
    the size of one cotangent), a batch of N of them (vectorized), a chunk of them (chunked),
    and a vectorized strategy's model of it: its batch coefficient and predicted peak."""
    path_array = params.path_array_bytes
    chunk = min(params.chunk_size, params.paths)
    model = strategy.memory
    return {
        "path_array": path_array,
        "batch": params.paths * path_array,
        "chunk_size": chunk,
        "chunk_batch": chunk * path_array,
        "batch_coefficient": model.batch,
        "predicted_peak": model.peak(strategy.framework, params.paths, params.steps,
                                     params.dtype, params.chunk_size),
    }  # fmt: skip


# Slopes are fitted from this N up: below it a fixed footprint (the framework's buffers, the
# import) dominates the peak, and a fit through it reads less than the growth.
SLOPE_FROM = 1000


def memory_slope(
    df: pd.DataFrame, framework: str, strategy: str, from_paths: int = SLOPE_FROM
) -> float | None:
    """The log-log slope of a strategy's peak beyond the inputs against N, over the sizes from
    from_paths up at which it ran correctly (2: quadratic); None with fewer than two sizes."""
    ok = queries.gbm(df, framework=framework, strategy=strategy, status="ok")
    ok = ok[ok["paths"] >= from_paths]
    return queries.loglog_slope(ok["paths"], ok["peak_over_inputs"])


def slope_sizes(
    df: pd.DataFrame, framework: str, strategy: str, from_paths: int = SLOPE_FROM
) -> str:
    """'1,000 to 3,000': the sizes memory_slope fits over; '–' with fewer than two."""
    ok = queries.gbm(df, framework=framework, strategy=strategy, status="ok")
    sizes = sorted(set(ok.loc[ok["paths"] >= from_paths, "paths"]))
    return f"{int(sizes[0]):,} to {int(sizes[-1]):,}" if len(sizes) >= 2 else "–"


def loop_and_vectorized() -> list[tuple[str, str, str]]:
    """(framework, loop, the strategy that vectorizes it) for every such pair of the registry, in
    its order."""
    return [
        (s.framework, s.vectorizes, s.name)
        for fw in registry.FRAMEWORKS
        for s in registry.by_framework(fw, "gbm")
        if s.vectorizes
    ]


def loop_against_vectorized(df: pd.DataFrame, pairs: list[tuple[str, str, str]]) -> pd.DataFrame:
    """One row per (framework, loop, vectorized) pair and N at which both ran correctly: their
    warm times and peaks beyond the inputs, and the vectorized over the loop for each."""
    rows = []
    for fw, loop, vec in pairs:
        a = queries.gbm(df, framework=fw, strategy=loop, status="ok").set_index("paths")
        b = queries.gbm(df, framework=fw, strategy=vec, status="ok").set_index("paths")
        for n in sorted(set(a.index) & set(b.index)):
            ra, rb = a.loc[n], b.loc[n]
            ra = ra.iloc[0] if isinstance(ra, pd.DataFrame) else ra
            rb = rb.iloc[0] if isinstance(rb, pd.DataFrame) else rb
            rows.append({
                "framework": fw, "loop": loop, "vectorized": vec, "paths": int(n),
                "loop_s": float(ra["warm_median_s"]), "vectorized_s": float(rb["warm_median_s"]),
                "loop_peak": ra["peak_over_inputs"], "vectorized_peak": rb["peak_over_inputs"],
            })  # fmt: skip
    out = pd.DataFrame(rows, columns=["framework", "loop", "vectorized", "paths", "loop_s",
                                      "vectorized_s", "loop_peak", "vectorized_peak"])  # fmt: skip
    out["time_ratio"] = out["vectorized_s"] / out["loop_s"]
    out["memory_ratio"] = out["vectorized_peak"] / out["loop_peak"]
    return out


def which_is_faster(name_a: str, time_a, name_b: str, time_b) -> str:
    """'grad-loop, 3.4× faster than jacrev (253 ms against 856 ms)': the faster of two warm
    times named first; NOT_MEASURED where either is missing."""
    if formats.missing(time_a) or formats.missing(time_b) or min(time_a, time_b) <= 0:
        return formats.NOT_MEASURED
    if time_b < time_a:
        name_a, time_a, name_b, time_b = name_b, time_b, name_a, time_a
    return (
        f"{name_a}, {formats.times(time_b / time_a)} faster than {name_b} "
        f"({formats.time(time_a)} against {formats.time(time_b)})"
    )


def faster_at(
    cmp: pd.DataFrame, pairs: list[tuple[str, str, str]], paths: int
) -> dict[tuple[str, str], str]:
    """{(framework, loop): which_is_faster of the loop and its vectorized strategy at N = paths}
    for every pair, from loop_against_vectorized; NOT_MEASURED where the two did not both run."""
    at = cmp[cmp["paths"] == paths]
    out = {}
    for fw, loop, vec in pairs:
        r = at[(at["framework"] == fw) & (at["loop"] == loop) & (at["vectorized"] == vec)]
        out[fw, loop] = (
            which_is_faster(loop, r["loop_s"].iloc[0], vec, r["vectorized_s"].iloc[0])
            if len(r)
            else formats.NOT_MEASURED
        )
    return out


def vectorized_counts(cmp: pd.DataFrame) -> dict[str, int]:
    """Over the rows of loop_against_vectorized: how many were compared, in how many the
    vectorized strategy was strictly the faster, and in how many it needed more memory."""
    return {
        "compared": len(cmp),
        "faster": int((cmp["time_ratio"] < 1).sum()),
        "more_memory": int((cmp["memory_ratio"] > 1).sum()),
    }


def reverse_at(df: pd.DataFrame, reverse: dict[str, list[str]], paths: int) -> pd.DataFrame:
    """One row per strategy of reverse ({framework: names}) at N = paths: what became of it
    (formats.outcome), its peak beyond the inputs where it ran correctly, under glibc and
    under glibc-mmap where that ran too (NaN where not), and its model's working memory for
    the case (the problem's default M and chunk size where none was measured) with the
    allocator the model was fitted under."""
    default = GBMParams()
    rows = []
    for fw, names in reverse.items():
        for name in names:
            r = queries.one(queries.gbm(df), framework=fw, strategy=name, paths=paths)
            ok = r is not None and r["status"] == "ok"
            mmap = queries.one(queries.gbm(df, allocator="glibc-mmap"), framework=fw,
                               strategy=name, paths=paths, status="ok")  # fmt: skip
            steps = int(r["steps"]) if r is not None else default.steps
            chunk = int(r["chunk_size"]) if r is not None else default.chunk_size
            s = registry.get(fw, name)
            rows.append({
                "framework": fw, "strategy": name, "batching": s.batching,
                "outcome": formats.outcome(r),
                "peak": queries.value(r, "peak_over_inputs") if ok else None,
                "mmap_peak": queries.value(mmap, "peak_over_inputs") if ok else None,
                "model": s.memory.working(paths, steps, "float32", chunk),
                "fitted_under": s.memory_fitted_under,
            })  # fmt: skip
    columns = ["framework", "strategy", "batching", "outcome", "peak", "mmap_peak", "model",
               "fitted_under"]  # fmt: skip
    out = pd.DataFrame(rows, columns=columns)
    out[["peak", "mmap_peak"]] = out[["peak", "mmap_peak"]].astype(float)
    return out


# --- the terminal-only form -------------------------------------------------------------------

TERMINAL = "-terminal"


def terminal_pairs() -> list[tuple[str, str, str]]:
    """(framework, terminal-only strategy, the path form whose default vectorized reverse mode
    it runs without the path) for every terminal-only strategy of the registry, in its order:
    [('torch', 'jacrev-terminal', 'jacrev'), ('tensorflow', 'tape-jacobian-terminal',
    'tape-jacobian-pfor'), ...]."""
    out = []
    for fw in registry.FRAMEWORKS:
        names = {s.name for s in registry.by_framework(fw, "gbm")}
        for s in registry.by_framework(fw, "gbm"):
            if s.name.endswith(TERMINAL):
                base = s.name.removesuffix(TERMINAL)
                twin = next((t for t in (base, f"{base}-pfor") if t in names), None)
                if twin is not None:
                    out.append((fw, s.name, twin))
    return out


def terminal_against_path(df: pd.DataFrame, pairs: list[tuple[str, str, str]]) -> pd.DataFrame:
    """One row per pair of terminal_pairs and N at which the terminal-only form was measured:
    what became of each form there (formats.outcome), their peaks beyond the inputs and warm
    times where they ran correctly (NaN where not)."""
    rows = []
    for fw, term, path in pairs:
        for _, t in queries.gbm(df, framework=fw, strategy=term).iterrows():
            n = int(t["paths"])
            p = queries.one(queries.gbm(df, framework=fw, strategy=path), paths=n)
            t_ok, p_ok = t["status"] == "ok", p is not None and p["status"] == "ok"
            rows.append({
                "framework": fw, "terminal": term, "path": path, "paths": n,
                "terminal_outcome": formats.outcome(t), "path_outcome": formats.outcome(p),
                "terminal_peak": t["peak_over_inputs"] if t_ok else None,
                "path_peak": p["peak_over_inputs"] if p_ok else None,
                "terminal_s": t["warm_median_s"] if t_ok else None,
                "path_s": p["warm_median_s"] if p_ok else None,
            })  # fmt: skip
    columns = ["framework", "terminal", "path", "paths", "terminal_outcome", "path_outcome",
               "terminal_peak", "path_peak", "terminal_s", "path_s"]  # fmt: skip
    out = pd.DataFrame(rows, columns=columns)
    numbers = ["terminal_peak", "path_peak", "terminal_s", "path_s"]
    out[numbers] = out[numbers].astype(float)
    return out


def terminal_sentence(cmp: pd.DataFrame) -> str:
    """What the terminal-only forms cost against the path forms, from terminal_against_path:
    at the largest N where both forms ran correctly in some framework, the path forms' peak
    over the terminal forms' (a range over the frameworks), and at the largest N measured, how
    many terminal forms ran correctly, their peaks, and what became of the path forms there."""
    if cmp.empty:
        return "The terminal-only forms were not measured in this build."
    both = cmp.dropna(subset=["terminal_peak", "path_peak"])
    said = []
    if len(both):
        n = int(both["paths"].max())
        at = both[both["paths"] == n]
        k = at["path_peak"] / at["terminal_peak"]
        said.append(
            f"At N = {formats.count(n)}, where both ran, the path forms held "
            f"{formats.span(k, lambda x: formats.times(x, 0))} the terminal-only forms' memory "
            f"({formats.span(at['path_peak'], formats.size)} against "
            f"{formats.span(at['terminal_peak'], formats.size)} beyond the inputs)"
        )
    top = int(cmp["paths"].max())
    at = cmp[cmp["paths"] == top]
    ran = at.dropna(subset=["terminal_peak"])
    if len(ran) and (not len(both) or top > int(both["paths"].max())):
        fates = sorted(set(at.loc[at["path_peak"].isna(), "path_outcome"]))
        fate = "; the path forms: " + ", ".join(fates) if fates else ""
        said.append(
            f"at N = {formats.count(top)}, {len(ran)} of {len(at)} terminal-only forms ran, "
            f"holding {formats.span(ran['terminal_peak'], formats.size)} in "
            f"{formats.span(ran['terminal_s'], formats.time)} a call{fate}"
        )
    if not said:
        return "No terminal-only form ran correctly in this build."
    text = "; ".join(said)
    return text[0].upper() + text[1:] + "."


def in_short(
    paths: int, batch: float, predicted: float, slope: float | None, counts: dict[str, int]
) -> str:
    """The chapter's answer: at the question's N (paths) a batch of N path-array cotangents
    (batch, bytes) and pfor's predicted peak (predicted); pfor's fitted memory slope against N
    (None where unfitted); and vectorized_counts over every loop against its vectorized form."""
    said = (
        "Vectorized reverse mode holds its N cotangents at once, each a whole path array: at "
        f"the question's N = {paths:,} a batch of them is {formats.size(batch)}, and TensorFlow's "
        f"default (pfor) is predicted to need {formats.size(predicted)}, the question's "
        "out-of-memory failure."
    )
    if slope is not None:
        grows = "quadratically" if slope >= 1.5 else "less than quadratically"
        said += f" Measured, pfor's peak beyond the inputs grows as N^{slope:.2f}, {grows}."
    n, faster, more = counts["compared"], counts["faster"], counts["more_memory"]
    if n:
        wins = {0: f"in none of the {n} comparisons", n: f"in all {n} comparisons"}.get(
            faster, f"in {faster} of the {n} comparisons"
        )
        said += (
            f" Against the loop of VJPs it batches, vectorizing was the faster {wins} and "
            f"needed more memory {'in all' if more == n else 'in'} {more}; the O(N²M) "
            "arithmetic of N VJPs, each over the whole path, is the same either way. Forward "
            "mode's two JVPs avoid it, and so does one reverse pass over per-path copies of "
            "the parameters (the pathwise gradient), where the paths do not interact."
        )
    return said


def chunked_at(df: pd.DataFrame, paths: int, cotangents: float | None = None) -> str:
    """What the chunked strategies measured at N = paths: in which frameworks they ran correctly
    (and in which none was run there), their peaks beyond the inputs beside the chunk's
    cotangents alone (cotangents, bytes), their warm times, and that chunking bounds the memory
    of vectorized reverse mode but not its N sweeps; says so where none ran."""
    names = {(s.framework, s.name) for fw in registry.FRAMEWORKS
             for s in registry.by_framework(fw, "gbm") if s.batching == "chunked"}  # fmt: skip
    at_n = queries.gbm(df, paths=paths)
    at_n = at_n[[(fw, s) in names
                 for fw, s in zip(at_n["framework"], at_n["strategy"], strict=True)]]  # fmt: skip
    ran = at_n[(at_n["status"] == "ok").fillna(False).astype(bool)]
    if ran.empty:
        return f"No chunked strategy ran correctly at N = {paths:,} in this build."
    where = formats.listing(sorted({FRAMEWORK_NAMES[fw] for fw in ran["framework"]}))
    unrun = sorted({FRAMEWORK_NAMES[fw] for fw, _ in names} - set(at_n["framework"].map(
        FRAMEWORK_NAMES)))  # fmt: skip
    said = f"Measured at N = {paths:,}, the chunked strategies ({where}) held "
    said += f"{formats.span(ran['peak_over_inputs'], formats.size)} beyond the inputs"
    if not formats.missing(cotangents):
        said += f" (the chunk's cotangents alone are {formats.size(cotangents)})"
    said += (
        f" and took {formats.span(ran['warm_median_s'], formats.time)} a warm call: chunking "
        "bounds the memory, not the N sweeps of the arithmetic."
    )
    if unrun:
        verb = "was" if len(unrun) == 1 else "were"
        said += f" {formats.listing([u + chr(39) + 's' for u in unrun])} {verb} not run there."
    return said
