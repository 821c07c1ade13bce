"""Second derivatives in chapter 6: the moments problem's dense Hessians against its
Hessian-vector products, and the GBM's per-path second derivatives (forward over reverse)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from jacbench.constants import AD_FRAMEWORKS, TOLERANCE
from jacbench.measure.targets import SecondOrderTarget
from jacbench.report import margins as noise
from jacbench.report import queries
from jacbench.second import registry as methods
from jacbench.strategies import registry

DENSE, PRODUCTS = "dense", "hvp"


def _compare(a, b, margins: noise.Margins) -> noise.Comparison | None:
    if a is None or b is None or a["status"] != "ok" or b["status"] != "ok":
        return None
    return noise.compare(a, b, margins)


@dataclass(frozen=True)
class Hessians:
    """The dense Hessians and the products Hv of the moments problem, as sizes, counts and
    comparisons."""

    n: int
    sizes: tuple[int, ...]  # every n a dense Hessian was tried at, and the question's
    dense_largest: int | None  # the largest n at which a dense Hessian ran correctly
    dense_stopped: int | None  # the smallest n at which none ran correctly
    stopped_statuses: tuple[str, ...]  # what became of each dense method there
    cap: float | None  # the memory cap there, bytes
    dense_at_n: tuple[str, ...]  # what became of each dense method at the question's n
    both_at: int | None  # the largest n at which products and dense Hessians both ran
    # by framework, at both_at: the answer's product (forward over reverse) against each dense one
    products_against_dense: Mapping[str, tuple[noise.Comparison, ...]]
    jax_dense_peak: float | None = None  # jax.hessian's peak beyond its inputs at dense_largest

    @property
    def none_started_at_n(self) -> bool:
        """Whether no dense Hessian was started at n: each skipped on the model's prediction."""
        return bool(self.dense_at_n) and set(self.dense_at_n) == {"skipped-predicted"}

    @property
    def all_capped(self) -> bool:
        """Whether every dense method stopped at the memory cap where none ran."""
        return bool(self.stopped_statuses) and set(self.stopped_statuses) == {"memory-cap"}

    def products_win(self, framework: str) -> bool:
        """Whether the products beat every dense method of a framework at both_at."""
        found = self.products_against_dense.get(framework, ())
        product = methods.answer(framework).name
        return bool(found) and all(c.winner() == product for c in found)

    def unranked(self, framework: str) -> bool:
        """Whether every call compared in a framework at both_at is under a millisecond."""
        found = self.products_against_dense.get(framework, ())
        return bool(found) and all(c.overhead for c in found)


def hessians(df: pd.DataFrame, margins: noise.Margins, n: int) -> Hessians:
    """The Hessians' facts from the rows (the moments problem, float32, glibc)."""
    second = queries.second_order(df, "moments", kind=(DENSE, PRODUCTS))
    dense = second[second["kind"] == DENSE]
    ok = dense[dense["status"] == "ok"]
    largest = int(ok["inputs"].max()) if len(ok) else None
    failed = sorted(set(dense["inputs"]) - set(ok["inputs"]))
    failed = [m for m in failed if largest is None or m > largest]
    stopped = int(failed[0]) if failed else None
    there = dense[dense["inputs"] == stopped]
    caps = there["mem_cap"].dropna()
    ran = second[second["status"] == "ok"]
    common = set(ran[ran["kind"] == DENSE]["inputs"]) & set(ran[ran["kind"] == PRODUCTS]["inputs"])
    both = int(max(common)) if common else None
    against = {}
    for fw in AD_FRAMEWORKS:
        at = ran[(ran["framework"] == fw) & (ran["inputs"] == both)]
        hvp = queries.one(at, kind=PRODUCTS, method=methods.answer(fw).name)
        found = [_compare(hvp, r, margins) for _, r in at[at["kind"] == DENSE].iterrows()]
        if found and None not in found:
            against[fw] = tuple(found)
    jax_dense = queries.one(ok, framework="jax", method=methods.default("jax").name,
                            inputs=largest)  # fmt: skip
    return Hessians(
        jax_dense_peak=queries.number(jax_dense, "peak_over_inputs"),
        n=n,
        sizes=tuple(sorted({int(m) for m in dense["inputs"]} | {n})),
        dense_largest=largest,
        dense_stopped=stopped,
        stopped_statuses=tuple(str(s) for s in there["status"]),
        cap=float(caps.max()) if len(caps) else None,
        dense_at_n=tuple(str(s) for s in dense[dense["inputs"] == n]["status"]),
        both_at=both,
        products_against_dense=against,
    )


# JAX's per-path second derivatives compiled without YNNPACK's fusions, beside JAX as installed.
GREEKS, NO_YNN = "per-path-second", "per-path-second-no-ynn"


@dataclass(frozen=True)
class Greeks:
    """The GBM's per-path second derivatives: their errors against the closed forms, PyTorch's
    cost against its first-order pathwise Jacobian, and JAX's float32 anomaly."""

    error: Mapping[str, float | None]  # the largest error of the correct rows, by dtype
    paths: int | None  # the largest N at which PyTorch's Greeks and pathwise Jacobian both ran
    over_pathwise: noise.Comparison | None  # PyTorch's Greeks against its pathwise Jacobian there
    jax_paths: int | None  # the largest N at which JAX's Greeks ran in both dtypes and both builds
    jax_dtypes: noise.Comparison | None  # JAX's float32 Greeks against its float64 ones there
    jax_float32_slower: bool  # whether float32 is the slower of the two there
    jax_no_ynn: noise.Comparison | None  # float32 as installed against without YNNPACK there
    # PyTorch's Greeks against its compiled pathwise Jacobian (its pick for repeated calls) at
    # the same N; None where that did not run there.
    over_compiled: noise.Comparison | None = None

    @property
    def accurate(self) -> bool:
        """Whether every correct row is within its dtype's tolerance (the harness's check)."""
        found = [(d, e) for d, e in self.error.items() if e is not None]
        return bool(found) and all(e <= TOLERANCE[d] for d, e in found)

    @property
    def jax_float32_anomaly(self) -> bool:
        """Whether JAX's float32 Greeks are slower than its float64 ones at jax_paths, and
        faster without YNNPACK's fusions."""
        d, y = self.jax_dtypes, self.jax_no_ynn
        return bool(d and d.ranked and self.jax_float32_slower and y and y.winner() == NO_YNN)


def greeks_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The GBM's per-path second derivatives in both dtypes, by framework, method and N."""
    rows = queries.where(df, problem="gbm", target="second", allocator="glibc")
    return rows.sort_values(["framework", "strategy", "dtype", "paths"], kind="stable")


def _jax(rows: pd.DataFrame, margins: noise.Margins):
    jax = rows[(rows["framework"] == "jax") & (rows["status"] == "ok")]
    sizes = None
    for strategy in (GREEKS, NO_YNN):
        for dtype in ("float32", "float64"):
            name = SecondOrderTarget("jax", strategy).text
            mine = (jax["strategy"] == name) & (jax["dtype"] == dtype)
            ran = set(jax[mine]["paths"])
            sizes = ran if sizes is None else sizes & ran
    if not sizes:
        return None, None, False, None
    n = int(max(sizes))
    at = jax[jax["paths"] == n]
    greeks, no_ynn = (SecondOrderTarget("jax", s).text for s in (GREEKS, NO_YNN))
    f32 = queries.one(at, strategy=greeks, dtype="float32")
    f64 = queries.one(at, strategy=greeks, dtype="float64")
    off = queries.one(at, strategy=no_ynn, dtype="float32")
    dtypes = _compare(f32, f64, margins)
    slower = bool(dtypes and not dtypes.a_faster)
    return n, dtypes, slower, _compare(f32, off, margins)


def greeks(df: pd.DataFrame, margins: noise.Margins, framework: str = "torch") -> Greeks:
    """The per-path second derivatives' facts from the rows."""
    rows = greeks_rows(df)
    ok = rows[rows["status"] == "ok"]
    error = {}
    for dtype in ("float32", "float64"):
        e = ok[ok["dtype"] == dtype]["max_rel_error"].dropna()
        error[dtype] = float(e.max()) if len(e) else None
    pathwise = registry.answer(framework, "pathwise").name
    first = queries.gbm(df, framework=framework, strategy=pathwise, status="ok")
    mine = ok[(ok["framework"] == framework) & (ok["dtype"] == "float32")]
    common = sorted(set(first["paths"]) & set(mine["paths"]))
    paths = int(common[-1]) if common else None
    there = queries.one(mine, paths=paths)
    over = _compare(there, queries.one(first, paths=paths), margins)
    compiled = next((c for c, e in registry.compiled_variants(framework) if e == pathwise), None)
    fused = queries.gbm(df, framework=framework, strategy=compiled, paths=paths, status="ok")
    jax_paths, dtypes, slower, no_ynn = _jax(rows, margins)
    return Greeks(error, paths, over, jax_paths, dtypes, slower, no_ynn,
                  _compare(there, queries.one(fused), margins))  # fmt: skip
