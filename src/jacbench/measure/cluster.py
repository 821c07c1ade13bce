"""Where a sweep's cases run when they leave this machine: a Dask cluster (``--cluster``).

``local`` starts a LocalCluster of process workers on this machine; ``tcp://HOST:8786`` joins a
scheduler already running (``dask scheduler``, its workers started with ``dask worker
--resources measure=1 --nthreads 1``); ``slurm`` (or ``slurm:FILE.yaml``) asks SLURM for the
machines through dask-jobqueue, as SLURM_CONFIG describes. Each case is one task that needs the
resource ``measure``, of which a measuring machine has one: a machine measures one case at a
time, in the capped worker subprocess a local sweep starts (measure.harness). Dask is imported
only here and only with --cluster: the embedded default never needs it.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from jacbench.errors import UsageError
from jacbench.measure import environment, harness, probes, runner, store

# The worker resource a case needs, one per measuring machine.
RESOURCE = "measure"
# A case whose worker died while it ran is tried once more (elsewhere where there is another
# worker); a second death makes it an error row naming the worker (see cluster_sweep).
ALLOWED_FAILURES = 1
# The SLURM config read by --cluster slurm: a YAML mapping of these keys (queue, account,
# walltime, memory and cores per job as sbatch takes them; machines: how many jobs, one worker
# each; python: the interpreter on the nodes, this one by default).
SLURM_CONFIG = "slurm.yaml"
SLURM_KEYS = ("queue", "account", "walltime", "memory", "cores", "machines", "python",
              "job_extra_directives")  # fmt: skip
# How long a sweep waits for a first worker to join (a SLURM job may queue for a while).
WAIT_S = 600.0
INSTALL = "uv pip install -e '.[cluster]'"
CHOICES = "local, tcp://HOST:PORT (a running scheduler), slurm or slurm:CONFIG.yaml"


def _dask():
    """dask.distributed, or a UsageError saying how to install it."""
    try:
        import dask
        import distributed
    except ImportError:
        raise UsageError(f"--cluster needs dask.distributed: install the cluster group "
                         f"({INSTALL})") from None  # fmt: skip
    return dask, distributed


def kind(spec: str) -> str:
    """local, address or slurm; UsageError naming the choices for anything else."""
    if spec == "local":
        return "local"
    if spec == "slurm" or spec.startswith("slurm:"):
        return "slurm"
    if "://" in spec and spec.split("://", 1)[1]:
        return "address"
    raise UsageError(f"--cluster {spec!r}: choose {CHOICES}")


def slurm_options(path: Path) -> dict[str, Any]:
    """SLURMCluster's keyword arguments and the number of machines from the config file;
    UsageError naming a missing file, an unknown key or a missing one."""
    import yaml

    if not path.is_file():
        raise UsageError(f"--cluster slurm reads {path}, which does not exist (keys: "
                         + ", ".join(SLURM_KEYS) + "; see the README)")  # fmt: skip
    try:
        found = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as e:
        raise UsageError(f"{path} is not YAML: {str(e).splitlines()[0]}") from None
    if not isinstance(found, dict):
        raise UsageError(f"{path} must be a mapping of {', '.join(SLURM_KEYS)}")
    unknown = sorted(set(found) - set(SLURM_KEYS))
    if unknown:
        raise UsageError(f"{path}: unknown key {unknown[0]!r}; choose from {', '.join(SLURM_KEYS)}")
    missing = [k for k in ("queue", "walltime", "memory", "cores") if k not in found]
    if missing:
        raise UsageError(f"{path}: give {', '.join(missing)}")
    options = {
        "queue": found["queue"],
        "walltime": str(found["walltime"]),
        "memory": str(found["memory"]),
        "cores": int(found["cores"]),
        "processes": 1,  # one worker a machine, one case at a time on it
        "python": found.get("python", os.environ.get("JACBENCH_PYTHON", "python")),
        "worker_extra_args": ["--resources", f"{RESOURCE}=1", "--nthreads", "1"],
        "job_extra_directives": list(found.get("job_extra_directives", [])),
    }
    if "account" in found:
        options["account"] = found["account"]
    return {"options": options, "machines": int(found.get("machines", 1))}


@contextlib.contextmanager
def connect(spec: str, workers: int = 2) -> Iterator[Any]:
    """A dask.distributed Client for --cluster spec (workers: how many LocalCluster starts);
    the cluster it started, if any, is closed on the way out. An unreachable scheduler is a
    UsageError."""
    how = kind(spec)
    dask, distributed = _dask()
    # The scheduler of a cluster started here retries a case whose worker died once only.
    with dask.config.set({"distributed.scheduler.allowed-failures": ALLOWED_FAILURES}):
        if how == "address":
            try:
                client = distributed.Client(spec, set_as_default=False)
            except (OSError, TimeoutError) as e:
                why = _reason(e)
                raise UsageError(f"cannot reach the Dask scheduler at {spec}: {why}") from None
            with contextlib.closing(client):
                yield client
            return
        if how == "local":
            cluster = distributed.LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True,
                resources={RESOURCE: 1}, dashboard_address=":0", silence_logs=logging.ERROR,
            )  # fmt: skip
        else:
            from dask_jobqueue import SLURMCluster

            path = Path(spec.split(":", 1)[1] if ":" in spec else SLURM_CONFIG)
            found = slurm_options(path)
            cluster = SLURMCluster(**found["options"])
            cluster.scale(jobs=found["machines"])
        with contextlib.closing(cluster), distributed.Client(cluster, set_as_default=False) as c:
            yield c


def _reason(e: BaseException) -> str:
    """The first line of why a connection failed."""
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


def dashboard(client) -> str:
    """The scheduler's dashboard address where the scheduler has the bokeh that serves it; else
    what to install. Without bokeh the scheduler still gives an address, whose page only says
    that bokeh is missing."""
    from distributed.versions import BOKEH_REQUIREMENT

    link = getattr(client, "dashboard_link", "") or ""
    try:
        bokeh = client.get_versions(packages=["bokeh"])["scheduler"]["packages"].get("bokeh")
    except Exception:  # noqa: BLE001 - an old scheduler: say what is known, measure anyway
        bokeh = None
    if link and bokeh and BOKEH_REQUIREMENT.specifier.contains(bokeh, prereleases=True):
        return link
    return (f"not served: the scheduler's environment needs {BOKEH_REQUIREMENT} (the cluster "
            f"group installs it: {INSTALL})")  # fmt: skip


# What the sidecar records of each machine beside its environment (environment.machine_facts).
FACTS = ("git_commit", "read_bandwidth", "gpus", "device_probe")


@functools.cache
def machine(on_gpu: bool = False) -> dict[str, Any]:
    """This worker's machine: its environment (the fingerprint's fields), key, host name and
    facts (the commit, read bandwidth and, with on_gpu, the GPU's), read here, on the machine
    that measures; once per worker process."""
    env = environment.environment()
    return {"key": environment.fingerprint(env), "env": env, "host": socket.gethostname(),
            **environment.machine_facts(on_gpu)}  # fmt: skip


def describe(dask_worker=None, on_gpu: bool = False) -> dict[str, Any]:
    """What client.run gathers from each worker: its machine (see machine)."""
    return machine(on_gpu)


def measure_task(case, done: frozenset[str], deadline: float | None) -> dict[str, Any] | None:
    """One case on the worker that runs this: its row, keyed with this machine's fingerprint,
    with the host and the machine (see machine); {"done": key, "host": ...} where this machine
    measured it already; None once the deadline (a wall-clock time) has passed."""
    import time

    here = machine(case.device != "cpu")
    key = case.key(here["key"])
    if key in done:
        return {"done": key, "host": here["host"]}
    if deadline is not None and time.time() > deadline:
        return None
    os.environ[probes.WORKER_VARIABLE] = str(os.getpid())
    row = runner.measure_case(case)
    row.update(key=key, env=here["key"], method=store.METHOD)
    return {"row": row, "host": here["host"], "machine": here}


def remote_worker(spec: dict, limits, allocator: str = "glibc", steady: bool = False) -> dict:
    """harness.run_worker on a worker machine, for advise: the reference derivative's folder
    made there first (it is this machine's temporary folder)."""
    for part in (spec.get("probe") or {}, spec.get("params") or {}):
        if part.get("reference"):
            Path(part["reference"]).parent.mkdir(parents=True, exist_ok=True)
    return harness.run_worker(spec, limits, allocator, steady)


@contextlib.contextmanager
def pinned(client, say=print) -> Iterator[None]:
    """Every harness.run_worker call of this process (advise's workers) run instead on one
    worker machine of the cluster, the first that has the measure resource: its rows are read
    against each other, so they come from one machine."""
    info = client.scheduler_info(n_workers=-1)["workers"]
    able = sorted(a for a, w in info.items() if (w.get("resources") or {}).get(RESOURCE))
    if not able:
        raise UsageError(f"the cluster has no worker with the resource {RESOURCE} (start them "
                         f"with --resources {RESOURCE}=1)")  # fmt: skip
    where = able[0]
    found = client.run(describe, workers=[where])[where]
    say(f"measuring on {found['host']} (worker {where}); dashboard {dashboard(client)}")

    def run(spec, limits, allocator="glibc", steady=False):
        future = client.submit(remote_worker, spec, limits, allocator, steady, pure=False,
                               workers=[where], allow_other_workers=False,
                               resources={RESOURCE: 1})  # fmt: skip
        try:
            return future.result()
        except Exception as e:  # noqa: BLE001 - the worker lost or the task failed: a row
            return {"status": "error", "message": f"on worker {where}: {type(e).__name__}: "
                    f"{_reason(e)}"}  # fmt: skip

    with harness.elsewhere(run):
        yield
