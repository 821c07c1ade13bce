"""The registry of second-order methods, as data (framework, name, kind, description, memory).

A method is built for a case like a Jacobian strategy: ``method.build(case)`` returns a
no-argument callable computing the result from scratch, and ``method.error(case, result)``
measures it against the closed form. Dense Hessians, HVPs and diagonals take a moments case;
per-path Greeks take a GBM case.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from jacbench.errors import Unsupported, UsageError, device_refusal
from jacbench.strategies.memory_model import MemoryModel
from jacbench.strategies.memory_model import MemoryModel as M

# dense: the full Hessian of each of the 3 outputs, (3, n, n); hvp: Hessian-vector products
# (3, n); diagonal: diag(H_k), (3, n), exactly (n products) or estimated (Hutchinson's, which is
# exact for this separable f's diagonal Hessians: see problems.moments); greeks: per-path
# (d2 S_T / dS0 dsigma, d2 S_T / dsigma2), (N, 2), of the GBM simulation.
KINDS = ("dense", "hvp", "diagonal", "greeks")


@dataclass(frozen=True)
class Method(Unsupported):
    """One second-order method, described as data, with the roles the chapters read."""

    framework: str
    name: str
    kind: str
    description: str
    # Working memory in the model's units: for the moments problem one "path array" is the
    # n inputs, so batch=1 means one n x n matrix (see jacbench.strategies.memory_model).
    memory: MemoryModel = MemoryModel()
    # --- roles ---
    default: bool = False  # the framework's own Hessian call
    # How a dense method builds the Hessian, in the recommendation's words (from its code).
    how: str = ""
    answer: bool = False  # the answer's wide snippet runs it (Hessian-vector products)
    # How a product or a diagonal is composed, for the chapters to pair them: an hvp's order of
    # modes ("forward-over-reverse", "reverse-over-reverse"); a diagonal's "exact" (n products)
    # or "estimate" (Hutchinson's).
    composition: str = ""
    candidate: bool = True  # a recommendation may pick it (every method here)
    # The API call it makes, as the glossary shows it (see strategies.registry.Strategy.call).
    call: str = ""
    # Why it runs on the CPU only, beyond its framework's devices ("": wherever they run).
    cpu_only: str = ""

    @property
    def key(self) -> str:
        return f"{self.framework}/{self.name}"

    @property
    def problem(self) -> str:
        return "gbm" if self.kind == "greeks" else "moments"

    def unsupported(self, problem: str, dtype: str, device: str = "cpu") -> str | None:
        """Why this method cannot run the problem on the device, or None when it can (both
        dtypes run)."""
        if refusal := device_refusal(f"second-order method {self.key}", self.framework, device):
            return refusal
        if device != "cpu" and self.cpu_only:
            return f"second-order method {self.key} runs on the cpu only: {self.cpu_only}"
        if problem != self.problem:
            return f"second-order method {self.key} takes the {self.problem} problem, not {problem}"
        return None

    def memory_for(self, problem: str) -> MemoryModel:
        return self.memory

    def build(self, case) -> Callable[[], np.ndarray]:
        """Prepare the method for a case; calling the result computes it from scratch."""
        self.check(case.problem, case.params.dtype, case.device)
        module = importlib.import_module(f"jacbench.second.{self.framework}_second")
        return getattr(module, "build_" + self.name.replace("-", "_"))(case)

    def reference(self, case) -> np.ndarray:
        """The closed form of what the method computes, in float64."""
        from jacbench.problems import gbm, moments

        if self.kind == "greeks":
            return gbm.hessian_closed_form(case)[:, 1:]
        if self.kind == "dense":
            return moments.dense_hessian(case.x)
        if self.kind == "hvp":
            return moments.hvp_closed_form(case.x, moments.direction(case))
        return moments.hessian_diagonal(case.x)

    def error(self, case, result: np.ndarray) -> float:
        """Largest error against the closed form, per output scaled by its magnitude."""
        from jacbench.problems import gbm, moments
        from jacbench.strategies.devices import to_host

        result = to_host(result)
        if self.kind == "greeks":
            return gbm.relative_error(result, self.reference(case))
        if self.kind == "dense":  # row blocks: never a second copy of the n x n Hessians
            return moments.dense_hessian_error(result, case.x)
        return moments.relative_error(result, self.reference(case), axis=0)


# Memory coefficients, fitted on a calibration sweep (dense: n = 1,000-6,000; products: n up to
# 10^7; Greeks: N = 10^4-10^5). Dense Hessians hold several n x n matrices (batch), products a
# few n-vectors (arrays), Greeks a few path arrays of the simulation (forward over reverse).
# Beyond the fitted range the dense ones grow faster than the model: at n = 10,000 every one
# passed an 8 GiB cap (jax.hessian, 3.2 n x n at n = 6,000, needed over 20); the cap records it.
METHODS: tuple[Method, ...] = (
    Method("torch", "functional-hessian", "dense",
           "torch.autograd.functional.hessian of each output (reverse-over-reverse).",
           M(batch=8, fixed_mib=20), default=True,
           how="per output, a loop of n reverse sweeps over the gradient's graph; the n rows "
           "kept, then stacked into a copy",
           call="torch.autograd.functional.hessian(f_k, x) per output"),
    Method("torch", "func-hessian", "dense",
           "torch.func.hessian (jacfwd over jacrev) of all three outputs at once.",
           M(batch=12.5, fixed_mib=100),
           how="jacfwd over jacrev: the n rows of an n × n identity pushed as tangents through "
           "the reverse pass of all three outputs at once, every intermediate n times larger",
           call="torch.func.hessian(f)"),
    Method("torch", "hvp-forward-over-reverse", "hvp",
           "Forward over reverse: torch.func.jvp of the vector function's torch.func.jacrev, "
           "the three products H_k v in one pass.",
           M(arrays=20, fixed_mib=150), answer=True,
           composition="forward-over-reverse",
           call="torch.func.jvp(torch.func.jacrev(f), (x,), (v,))"),
    Method("torch", "hvp-reverse-over-reverse", "hvp",
           "Reverse over reverse: torch.func.jacrev of J(x) v, the three products at once.",
           M(arrays=20, fixed_mib=150),
           composition="reverse-over-reverse",
           call="torch.func.jacrev(lambda x: torch.func.jacrev(f)(x) @ v)(x)"),
    Method("torch", "diagonal-hvps", "diagonal",
           "diag(H_k) exactly for any f: n products H_k e_i, 64 unit vectors at a time under "
           "torch.func.vmap, entry i of each kept; never the n x n Hessian.",
           M(arrays=800, fixed_mib=150),
           composition="exact",
           call="torch.func.vmap of the product over unit vectors e_i, entry i kept"),
    Method("torch", "diagonal-hutchinson", "diagonal",
           "Hutchinson's estimate of diag(H_k): the mean of v * H_k v over 16 Rademacher "
           "probes, one product at a time (exact for a diagonal H).",
           M(arrays=40, fixed_mib=150),
           composition="estimate",
           call="mean over ±1 vectors v of v * torch.func.jvp(torch.func.jacrev(f), (x,), (v,))[1]",
           ),
    Method("torch", "per-path-second", "greeks",
           "Per-path second derivatives of S_T: jvp in vol over the pathwise gradient.",
           M(arrays=24, fixed_mib=90),
           call="torch.func.jvp of the pathwise torch.func.grad, tangent in vol"),
    Method("tensorflow", "nested-tapes", "dense",
           "A GradientTape.jacobian of the gradient from an inner tape, per output.",
           M(batch=12.5, fixed_mib=20), default=True,
           how="per output, tape.jacobian of the inner tape's gradient, vectorized by pfor: "
           "every intermediate of the gradient holds n rows",
           call="outer_tape.jacobian(inner_tape.gradient(y_k, x), x) per output"),
    Method("tensorflow", "hvp-forward-over-reverse", "hvp",
           "Forward over reverse: a ForwardAccumulator around a GradientTape's jacobian of the "
           "vector function, in one tf.function: the three products H_k v in one pass.",
           M(arrays=40, fixed_mib=20), answer=True,
           composition="forward-over-reverse",
           call="tf.autodiff.ForwardAccumulator(x, v) around tape.jacobian(f(x), x)"),
    Method("tensorflow", "hvp-reverse-over-reverse", "hvp",
           "Reverse over reverse: an outer tape's jacobian of J(x) v from an inner tape, in one "
           "tf.function.",
           M(arrays=40, fixed_mib=20),
           composition="reverse-over-reverse",
           call="outer_tape.jacobian(tf.linalg.matvec(inner_tape.jacobian(f(x), x), v), x)"),
    Method("tensorflow", "diagonal-hutchinson", "diagonal",
           "Hutchinson's estimate of diag(H_k): the mean of v * H_k v over 16 Rademacher "
           "probes, tf.foldl over the products in one tf.function (exact for a diagonal H).",
           M(arrays=60, fixed_mib=20),
           composition="estimate",
           call="mean of v * hvp(x, v) over random ±1 vectors v (tf.foldl)"),
    Method("tensorflow", "per-path-second", "greeks",
           "Per-path second derivatives of S_T: ForwardAccumulator in vol over the pathwise "
           "gradient.",
           M(arrays=16, fixed_mib=15),
           call="tf.autodiff.ForwardAccumulator in vol around the pathwise tape.gradient"),
    Method("jax", "hessian", "dense",
           "jax.hessian (jacfwd over jacrev) under jit.", M(batch=3.2, fixed_mib=40),
           default=True,
           how="jacfwd over jacrev under jit: the n × n identity as tangents, fused by XLA",
           call="jax.jit(jax.hessian(f))"),
    Method("jax", "hvp-forward-over-reverse", "hvp",
           "Forward over reverse: jax.jvp of the vector function's jax.jacrev under jit, the "
           "three products H_k v in one pass.", M(arrays=6, fixed_mib=60), answer=True,
           composition="forward-over-reverse",
           call="jax.jit(jax.jvp(jax.jacrev(f), (x,), (v,)))"),
    Method("jax", "hvp-reverse-over-reverse", "hvp",
           "Reverse over reverse: jax.jacrev of J(x) v under jit.", M(arrays=28, fixed_mib=60),
           composition="reverse-over-reverse",
           call="jax.jit(jax.jacrev(lambda x: jax.jacrev(f)(x) @ v))"),
    Method("jax", "diagonal-hvps", "diagonal",
           "diag(H_k) exactly for any f: n products H_k e_i under jit, lax.map 64 unit vectors "
           "at a time, entry i of each kept; never the n x n Hessian.",
           M(arrays=800, fixed_mib=60),
           composition="exact",
           call="jax.lax.map of the product over unit vectors e_i (batch_size=64)"),
    Method("jax", "diagonal-hutchinson", "diagonal",
           "Hutchinson's estimate of diag(H_k): the mean of v * H_k v over 16 Rademacher "
           "probes, lax.fori_loop over the products under jit (exact for a diagonal H).",
           M(arrays=30, fixed_mib=60),
           composition="estimate",
           call="mean of v * hvp(x, v) over random ±1 vectors v (jax.lax.fori_loop)"),
    Method("jax", "per-path-second", "greeks",
           "Per-path second derivatives of S_T: jax.jvp in vol over the pathwise jax.grad, "
           "under jit.",
           M(arrays=6, fixed_mib=75),
           call="jax.jvp of the pathwise jax.grad, tangent in vol, inside jax.jit"),
    # jaxlib 0.10.2's YNNPACK reduction over the time axis stops scaling in float32 beyond
    # about 10^5 paths (jax_second): the same method without it, beside JAX as installed.
    Method("jax", "per-path-second-no-ynn", "greeks",
           "per-path-second compiled with XLA's YNNPACK fusion off "
           "(--xla_cpu_experimental_ynn_fusion_type=).", M(arrays=6, fixed_mib=75),
           call="per-path-second's call, with XLA's YNNPACK fusion turned off in jax.jit",
           cpu_only="YNNPACK and the option that turns it off are XLA's CPU compiler's"),
)  # fmt: skip


def get(framework: str, name: str) -> Method:
    """Look up one method; UsageError lists the valid choices."""
    for m in METHODS:
        if m.framework == framework and m.name == name:
            return m
    valid = ", ".join(m.key for m in METHODS)
    raise UsageError(f"unknown second-order method {framework}/{name}; choose one of: {valid}")


def by_framework(framework: str, problem: str | None = None) -> list[Method]:
    """The methods of a framework, optionally only those of one problem."""
    return [
        m for m in METHODS if m.framework == framework and (problem is None or m.problem == problem)
    ]


def default(framework: str) -> Method | None:
    """The framework's own Hessian call (None: numpy has none)."""
    return next((m for m in by_framework(framework) if m.default), None)


def composed(framework: str, composition: str) -> Method | None:
    """A framework's method composed so (Method.composition), or None where it has none."""
    return next((m for m in by_framework(framework) if m.composition == composition), None)


def answer(framework: str) -> Method | None:
    """The method the answer's wide snippet runs (Hessian-vector products)."""
    return next((m for m in by_framework(framework) if m.answer), None)
