"""Run a core function in a thread and report through signals. Workers never touch widgets.

The core function receives a TaskContext; its progress callback emits a signal (queued to the GUI thread)
and `cancel()` sets its event. One QThreadPool for the app; tests wait on `pool.waitForDone()`.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable
from typing import TypeVar

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, SignalInstance

from rageval_desktop.core.base.context import Cancelled, TaskContext
from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.base.memory import glibc

R = TypeVar("R")      # what a worker's function returns, handed to its on_done
V = TypeVar("V")


class WorkerSignals(QObject):
    progress = Signal(int, int, str)
    stats = Signal(object)         # structured progress of jobs (rate, ETA, errors, cost)
    finished = Signal(object)      # the function's result
    failed = Signal(str, str)      # plain message, details (traceback for bugs, empty for user errors)
    cancelled = Signal(str)


class Worker(QRunnable):
    def __init__(self, fn: Callable[..., object], *args: object, **kwargs: object) -> None:
        super().__init__()
        self.setAutoDelete(False)  # Python owns it (kept in _ACTIVE until it ends)
        self.signals = WorkerSignals()
        self.ctx = TaskContext(on_progress=self.signals.progress.emit, on_stats=self.signals.stats.emit)
        self._fn, self._args, self._kwargs = fn, args, kwargs

    def cancel(self, detach: bool = False) -> None:
        self.ctx.cancel(detach)

    def _damage(self, exc: Exception) -> str | None:
        """An unexpected failure of work given a project whose file is damaged — a page SQLite calls malformed, or
        values that break the file's rules (a setting no longer JSON, a text stored as bytes): that damage, worded
        with how to restore (None: a bug, or no project)."""
        from rageval_desktop.core.store import integrity
        from rageval_desktop.core.store.project import Project

        project = next((a for a in (*self._args, *self._kwargs.values()) if isinstance(a, Project)), None)
        if project is None:
            return None
        return integrity.failure_damage(project.path, exc)

    def run(self) -> None:
        started = time.monotonic()
        try:
            result = self._fn(*self._args, ctx=self.ctx, **self._kwargs)
        except Cancelled as exc:
            self.signals.cancelled.emit(str(exc))
        except RagevalError as exc:
            self.signals.failed.emit(exc.for_gui(), "")
        except Exception as exc:  # a bug: say so plainly, keep the traceback behind "details"
            damage = self._damage(exc)
            if damage:           # not a bug: a stored value the file's damage left unreadable
                self.signals.failed.emit(damage, "")
            else:
                self.signals.failed.emit(f"Something went wrong: {type(exc).__name__}: {exc}", traceback.format_exc())
        else:
            self.signals.finished.emit(result)
        if time.monotonic() - started >= HEAVY_S:
            give_back_memory()


HEAVY_S = 0.3     # a worker that ran this long may have freed a run's worth of memory: hand it back (below)
TRIM_AFTER_S = 1.0
_trim: Callable[[int], object] | bool | None = None
_trim_lock = threading.Lock()
_trim_due = False


def give_back_memory() -> None:
    """Return the memory freed by a finished read to the system, a second later (on a timer thread of its own, once
    however many reads end meanwhile: by then the page has shown the result and let go of the one before). glibc
    keeps what threads free in their arenas: at 200k rows the dashboard's read left 632 MB resident, 379 MB after a
    trim (bench/bench_gui.py --only memory). A trim of a few hundred MB takes about 60 ms, off the GUI thread.
    Elsewhere than glibc, nothing."""
    global _trim_due
    with _trim_lock:
        if _trim_due:
            return
        _trim_due = True
    timer = threading.Timer(TRIM_AFTER_S, _trim_now)
    timer.daemon = True
    timer.start()


def _trim_now() -> None:
    global _trim, _trim_due
    with _trim_lock:
        _trim_due = False
    if _trim is None:
        _trim = glibc("malloc_trim")
    if callable(_trim):
        _trim(0)


ARENAS = 2             # glibc's malloc arenas the app's threads share (mallopt M_ARENA_MAX)
_M_ARENA_MAX = -8
_arenas_capped = False


def cap_arenas() -> None:
    """Before the first worker thread: glibc gives a thread that allocates while another does an arena of its own (up
    to eight per core) and keeps there what it frees, so each read on a pool thread left its memory where the next,
    on another thread, did not look (at 200k rows the window held 688 MB after visiting every page; 526 MB with two
    arenas: bench/bench_gui.py --only memory). Elsewhere than glibc, nothing."""
    global _arenas_capped
    if not _arenas_capped:
        _arenas_capped = True
        mallopt = glibc("mallopt")
        if callable(mallopt):
            mallopt(_M_ARENA_MAX, ARENAS)


_ACTIVE: set[Worker] = set()


def active() -> int:
    """Workers and plain threads not yet finished: the status bar shows it, tests assert it returns to 0."""
    return len(_ACTIVE) + len(_THREADS)


def pool() -> QThreadPool:
    """The app's pool, whose threads never expire. A Qt thread that ran Python stays listed by Python after it ends
    (its dummy thread is never removed), so `Project.reader` cannot tell that its reader is orphaned: with Qt's 30 s
    expiry, every thread replaced after an idle half minute left a connection (page cache and file handle) open until
    the project closed, and a window open for a working day gathered them. The pool's few threads are kept instead:
    at most `maxThreadCount()` readers. (Qt applies the expiry to threads started after it is set: this runs before
    the first task.)"""
    found = QThreadPool.globalInstance()
    if found.expiryTimeout() >= 0:
        found.setExpiryTimeout(-1)
    return found


def start(fn: Callable[..., R], *args: object, on_done: Callable[[R], object] | None = None,
          on_error: Callable[[str, str], object] | None = None,
          on_progress: Callable[[int, int, str], None] | None = None,
          on_cancel: Callable[[str], None] | None = None,
          on_stats: Callable[[dict], None] | None = None, **kwargs: object) -> Worker:
    cap_arenas()
    worker = Worker(fn, *args, **kwargs)
    if on_done:
        worker.signals.finished.connect(on_done)
    if on_error:
        worker.signals.failed.connect(on_error)
    if on_progress:
        worker.signals.progress.connect(on_progress)
    if on_cancel:
        worker.signals.cancelled.connect(on_cancel)
    if on_stats:
        worker.signals.stats.connect(on_stats)
    _ACTIVE.add(worker)
    for signal in (worker.signals.finished, worker.signals.failed, worker.signals.cancelled):
        signal.connect(lambda *_: _ACTIVE.discard(worker))
    pool().start(worker)
    return worker


class WriteQueue:
    """Short writes in the order they were asked, one at a time, never refused (ratings, undo and redo): each runs in
    a worker when the one before has landed and its callback has run on the GUI thread, so an undo asked while its
    rating is still saving runs after it, and a redo after its undo."""

    def __init__(self) -> None:
        self._waiting: list[Callable[[], None]] = []      # each starts its write, with its callbacks
        self._running = False

    def __len__(self) -> int:
        return len(self._waiting) + self._running

    def put(self, fn: Callable[..., R], *, on_done: Callable[[R], object] | None = None,
            on_error: Callable[[str, str], object] | None = None) -> None:
        self._waiting.append(lambda: self._start(fn, on_done, on_error))
        if not self._running:
            self._next()

    def _next(self) -> None:
        if not self._waiting:
            self._running = False
            return
        self._running = True
        self._waiting.pop(0)()

    def _start(self, fn: Callable[..., R], on_done: Callable[[R], object] | None,
               on_error: Callable[[str, str], object] | None) -> None:
        def done(value: R) -> None:
            try:
                if on_done is not None:
                    on_done(value)
            finally:
                self._next()

        def failed(message: str, details: str) -> None:
            try:
                if on_error is not None:
                    on_error(message, details)
            finally:
                self._next()

        start(fn, on_done=done, on_error=failed, on_cancel=lambda _m: self._next())


class _ThreadSignals(QObject):
    done = Signal(object)
    failed = Signal(str)


_THREADS: set[threading.Thread] = set()
_SIGNALS: set[_ThreadSignals] = set()  # owned by the GUI thread until their queued signal was delivered


def in_thread(fn: Callable[[], R], *, on_done: Callable[[R], None] | None = None,
              on_error: Callable[[str], None] | None = None) -> threading.Thread:
    """Run `fn` on a plain thread outside the pool — for work that waits for the pool itself (closing a project
    waits for its workers): the GUI thread never waits. Results come back through queued signals; the signal
    object lives (and dies) on the GUI thread, never on the worker's."""
    from PySide6.QtCore import QTimer

    signals = _ThreadSignals()
    _SIGNALS.add(signals)

    def delivered(callback: Callable[[V], None] | None) -> Callable[[V], None]:
        def slot(value: V) -> None:
            try:
                if callback:
                    callback(value)
            finally:
                QTimer.singleShot(0, lambda: _SIGNALS.discard(signals))
        return slot

    signals.done.connect(delivered(on_done))
    signals.failed.connect(delivered(on_error))

    def body() -> None:
        try:
            result = fn()
        except Exception as exc:
            _THREADS.discard(threading.current_thread())  # finished before anyone hears of it
            _tell(signals.failed, f"{type(exc).__name__}: {exc}")
        else:
            _THREADS.discard(threading.current_thread())
            _tell(signals.done, result)

    thread = threading.Thread(target=body, name="rageval-closer", daemon=True)
    _THREADS.add(thread)
    thread.start()
    return thread


def _tell(signal: SignalInstance, value: object) -> None:
    """Emit from a plain thread; when the application (and with it the signal's object) is already gone — a close
    finishing as the process exits — there is no one left to tell."""
    try:
        signal.emit(value)
    except RuntimeError:
        pass


def wait_all(timeout_s: float = 30.0) -> bool:
    """Tests and shutdown: wait for the pool and the plain threads."""
    import time

    deadline = time.monotonic() + timeout_s
    ok = pool().waitForDone(int(timeout_s * 1000))
    for thread in list(_THREADS):
        thread.join(max(0.0, deadline - time.monotonic()))
    return ok and not _THREADS
