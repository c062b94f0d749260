"""A window's tasks read the project through one connection per thread, not one per task (issue 50: a Qt pool thread
runs each task with fresh thread-locals, so every task opened a connection, with its page cache and file handle, that
stayed open until the project closed)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from rageval_desktop.core.store.project import Project
from rageval_desktop.gui import workers


def open_handles(path: Path) -> int:
    """File handles of this process on the project file itself (Linux: /proc/self/fd)."""
    found = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            found += os.readlink(f"/proc/self/fd/{fd}") == str(path)
        except OSError:
            pass
    return found


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts file handles through /proc")
def test_forty_tasks_read_through_a_few_connections(qapp, tmp_path):
    path = (tmp_path / "r.rageval").resolve()
    project = Project.create(path, actor="tester")
    before = open_handles(path)
    done: list[int] = []

    def read(ctx=None) -> int:
        return project.reader().execute("SELECT COUNT(*) FROM run_rows").fetchone()[0]

    for k in range(40):     # one after another, as a window's reads come (waitForDone would retire the pool's threads:
        workers.start(read, on_done=done.append)    # new threads, new idents, and the count would hang on their reuse)
        deadline = time.monotonic() + 30
        while len(done) <= k and time.monotonic() < deadline:
            qapp.processEvents()
            time.sleep(0.001)
    assert done == [0] * 40
    assert open_handles(path) - before <= workers.pool().maxThreadCount() + 1     # was 40
    project.close()
    assert open_handles(path) == 0


def test_pool_threads_never_expire_so_no_reader_is_orphaned(qapp):
    """CI caught 4 readers where the pool holds 2 threads: a Qt thread that expired (idle 30 s, Qt's default) stays
    listed by Python, so its reader was never closed, and the thread that replaced it opened another; a window open
    all day gathered one a replacement. The pool's threads are kept instead."""
    assert workers.pool().expiryTimeout() < 0
