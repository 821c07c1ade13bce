"""What each compiler materialises for forward mode of the two forms, read from its program.

Forward mode of S_T needs each path's normals once and a few values a path besides. Whether a
compiled Jacobian holds more is read here from the program the compiler made, never from a
memory measurement: for each framework, its whole-array forward mode (the strategy of the
registry's "forward" answer role, compiled) and its step form's carried tangent, compiled at N
paths, and the arrays of the program's own that hold N values or more (its inputs excepted):

- JAX: the optimised HLO's top-level instructions (those outside a fusion, which XLA gives a
  buffer), and XLA's own count of the temporary bytes (``memory_analysis``);
- TensorFlow: the same HLO, from ``experimental_get_compiler_ir`` of the XLA function;
- PyTorch: the buffers inductor's generated code allocates (``empty_strided_cpu``).

An array of (M+1) x N or M x N values is a path array: the cumulative sum's, a tangent's of it.
Each framework is traced in a child process (:func:`anatomy`), as strategies.pfor_anatomy is.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass

# The strategies read: each framework's whole-array forward mode (compiled) and step form.
FORMS = {
    "torch": ("compiled-jvp", "steps-compiled-carry"),
    "tensorflow": ("forward-accumulator-xla", "steps-carry-xla"),
    "jax": ("jvp", "steps-carry"),
}


@dataclass(frozen=True)
class Program:
    """The arrays of N values or more one compiled Jacobian makes (its inputs not counted)."""

    framework: str
    strategy: str
    paths: int
    steps: int
    arrays: tuple[tuple[int, ...], ...]  # each array's shape, largest first
    temp_bytes: int | None  # XLA's temporary bytes (JAX only), else None

    @property
    def path_arrays(self) -> int:
        """How many of its arrays hold a path array's worth, M x N values or more."""
        return sum(1 for a in self.arrays if _size(a) >= self.steps * self.paths)

    @property
    def largest(self) -> int:
        """Values in its largest array (0 where it makes none of N values)."""
        return max((_size(a) for a in self.arrays), default=0)


def _size(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


_SHAPE = re.compile(r"f(?:32|64)\[([0-9,]+)\]")
# Instructions that name a buffer made elsewhere (an input, a loop's state, a view), not one of
# their own.
ALIASES = r"\b(parameter|get-tuple-element|tuple|bitcast)\("


def _hlo_arrays(hlo: str, paths: int) -> list[tuple[int, ...]]:
    """Shapes of the top-level instructions of an optimised HLO module that hold N values or
    more: those of every computation but fusions' insides, and none that only names another's
    buffer (ALIASES: the inputs, a loop's state)."""
    found, inside_fusion = [], False
    for line in hlo.splitlines():
        header = re.match(r"\s*(ENTRY\s+)?%?([\w.\-]+)\s.*\{\s*$", line)
        if header and "=" not in line.split("{")[0]:
            inside_fusion = "fused" in header.group(2) or "fusion" in header.group(2)
            continue
        if inside_fusion or "=" not in line or re.search(ALIASES, line):
            continue
        lhs = line.split("=", 1)[1]
        m = _SHAPE.search(lhs.split("(")[0])  # the instruction's own shape, before its operands
        if m:
            shape = tuple(int(d) for d in m.group(1).split(","))
            if _size(shape) >= paths:
                found.append(shape)
    return found


def trace(framework: str, strategy: str, paths: int, steps: int) -> Program:
    """Compile the strategy at N paths (float32) and read its program's arrays."""
    from jacbench.problems import gbm

    case = gbm.make_case(gbm.GBMParams(paths=paths, steps=steps))
    arrays, temp = _READERS[framework](strategy, case)
    arrays = sorted(arrays, key=_size, reverse=True)
    return Program(framework, strategy, paths, steps, tuple(arrays), temp)


def _jax(strategy: str, case) -> tuple[list, int]:
    import jax

    from jacbench.strategies import jax_gbm, jax_steps

    fn = (jax_gbm._jvp if strategy == "jvp"
          else jax_steps._fn(case, jax_steps._carry))  # fmt: skip
    args = jax_gbm._args(case)
    compiled = jax.jit(fn).lower(*args).compile()
    temp = compiled.memory_analysis().temp_size_in_bytes
    return _hlo_arrays(compiled.as_text(), case.params.paths), int(temp)


def _tensorflow(strategy: str, case) -> tuple[list, None]:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    from jacbench.strategies import tensorflow_gbm, tensorflow_steps

    x = tensorflow_gbm._Inputs(case)
    if strategy == "forward-accumulator-xla":
        fn = tensorflow_gbm._forward
    else:
        payoff = tensorflow_steps._payoff(case)
        fn = lambda *a: tensorflow_steps._carry("while")(payoff, *a)  # noqa: E731
    xla = tf.function(fn, jit_compile=True)
    hlo = xla.experimental_get_compiler_ir(x.spot, x.vol, *x.data)(stage="optimized_hlo")
    return _hlo_arrays(hlo, case.params.paths), None


def _torch(strategy: str, case) -> tuple[list, None]:
    import torch
    from torch._inductor.utils import run_and_get_code

    from jacbench.strategies import torch_gbm, torch_steps

    if strategy == "compiled-jvp":
        x = torch_gbm._Inputs(case)
        fn, args = (lambda s, v: torch_gbm._two_jvps(x.f, s, v)), (x.spot, x.vol)
    else:
        loop = torch_steps._Loop(case)
        fn, args = (lambda s, v: torch_steps._carry(loop, s, v)), (loop.x.spot, loop.x.vol)
    _, code = run_and_get_code(torch.compile(fn, dynamic=False), *args)
    found = []
    for text in code:
        for m in re.finditer(r"empty_strided_cpu\(\(([0-9, ]*)\)", text):
            shape = tuple(int(d) for d in m.group(1).replace(" ", "").split(",") if d)
            if _size(shape) >= case.params.paths:
                found.append(shape)
    return found, None


_READERS = {"jax": _jax, "tensorflow": _tensorflow, "torch": _torch}


def anatomy(framework: str, paths: int = 10_000, steps: int = 52) -> tuple[Program, Program]:
    """The whole-array and the step form's programs of a framework (FORMS), each traced in a
    child process."""
    return tuple(_child(framework, s, paths, steps) for s in FORMS[framework])


def _child(framework: str, strategy: str, paths: int, steps: int) -> Program:
    call = f"trace({framework!r}, {strategy!r}, {paths}, {steps})"
    code = ("import json; from dataclasses import asdict; "
            "from jacbench.strategies.form_anatomy import trace; "
            f"print(json.dumps(asdict({call})))")  # fmt: skip
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env)  # fmt: skip
    record = json.loads(out.stdout.strip().splitlines()[-1])
    record["arrays"] = tuple(tuple(a) for a in record["arrays"])
    return Program(**record)
