"""What TensorFlow's default GradientTape.jacobian holds for the GBM, read from its program.

pfor turns the N backward passes of tape-jacobian-pfor into one program on batched arrays. Its
arrays of one cotangent per output, each a path array, are N x (M+1) x N values: a *batch*. This
module traces that program (tape.jacobian inside one tf.function, the operations pfor emits
eagerly too) without running it, lists the batches it makes, and counts how many are alive at
once, each array freed once its last reader has run, in two schedules: one operation at a time
in the order the program lists them, and every operation as soon as its inputs are ready, as
TensorFlow's executor runs a graph. The memory model's ``batch`` coefficient of
tape-jacobian-pfor is the second count rounded up against the measured peak;
tests/test_pfor_anatomy.py keeps the two together.

TensorFlow is imported only in the traced process: :func:`anatomy` runs :func:`trace` in a
child process, so that TensorFlow's import logs stay out of a notebook's output.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Anatomy:
    """The batches of pfor's program for N paths and M steps, in the order it makes them."""

    paths: int
    steps: int
    made: tuple[str, ...]  # the operation type that makes each batch
    in_order: int  # the most batches alive at once, one operation at a time in program order
    when_ready: int  # the same, every operation run as soon as its inputs are ready


def trace(paths: int, steps: int) -> Anatomy:
    """Trace tape.jacobian of the book's simulation at N paths (float32) and read its batches."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    from jacbench.problems import gbm
    from jacbench.strategies.tensorflow_gbm import simulate

    case = gbm.make_case(gbm.GBMParams(paths=paths, steps=steps))
    p = case.params
    z, t = tf.constant(case.normals), tf.constant(case.t)
    drift = tf.constant(p.drift, dtype=tf.float32)

    @tf.function
    def jacobian(spot, vol):
        with tf.GradientTape() as tape:
            tape.watch([spot, vol])
            s = simulate(spot, vol, z, t, drift)
        return tape.jacobian(s, [spot, vol])

    scalar = tf.constant(p.spot, dtype=tf.float32), tf.constant(p.vol, dtype=tf.float32)
    ops = jacobian.get_concrete_function(*scalar).graph.get_operations()
    batch = paths * (steps + 1) * paths  # values in one batch: N cotangents of (M+1) x N
    order = {op.name: i for i, op in enumerate(ops)}
    # Each operation's level when every one runs as soon as its inputs are ready: one more than
    # its latest input's (the graph lists operations after their inputs).
    level: dict[str, int] = {}
    for op in ops:
        level[op.name] = 1 + max((level[x.op.name] for x in op.inputs), default=-1)
    made = []  # each batch's maker, when it is made and when it is last read, in both schedules
    for op in ops:
        for out in op.outputs:
            if out.shape.num_elements() == batch:
                readers = out.consumers() or [op]
                made.append(
                    (
                        op.type,
                        (order[op.name], max(order[c.name] for c in readers)),
                        (level[op.name], max(level[c.name] for c in readers)),
                    )
                )
    return Anatomy(
        paths,
        steps,
        tuple(kind for kind, _, _ in made),
        _most_alive([span for _, span, _ in made]),
        _most_alive([span for _, _, span in made]),
    )


def _most_alive(spans: list[tuple[int, int]]) -> int:
    """The most (made, last read) spans that overlap at any one moment."""
    return max((sum(1 for a, b in spans if a <= t <= b) for t, _ in spans), default=0)


def anatomy(paths: int = 300, steps: int = 52) -> Anatomy:
    """:func:`trace` run in a child process (TensorFlow's logs go nowhere), a few seconds."""
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run(
        [sys.executable, "-m", __name__, str(paths), str(steps)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    found = json.loads(done.stdout.strip().splitlines()[-1])
    return Anatomy(**{**found, "made": tuple(found["made"])})


if __name__ == "__main__":
    print(json.dumps(asdict(trace(int(sys.argv[1]), int(sys.argv[2])))))
