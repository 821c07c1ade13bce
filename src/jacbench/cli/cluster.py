"""The --cluster option of the commands that measure (sweep, reference, advise), and advise's
workers pinned to one machine of the cluster (see measure.cluster)."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable, Iterator


def add_cluster(p: argparse.ArgumentParser) -> None:
    """The --cluster option of the commands that measure (see measure.cluster)."""
    p.add_argument("--cluster", metavar="WHERE", help="measure on a Dask cluster: local (process "
                   "workers here), tcp://HOST:8786 (a running scheduler) or slurm[:CONFIG.yaml] "
                   "(default: here, without Dask)")  # fmt: skip


@contextlib.contextmanager
def pinned_to_cluster(spec: str | None) -> Iterator[None]:
    """Every capped worker started meanwhile (advise's) run on one machine of the Dask cluster
    spec; here where spec is None."""
    if spec is None:
        yield
        return
    from jacbench.measure import cluster

    with cluster.connect(spec, workers=1) as client, cluster.pinned(client, say=_say):
        yield


def on_cluster(command: Callable[[argparse.Namespace], int]) -> Callable:
    """command run with its workers pinned to one machine of the cluster its --cluster names."""

    def run(args: argparse.Namespace) -> int:
        with pinned_to_cluster(args.cluster):
            return command(args)

    return run


def _say(line: str) -> None:
    print(f"jacbench: {line}", file=sys.stderr, flush=True)
