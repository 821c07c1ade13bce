"""Workers forked from a process that imported their framework once: the test suite's way.

A fresh worker (measure.harness) spends 1 to 5 s importing its framework before it measures
anything; the test suite starts a few hundred. With ``JACBENCH_WORKERS=fork`` in the environment
the harness asks a *template* instead: a process started with exactly the environment a fresh
worker of the case would get (threads, allocator), which imports the framework and nothing runs
in it (no thread pool, device or compiled program exists yet), then forks one worker per case.
The child is the worker: its own process group, its output in the harness's files, the record
a fresh worker prints. Its import phase reads near zero. Its memory reads as a fresh worker's:
Linux does not copy a forked child's page tables for mapped files (the frameworks' libraries),
so the child would count none of the code pages the import touched, about half a fresh
TensorFlow worker's resident memory, and fault them in during its first call; the child reads
one byte of each page the template holds of a mapped file first. The book's measurements never
use it (the default, ``exec``, starts every worker fresh).

Protocol, a line each way: the harness writes ``{"spec", "out", "err"}`` as JSON; the template
answers ``pid N`` once the child is in its own process group, then ``exit RC`` (RC as
subprocess gives it: negative for a signal) when the child ended. A template serves one case at
a time and is reused for the next case with the same framework and environment.
"""

from __future__ import annotations

import atexit
import ctypes
import importlib
import json
import os
import select
import subprocess
import sys
import threading
import traceback
from typing import Any

MODE_VARIABLE = "JACBENCH_WORKERS"
FORK, EXEC = "fork", "exec"
# Idle templates kept beyond this are closed, the least recently used first (TensorFlow's holds
# about 0.7 GB).
MAX_IDLE = 4
# A template that has not forked within this long after the request (its import hangs) is killed
# and the worker started fresh instead.
STARTUP_S = 300.0


def enabled() -> bool:
    return os.environ.get(MODE_VARIABLE, EXEC) == FORK


class Forked:
    """A forked worker, as the harness watches a subprocess.Popen: pid, poll(), wait()."""

    def __init__(self, template: Template, pid: int):
        self.template, self.pid, self.returncode = template, pid, None

    def release(self) -> None:
        """The worker ended: its template serves the next case of its kind."""
        _release(self.template)

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.template.exit_status(block=False)
        return self.returncode

    def wait(self) -> int:
        if self.returncode is None:
            self.returncode = self.template.exit_status(block=True)
        return self.returncode


class Template:
    """One template process (see the module's text)."""

    def __init__(self, framework: str | None, env: dict[str, str]):
        self.key = _key(framework, env)
        self.popen = subprocess.Popen(
            [sys.executable, "-m", "jacbench.measure.forks", framework or ""],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
        self._buffer = b""

    def _line(self, block: bool, timeout: float | None = None) -> str | None:
        """The template's next line; None if there is none yet (not block) or none came within
        timeout."""
        fd = self.popen.stdout.fileno()
        while b"\n" not in self._buffer:
            if not select.select([fd], [], [], (timeout if block else 0))[0]:
                return None
            chunk = os.read(fd, 4096)
            if not chunk:  # the template died: its child with it (PR_SET_PDEATHSIG)
                return "exit -9"
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line.decode()

    def fork(self, spec: dict, out: str, err: str) -> Forked | None:
        """The forked worker, or None where the template is gone (its import failed)."""
        request = json.dumps({"spec": spec, "out": out, "err": err}) + "\n"
        try:
            self.popen.stdin.write(request.encode())
            self.popen.stdin.flush()
        except OSError:
            return None
        said = self._line(block=True, timeout=STARTUP_S)  # the import first, then the fork
        if said is None:
            self.popen.kill()
        return Forked(self, int(said.split()[1])) if said and said.startswith("pid ") else None

    def exit_status(self, block: bool) -> int | None:
        said = self._line(block)
        return None if said is None else int(said.split()[1])

    def alive(self) -> bool:
        return self.popen.poll() is None

    def close(self) -> None:
        try:
            self.popen.stdin.close()
            self.popen.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.popen.kill()


_IDLE: list[tuple[tuple, Template]] = []  # least recently used first
_LOCK = threading.Lock()


def start(
    framework: str | None, env: dict[str, str], spec: dict, out: str, err: str
) -> Forked | None:
    """A worker for spec forked from an idle template of (framework, env), or a new one; None
    where the template could not import the framework (a fresh worker records why)."""
    key = _key(framework, env)
    with _LOCK:
        found = next((i for i, (k, t) in enumerate(_IDLE) if k == key and t.alive()), None)
        template = _IDLE.pop(found)[1] if found is not None else None
    if template is None:
        template = Template(framework, env)
    forked = template.fork(spec, out, err)
    if forked is None:
        template.close()
    return forked


def _key(framework: str | None, env: dict[str, str]) -> tuple:
    return framework, tuple(sorted(env.items()))


def _release(template: Template) -> None:
    if not template.alive():
        return
    with _LOCK:
        _IDLE.append((template.key, template))
        old = _IDLE[: max(len(_IDLE) - MAX_IDLE, 0)]
        del _IDLE[: len(old)]
    for _, t in old:
        t.close()


@atexit.register
def close_all() -> None:
    with _LOCK:
        old, _IDLE[:] = list(_IDLE), []
    for _, t in old:
        t.close()


# --- the template process -------------------------------------------------------------------

PAGE = os.sysconf("SC_PAGE_SIZE")
PRESENT = 1 << 63  # a /proc/PID/pagemap entry's bit: the page is in the process's page table


def resident_file_pages() -> list[tuple[int, int]]:
    """(address, bytes) of each run of this process's pages, of a readable mapped file, that
    are in its page table."""
    runs: list[tuple[int, int]] = []
    with open("/proc/self/maps") as maps, open("/proc/self/pagemap", "rb") as pagemap:
        for line in maps:
            fields = line.split()
            if len(fields) < 6 or not fields[5].startswith("/") or fields[1][0] != "r":
                continue
            start, end = (int(x, 16) for x in fields[0].split("-"))
            pagemap.seek(start // PAGE * 8)
            entries = memoryview(pagemap.read((end - start) // PAGE * 8)).cast("Q")
            first = None
            for i, entry in enumerate([*entries, 0]):
                if entry & PRESENT and first is None:
                    first = i
                elif not entry & PRESENT and first is not None:
                    runs.append((start + first * PAGE, (i - first) * PAGE))
                    first = None
    return runs


def touch(runs: list[tuple[int, int]], chunk: int = 1 << 20) -> None:
    """Read the runs (resident_file_pages) a chunk at a time: each page enters the page table."""
    for address, size in runs:
        for offset in range(0, size, chunk):
            ctypes.string_at(address + offset, min(chunk, size - offset))


def _child(request: dict[str, Any], runs: list[tuple[int, int]]) -> None:
    """In the forked child: become the worker of the request, never return to the loop."""
    try:
        os.setpgid(0, 0)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        os.dup2(os.open(request["out"], os.O_WRONLY | os.O_APPEND), 1)
        os.dup2(os.open(request["err"], os.O_WRONLY | os.O_APPEND), 2)
        touch(runs)  # after the redirection: a failure here reaches the harness's stderr
        from jacbench.measure import worker

        worker.main([json.dumps(request["spec"])])  # ends the process
    except BaseException:
        traceback.print_exc()
        sys.stderr.flush()
    finally:
        os._exit(1)


def serve(framework: str | None) -> None:
    """The template: import the framework (running nothing), then fork a worker per request."""
    from jacbench.measure import worker

    worker._die_with_parent()
    if framework:
        importlib.import_module(framework)
    runs = resident_file_pages()
    for line in sys.stdin:
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            _child(json.loads(line), runs)
        try:
            os.setpgid(pid, pid)  # as the child does: either way it is its own group first
        except OSError:
            pass
        print(f"pid {pid}", flush=True)
        _, status = os.waitpid(pid, 0)
        print(f"exit {os.waitstatus_to_exitcode(status)}", flush=True)


if __name__ == "__main__":
    serve(sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] else None)
