"""The lock a sweep holds while it writes a results file, so that one sweep at a time writes it
(two would each append the cases the other measures)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from jacbench.errors import UsageError


def lock_path(path: Path) -> Path:
    """The lock a sweep holds while it writes a results file: NAME.csv.lock beside NAME.csv,
    holding the sweep's process id; removed when the sweep ends."""
    return Path(path).with_name(Path(path).name + ".lock")


def _holder(fd: int) -> str:
    """The process id the lock file names; its holder writes it just after taking the lock,
    so an empty file is read again for a moment."""
    for _ in range(50):
        text = os.pread(fd, 32, 0).decode(errors="replace").strip()
        if text:
            return text
        time.sleep(0.01)
    return "unknown"


@contextlib.contextmanager
def locked(path: Path, wait: bool = False) -> Iterator[None]:
    """Hold the results file's lock (an flock on lock_path, released by the kernel if the
    process dies). If another sweep holds it: UsageError naming that sweep's process id, or,
    with wait, one line on stderr and a wait until it ends."""
    path = Path(path)
    lock = lock_path(path)
    said = False
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise UsageError(f"cannot write {path}: {e.strerror} ({lock})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            if not wait:
                os.close(fd)
                raise UsageError(
                    f"another sweep (pid {holder}) is writing {path}: let it end first "
                    "('jacbench sweep --wait' waits for it)"
                ) from None
            if not said:
                print(f"jacbench: waiting for another sweep (pid {holder}) to end: it is "
                      f"writing {path}", file=sys.stderr, flush=True)  # fmt: skip
                said = True
            fcntl.flock(fd, fcntl.LOCK_EX)
        # The holder removes the lock file before it lets go: a lock on a removed file is
        # nobody's, so take the file now at that path instead.
        try:
            current = os.stat(lock).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            current = False
        if current:
            break
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(lock)
        os.close(fd)
