"""Hessian-vector products and Hessian diagonals in chapter 6: the three products H_k v in one
pass, forward over reverse against reverse over reverse, each priced in gradients (the answer's
3 x n Jacobian of the same function, three gradients); and the diagonal, exactly from n products
against Hutchinson's estimate."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pandas as pd

from jacbench.constants import AD_FRAMEWORKS
from jacbench.measure.targets import SecondOrderTarget
from jacbench.report import margins as noise
from jacbench.report import queries
from jacbench.second import registry as second
from jacbench.strategies import registry

FORWARD, REVERSE = "forward-over-reverse", "reverse-over-reverse"
EXACT, ESTIMATE = "exact", "estimate"


def _text(framework: str, composition: str) -> str | None:
    method = second.composed(framework, composition)
    return SecondOrderTarget(framework, method.name).text if method else None


def _ok(df: pd.DataFrame, framework: str, strategy: str | None, n: int) -> pd.Series | None:
    if strategy is None:
        return None
    return queries.one(df, framework=framework, strategy=strategy, inputs=n, status="ok")


def _compare(a, b, margins: noise.Margins) -> noise.Comparison | None:
    return noise.compare(a, b, margins) if a is not None and b is not None else None


@dataclass(frozen=True)
class Product:
    """One framework's products at one n: their warm calls and the Jacobian's, in seconds."""

    framework: str
    n: int
    forward_s: float
    reverse_s: float | None
    jacobian_s: float | None  # the answer's 3 x n Jacobian: three gradients
    against_reverse: noise.Comparison | None  # forward over reverse against reverse over reverse

    @property
    def in_gradients(self) -> float | None:
        """One product's time in gradients of the same output: the three products over the
        three gradients."""
        return self.forward_s / self.jacobian_s if self.jacobian_s else None


@dataclass(frozen=True)
class Products:
    """Every framework's products at every n they ran."""

    found: Mapping[tuple[str, int], Product]

    @property
    def sizes(self) -> tuple[int, ...]:
        return tuple(sorted({n for _, n in self.found}))

    def at(self, framework: str, n: int) -> Product | None:
        return self.found.get((framework, n))

    def in_gradients(self, n: int) -> dict[str, float]:
        """By framework, one product's time in gradients at n (where both ran)."""
        return {
            fw: p.in_gradients
            for fw in AD_FRAMEWORKS
            if (p := self.at(fw, n)) is not None and p.in_gradients is not None
        }

    def forward_wins(self, framework: str, n: int) -> bool:
        p = self.at(framework, n)
        name = second.composed(framework, FORWARD).name
        return bool(p and p.against_reverse and p.against_reverse.winner() == name)


def products(df: pd.DataFrame, margins: noise.Margins) -> Products:
    """The products' facts from the rows (the moments problem, float32, glibc)."""
    rows = queries.where(df, problem="moments", **queries.BASE)
    found = {}
    for fw in AD_FRAMEWORKS:
        forward_text, reverse_text = _text(fw, FORWARD), _text(fw, REVERSE)
        jacobian = registry.snippet(fw, "wide")
        ran = rows[(rows["framework"] == fw) & (rows["strategy"] == forward_text)]
        for n in sorted({int(m) for m in ran[ran["status"] == "ok"]["inputs"]}):
            a = _ok(rows, fw, forward_text, n)
            b = _ok(rows, fw, reverse_text, n)
            j = _ok(rows, fw, jacobian.name if jacobian else None, n)
            found[(fw, n)] = Product(
                fw, n, float(a["warm_median_s"]),
                float(b["warm_median_s"]) if b is not None else None,
                float(j["warm_median_s"]) if j is not None else None,
                _compare(a, b, margins),
            )  # fmt: skip
    return Products(found)


@dataclass(frozen=True)
class Diagonals:
    """The Hessians' diagonal: exactly from n products, and by Hutchinson's estimate."""

    estimate_error: float | None  # the largest error of Hutchinson's correct rows (float32)
    both_at: int | None  # the largest n where both ran in PyTorch
    exact_against_estimate: noise.Comparison | None  # PyTorch's two there
    exact_sizes: tuple[int, ...]  # where PyTorch's exact diagonal ran
    # By framework, how many times the exact diagonal's warm call grew from its smallest n to
    # its largest (exact_sizes).
    growth: Mapping[str, float] = field(default_factory=dict)
    # By framework, the largest n its estimate ran at, and the sizes where it did not, with
    # their status ("memory-cap", ...).
    estimate_largest: Mapping[str, int] = field(default_factory=dict)
    estimate_failed: Mapping[str, Mapping[int, str]] = field(default_factory=dict)

    @property
    def estimate_wins(self) -> bool:
        c = self.exact_against_estimate
        return bool(c and c.winner() == second.composed("torch", ESTIMATE).name)


def diagonals(df: pd.DataFrame, margins: noise.Margins, framework: str = "torch") -> Diagonals:
    rows = queries.where(df, problem="moments", **queries.BASE)
    ok = rows[rows["status"] == "ok"]
    estimates = ok[ok["strategy"].isin([_text(fw, ESTIMATE) for fw in AD_FRAMEWORKS])]
    errors = estimates["max_rel_error"].dropna()
    exact_text, estimate_text = _text(framework, EXACT), _text(framework, ESTIMATE)
    mine = ok[ok["framework"] == framework]
    exact_sizes = sorted({int(n) for n in mine[mine["strategy"] == exact_text]["inputs"]})
    both = sorted(set(exact_sizes) & set(mine[mine["strategy"] == estimate_text]["inputs"]))
    n = int(both[-1]) if both else None
    growth = {}
    for fw in AD_FRAMEWORKS if len(exact_sizes) > 1 else ():
        exact = _text(fw, EXACT)
        a, b = (_ok(rows, fw, exact, m) for m in (exact_sizes[0], exact_sizes[-1]))
        if a is not None and b is not None:
            growth[fw] = float(b["warm_median_s"] / a["warm_median_s"])
    return Diagonals(
        float(errors.max()) if len(errors) else None,
        n,
        _compare(
            _ok(rows, framework, exact_text, n), _ok(rows, framework, estimate_text, n), margins
        )
        if n
        else None,  # fmt: skip
        tuple(exact_sizes),
        growth,
        *_estimates(rows),
    )


def _estimates(rows: pd.DataFrame) -> tuple[dict[str, int], dict[str, dict[int, str]]]:
    """Each framework's largest n with Hutchinson's estimate correct, and the sizes where it
    failed with their status."""
    largest, failed = {}, {}
    for fw in AD_FRAMEWORKS:
        mine = rows[(rows["framework"] == fw) & (rows["strategy"] == _text(fw, ESTIMATE))]
        ok = mine[mine["status"] == "ok"]["inputs"]
        if len(ok):
            largest[fw] = int(ok.max())
        bad = mine[mine["status"] != "ok"]
        if len(bad):
            failed[fw] = dict(
                zip(bad["inputs"].astype(int), bad["status"].astype(str), strict=True)
            )
    return largest, failed
