"""The commit lane of a long job: results wait in memory only until they are committed, and never leave it before.

One thread commits whatever has arrived, as soon as it arrives (group commit: while one transaction runs, the
next results gather for the following one), so a killed process loses only the results that were being
committed and the calls still in flight. A result is removed from memory after its transaction committed;
`on_committed` then counts it — a job reports what was saved, never what was merely received.

A busy project (another process holds the write lock past the busy timeout) is retried with backoff while the job
runs, up to `busy_give_up_s` of continuous refusal — and a job that starts while another process writes waits the
same way (`while_busy`): one busy policy, from the first write to the last. Any other failure — a full disk, a read-
only file — stops the lane: `error` says why, the results not committed stay in `pending()` and the job stops.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

from rageval_desktop.core.base.context import TaskContext
from rageval_desktop.core.base.errors import WriteFailed
from rageval_desktop.core.store.changes import Area
from rageval_desktop.core.store.owners import HEARTBEAT_S
from rageval_desktop.core.store.project import Project

BUSY_GIVE_UP_S = 600.0
T = TypeVar("T")


def while_busy(write: Callable[[], T], ctx: TaskContext | None = None, give_up_s: float = BUSY_GIVE_UP_S) -> T:
    """`write()`, retried with backoff while another process holds the write lock, up to `give_up_s` of
    continuous refusal (the commit lane's policy; a starting job gave up after the 10 s busy timeout while a running
    one waited ten minutes); `ctx.report` says that it waits. Other failures are raised at once."""
    delay, since = 0.05, time.monotonic()
    while True:
        try:
            return write()
        except WriteFailed as exc:
            if not exc.retryable or time.monotonic() - since >= give_up_s:
                raise
            if ctx is not None:
                ctx.check()
                ctx.report(0, 0, "waiting: another process is writing to this project", force=True)
            time.sleep(delay)
            delay = min(2.0, delay * 2)


class CommitLane(Generic[T]):
    """Results of type T, committed in batches by a thread of its own (`write(conn, batch)`), counted once committed."""

    def __init__(self, project: Project, write: Callable[[sqlite3.Connection, list[T]], None], *,
                 on_committed: Callable[[list[T]], None] | None = None,
                 heartbeat: Callable[[sqlite3.Connection], None] | None = None,
                 op: str = "save results", changed: tuple[Area, ...] = (), busy_give_up_s: float = BUSY_GIVE_UP_S):
        self.project, self._write, self._on_committed, self._heartbeat = project, write, on_committed, heartbeat
        self.op, self.changed, self.busy_give_up_s = op, changed, busy_give_up_s
        self._items: list[T] = []
        self._cond = threading.Condition()
        self._closing = False
        self._committing = 0
        self.error: WriteFailed | None = None
        self.busy_retries = 0
        self.commits = 0
        self._thread: threading.Thread | None = None

    # --- the producer's side -------------------------------------------------------------------
    def start(self) -> CommitLane[T]:
        self._thread = threading.Thread(target=self._run, name="commit-lane", daemon=True)
        self._thread.start()
        return self

    def put(self, item: T) -> None:
        with self._cond:
            self._items.append(item)
            self._cond.notify_all()

    def pending(self) -> int:
        """Results received but not yet committed (including the batch being written)."""
        with self._cond:
            return len(self._items)

    def wait_room(self, limit: int, timeout: float | None = None) -> bool:
        """Block while more than `limit` results wait (backpressure); False on error or timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while len(self._items) > limit and self.error is None:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cond.wait(timeout=left if left is not None else 0.5)
            return self.error is None

    def drain(self) -> bool:
        """Wait until everything received is committed (True) or the lane failed (False)."""
        return self.wait_room(0)

    def close(self) -> bool:
        """Commit what is left, then stop the thread. True when nothing is left uncommitted."""
        ok = self.drain()
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join()
        return ok and not self._items

    # --- the lane ------------------------------------------------------------------------------
    def _run(self) -> None:
        last_beat = time.monotonic()
        while True:
            with self._cond:
                while not self._items and not self._closing:
                    if self._heartbeat and time.monotonic() - last_beat >= HEARTBEAT_S:
                        break
                    self._cond.wait(timeout=HEARTBEAT_S / 2)
                if self._closing and not self._items:
                    return
                batch = list(self._items)  # a copy: the originals stay until the commit succeeded
            if not self._commit(batch):
                with self._cond:
                    self._cond.notify_all()
                return
            last_beat = time.monotonic()
            if batch:
                with self._cond:
                    del self._items[:len(batch)]  # only appends happen meanwhile: the batch is the prefix
                    self._cond.notify_all()
                if self._on_committed:
                    try:
                        self._on_committed(batch)
                    except Exception:  # counting must never stop the saving
                        pass

    def _commit(self, batch: list[T]) -> bool:
        delay, refused_since = 0.05, None
        while True:
            try:
                with self.project.write(self.op if batch else "job heartbeat", changed=self.changed if batch else ()
                                        ) as conn:
                    if batch:
                        self._write(conn, batch)
                    if self._heartbeat:
                        self._heartbeat(conn)
                self.commits += 1
                return True
            except WriteFailed as exc:
                now = time.monotonic()
                refused_since = refused_since or now
                if exc.retryable and now - refused_since < self.busy_give_up_s:
                    self.busy_retries += 1
                    time.sleep(delay)
                    delay = min(2.0, delay * 2)
                    continue
                self.error = exc
                return False
            except Exception as exc:  # a bug in the write function: still a stop with a reason, never a lost batch
                self.error = WriteFailed(f"could not save ({self.op}): {type(exc).__name__}: {exc}", kind="other")
                return False
