"""A sweep on a Dask cluster (``--cluster``): the cases run on the workers' machines, the rows
land here, in the one results file, under its lock.

Each case is one task (cluster.measure_task) needing one ``measure`` resource, so a machine
measures one case at a time, in the capped worker subprocess a local sweep starts. A row is keyed
and marked with the fingerprint of the machine that measured it (its ``env``); the sidecar's
``machines`` describes every machine whose rows the file holds. A case already in the file for a
machine of the cluster is not submitted again, and a worker checks once more before it measures.
A case whose worker died twice (the scheduler tries it once more, elsewhere where it can) is an
error row naming the last worker. This process alone appends rows, each with one write, so a
sweep cancelled at any moment leaves whole rows only.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from jacbench.measure import cluster, environment, harness, lock, runner, store
from jacbench.measure.case import Case
from jacbench.measure.dataset import Dataset


def _machines(client, on_gpu: bool = False) -> dict[str, dict[str, Any]]:
    """Each worker's machine (cluster.machine, its GPU's facts too with on_gpu), by worker
    address, waiting for a first one."""
    try:
        client.wait_for_workers(1, timeout=cluster.WAIT_S)
    except TimeoutError:
        from jacbench.errors import UsageError

        start = f"dask worker --resources {cluster.RESOURCE}=1 --nthreads 1"
        raise UsageError(f"no Dask worker joined within {cluster.WAIT_S:.0f} s (start them with "
                         f"{start})") from None  # fmt: skip
    return client.run(cluster.describe, on_gpu=on_gpu)


def _sidecar(out: Path, cases: list[Case], jobs: int, spec: str, found: dict) -> dict:
    """The metadata: the first machine's, as a local sweep writes its own, with every machine
    the file has rows of under "machines" (those of earlier sweeps kept). Each machine's facts
    (its commit, bandwidth, GPU) are those its worker read: none is read here."""
    before = Dataset(out).metadata if out.exists() else {}
    machines = dict(before.get("machines") or {})
    if before.get("environment_key"):  # a local sweep's own machine
        sweep_only = ("environment_key", "columns", "cases", "jobs", "date", "allocators",
                      "devices")  # fmt: skip
        machines.setdefault(before["environment_key"],
                            {k: v for k, v in before.items() if k not in sweep_only})  # fmt: skip
    first = next(iter(found.values()))
    facts = {k: first[k] for k in cluster.FACTS if k in first}
    meta = environment.metadata_record(first["env"], cases, jobs, store.COLUMNS, facts)
    meta["cluster"] = spec
    meta["machines"] = machines
    for m in found.values():
        _add_machine(meta, m)
    return meta


def _add_machine(meta: dict, machine: dict) -> bool:
    """Describe a machine (cluster.machine) in the sidecar's machines, its host among those
    seen; whether that changed anything (a worker that joined after the sweep began)."""
    was = meta["machines"].get(machine["key"], {})
    hosts = sorted(set(was.get("hosts", [])) | {machine["host"]})
    facts = {k: machine[k] for k in cluster.FACTS if k in machine}
    # Merged: a CPU case's worker reads no GPU facts, and those a GPU case's worker read stay.
    now = {**was, **machine["env"], **facts, "hosts": hosts}
    meta["machines"][machine["key"]] = now
    return now != was


class _Progress:
    """Cases done, running and left, per machine: a tqdm bar on a terminal, lines elsewhere."""

    def __init__(self, total: int, quiet: bool):
        self.total, self.quiet, self.done = total, quiet, 0
        self.by_host: Counter = Counter()
        self.bar = None
        if not quiet and sys.stderr.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="case", dynamic_ncols=True)

    def say(self, text: str) -> None:
        if not self.quiet:
            print(f"jacbench: {text}", file=sys.stderr, flush=True)

    def finish(self, case: Case, host: str, row: dict | None, running: dict[str, int]) -> None:
        self.done += 1
        self.by_host[host] += 1
        hosts = sorted(set(self.by_host) | set(running))
        state = "; ".join(f"{h}: {self.by_host[h]} done, {running.get(h, 0)} running"
                          for h in hosts)  # fmt: skip
        if self.bar:
            self.bar.update(1)
            self.bar.set_postfix_str(state)
        elif not self.quiet:
            what = "already measured" if row is None else runner.summary(row)
            print(f"[{self.done}/{self.total}] {case.label()} on {host}: {what} ({state}; "
                  f"{self.total - self.done} left)", file=sys.stderr, flush=True)  # fmt: skip

    def close(self) -> None:
        if self.bar:
            self.bar.close()


def _running(client, hosts: dict[str, str], slots: dict[str, int]) -> dict[str, int]:
    """How many cases each machine (by host) is running now: the scheduler hands a worker more
    tasks than it runs at once, which its measure resources (slots, 1 unless known) bound."""
    counts: Counter = Counter()
    for address, keys in client.processing().items():
        counts[hosts.get(address, address)] += min(len(keys), slots.get(address, 1))
    return dict(counts)


def _slots(client) -> dict[str, int]:
    """Each worker's measure resources: the cases it runs at once."""
    workers = client.scheduler_info(n_workers=-1)["workers"]
    return {a: int((w.get("resources") or {}).get(cluster.RESOURCE, 1)) for a, w in workers.items()}


def lost_row(case: Case, error: BaseException, found: dict, fallback: dict) -> dict[str, Any]:
    """The error row of a case whose worker died (KilledWorker) or whose task failed: keyed
    with the last worker's machine where it is known, naming that worker."""
    last = getattr(getattr(error, "last_worker", None), "address", None)
    machine = found.get(last) or fallback
    where = f"worker {last} ({machine['host']})" if last else "its worker"
    if type(error).__name__ == "KilledWorker":
        what = (f"{where} was lost while measuring the case, after it had been tried once on "
                "another worker that was lost too")  # fmt: skip
    else:
        text = (str(error).strip().splitlines() or [""])[0][:200]
        what = f"the task failed on {where}: {type(error).__name__}: {text}"
    row = case.spec_row() | {"status": "error", "message": what}
    row.update(key=case.key(machine["key"]), env=machine["key"], method=store.METHOD)
    return row


def run(cases: list[Case], out: Path, spec: str, quiet: bool = False, fresh: bool = False,
        jobs: int = 1, wait: bool = False, stop_after: float | None = None) -> Path:  # fmt: skip
    """Measure every case not yet in out on the cluster spec (see measure.cluster); write the
    metadata sidecar; return out. jobs: the workers of --cluster local."""
    out = Path(out)
    cluster.kind(spec)  # a bad spec is refused before any file is touched
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        from jacbench.errors import UsageError

        raise UsageError(f"cannot write {out}: {e.strerror}") from None
    with lock.locked(out, wait=wait), cluster.connect(spec, workers=jobs) as client:
        deadline = None if stop_after is None else time.time() + stop_after
        _locked(client, list(cases), out, spec, quiet, fresh, jobs, deadline)
    return out


def _todo(cases: list[Case], out: Path, keys: set[str]) -> tuple[list[Case], frozenset[str]]:
    """The cases to submit (each once), and the keys already measured with a current method: a
    case whose key for one of the cluster's machines (keys) is among them is left out."""
    methods = store.methods(out)
    done = set()
    for case in cases:
        for env in keys:
            k = case.key(env)
            if k in methods and store.current(methods[k], case.allocator, case.ratio_processes,
                                              case.framework):  # fmt: skip
                done.add(k)
    todo, seen = [], set()
    for case in cases:
        ident = case.key("")
        if ident in seen or any(case.key(env) in done for env in keys):
            continue
        seen.add(ident)
        todo.append(case)
    return todo, frozenset(done)


def _locked(client, cases: list[Case], out: Path, spec: str, quiet: bool, fresh: bool,
            jobs: int, deadline: float | None) -> None:  # fmt: skip
    from distributed import as_completed

    if fresh and out.exists():
        out.unlink()
    if out.exists():
        store.check(out)
        store.repair(out)
    found = _machines(client, on_gpu=any(c.device != "cpu" for c in cases))
    meta = _sidecar(out, cases, jobs, spec, found)
    store.write_json(Dataset(out).meta, meta)
    hosts = {a: m["host"] for a, m in found.items()}
    slots = _slots(client)
    todo, done = _todo(cases, out, {m["key"] for m in found.values()})
    progress = _Progress(len(todo), quiet)
    progress.say(f"{len(cases) - len(todo)} of {len(cases)} cases already measured; "
                 f"{len(todo)} to measure on {len(set(hosts.values()))} machine(s), "
                 f"{len(found)} worker(s); dashboard {cluster.dashboard(client)}")  # fmt: skip
    fallback = next(iter(found.values()))
    # On a LocalCluster its workers share this machine: a case whose cap is above half the RAM
    # runs with no other beside it, as in a local sweep (runner.batches). A machine of another
    # cluster measures one case at a time anyway (its one measure resource).
    local = cluster.kind(spec) == "local"
    groups = runner.batches(todo, jobs) if local else [(todo, len(found))]
    left = 0
    futures: dict = {}
    try:
        for batch, _ in groups:
            futures = {}
            for case in batch:
                future = client.submit(cluster.measure_task, case, done, deadline, pure=False,
                                       resources={cluster.RESOURCE: 1},
                                       key=f"case-{case.key('')}")  # fmt: skip
                futures[future] = case
            for future in as_completed(futures, loop=client.loop):
                case = futures[future]
                error = future.exception()
                if error is not None:
                    row, host = lost_row(case, error, found, fallback), "lost"
                else:
                    got = future.result()
                    if got is None:
                        left += 1
                        continue
                    row, host = got.get("row"), got.get("host", "?")
                    if "machine" in got and _add_machine(meta, got["machine"]):
                        store.write_json(Dataset(out).meta, meta)
                if row is not None:
                    store.put_row(out, row)
                progress.finish(case, host, row, _running(client, hosts, slots))
    except KeyboardInterrupt:
        client.cancel(list(futures))  # rows already written stay; a rerun measures the rest
        harness.kill_all()
        raise
    finally:
        progress.close()
    if left:
        progress.say(f"the time given (--stop-after) ran out: {left} case(s) not started; the "
                     "same command measures them")  # fmt: skip
