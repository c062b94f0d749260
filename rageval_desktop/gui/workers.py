"""Run a core function in a thread and report through signals. Workers never touch widgets.

The core function receives a TaskContext; its progress callback emits a signal (queued to the GUI thread)
and `cancel()` sets its event. One QThreadPool for the app; tests wait on `pool.waitForDone()`.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from rageval_desktop.core.errors import RagevalError
from rageval_desktop.core.jobs.context import Cancelled, TaskContext


class WorkerSignals(QObject):
    progress = Signal(int, int, str)
    stats = Signal(object)         # structured progress of jobs (rate, ETA, errors, cost)
    finished = Signal(object)      # the function's result
    failed = Signal(str, str)      # plain message, details (traceback for bugs, empty for user errors)
    cancelled = Signal(str)


class Worker(QRunnable):
    def __init__(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        super().__init__()
        self.setAutoDelete(False)  # Python owns it (kept in _ACTIVE until it ends)
        self.signals = WorkerSignals()
        self.ctx = TaskContext(on_progress=self.signals.progress.emit, on_stats=self.signals.stats.emit)
        self._fn, self._args, self._kwargs = fn, args, kwargs

    def cancel(self) -> None:
        self.ctx.cancel()

    def run(self) -> None:
        try:
            result = self._fn(*self._args, ctx=self.ctx, **self._kwargs)
        except Cancelled as exc:
            self.signals.cancelled.emit(str(exc))
        except RagevalError as exc:
            self.signals.failed.emit(str(exc), "")
        except Exception as exc:  # a bug: say so plainly, keep the traceback behind "details"
            self.signals.failed.emit(f"Something went wrong: {type(exc).__name__}: {exc}", traceback.format_exc())
        else:
            self.signals.finished.emit(result)


_ACTIVE: set[Worker] = set()


def active() -> int:
    """Workers not yet finished: the status bar shows it, tests assert it returns to 0."""
    return len(_ACTIVE)


def pool() -> QThreadPool:
    return QThreadPool.globalInstance()


def start(fn: Callable[..., Any], *args: Any, on_done: Callable[[Any], None] | None = None,
          on_error: Callable[[str, str], None] | None = None,
          on_progress: Callable[[int, int, str], None] | None = None,
          on_cancel: Callable[[str], None] | None = None,
          on_stats: Callable[[dict], None] | None = None, **kwargs: Any) -> Worker:
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
