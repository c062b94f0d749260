"""The window's lanes: the write lane (one task at a time, with progress and cancel in the status bar), the read lane
(a page's newest read wins) and the backup lane (silent, one at a time). An object the window holds (`window.lanes`).
What the lanes read of the window and tell it is `LaneHost` (the open project, two signals, an error, a line in the
status bar); a task's progress goes to a `TaskBar` (its label, bar and cancel button) — the lanes touch no other
widget of the window."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, TypeVar

from PySide6.QtWidgets import QLabel, QProgressBar, QPushButton
from shiboken6 import isValid

from rageval_desktop.gui.lazy import lazy

operations = lazy("rageval_desktop.gui.operations")   # (imported on first use: after the first paint)
workers = lazy("rageval_desktop.gui.workers")

if TYPE_CHECKING:
    from pathlib import Path

    from PySide6.QtCore import SignalInstance

    from rageval_desktop.core.base.context import TaskContext
    from rageval_desktop.core.store.project import Project
    from rageval_desktop.gui.workers import Worker


class LaneHost(Protocol):
    """What the lanes read of the window they serve, and tell it."""

    last_error: str                     # the newest task's failure (a screenshot run prints it as it exits)

    @property
    def project(self) -> Project | None: ...
    @property
    def read_finished(self) -> SignalInstance: ...     # a page's read landed (its name)
    @property
    def task_finished(self) -> SignalInstance: ...     # the write lane's task ended (done, failed, cancelled)
    def show_error(self, message: str, details: str = "") -> None: ...
    def show_status(self, message: str, ms: int = 6000) -> None: ...


class TaskBar:
    """The write lane's task in the status bar: its label, a progress bar and a cancel button (the window places
    them; the lanes say what they show)."""

    def __init__(self) -> None:
        self.label = QLabel()
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(180)
        self.progress.setVisible(False)
        self.cancel = QPushButton("Cancel")
        self.cancel.setVisible(False)

    @property
    def standing(self) -> bool:
        """The window is still there (it may close while a task ends)."""
        return isValid(self.label)

    def started(self, label: str) -> None:
        self.label.setText(label)
        self.progress.setRange(0, 0)
        self.progress.setVisible(True)
        self.cancel.setVisible(True)

    def progressed(self, done: int, total: int, message: str) -> None:
        if total > 0:
            self.progress.setRange(0, total)
            self.progress.setValue(done)
        if message:
            self.progress.setFormat(f"{message} %p%")
            self.progress.setToolTip(message)

    def ended(self, message: str = "") -> None:
        self.label.setText(message)
        self.progress.setVisible(False)
        self.cancel.setVisible(False)


def gone(callback: Callable[..., object]) -> bool:
    """The callback is a method of a Qt object deleted meanwhile (a dialog closed, a page rebuilt while its read ran):
    calling it raised RuntimeError in Qt's event loop."""
    owner = getattr(callback, "__self__", None)
    return owner is not None and hasattr(owner, "metaObject") and not isValid(owner)


T = TypeVar("T")


class Lanes:
    def __init__(self, window: LaneHost, bar: TaskBar) -> None:
        self.w = window
        self.bar = bar
        self._task: Worker | None = None
        self._reads: dict[str, int] = {}       # page -> generation of its newest read (older results are stale)
        self._backup: Worker | None = None
        self._upkeep: Worker | None = None
        self._upkeep_again = False
        self._writes = workers.WriteQueue()     # short writes: ratings, undo, redo

    @property
    def task(self) -> Worker | None:
        """The task on the write lane, if one runs."""
        return self._task

    def run_task(self, label: str, fn: Callable[..., T], *args: object,
                 on_done: Callable[[T], object] | None = None) -> object:
        if self._task is not None:
            self.w.show_error(f"Please wait: {self.bar.label.text()} is still running.")
            return None
        self.bar.started(label)

        def finish(kind: str, message: str = "") -> None:
            self._task = None
            self.bar.ended(message)
            self.w.task_finished.emit(kind)

        started_on = self.w.project

        def done(result: T) -> None:
            if not self.bar.standing:  # the window closed while the task finished: nothing to show
                return
            finish("done")
            # a result for a project that has since been closed is stale: nothing is left to show it in
            if on_done and (started_on is None or self.w.project is started_on) and not gone(on_done):
                on_done(result)

        def failed(message: str, details: str) -> None:
            if not self.bar.standing:
                return
            self.w.last_error = message     # (before the signal: a screenshot run prints it as it exits)
            finish("failed")
            self.w.show_error(message, details)

        def cancelled(message: str) -> None:
            finish("cancelled", "Cancelled")
            self.w.show_status(message, 8000)

        self._task = workers.start(fn, *args, on_done=done, on_error=failed, on_progress=self.bar.progressed,
                                   on_cancel=cancelled)
        return self._task

    def run_write(self, label: str, fn: Callable[[TaskContext], T], *, on_done: Callable[[T], object] | None = None,
                  on_error: Callable[[str, str], object] | None = None) -> None:
        """Short writes (ratings, undo, redo) queued in order, never refused, with no progress bar (see
        `workers.WriteQueue`); a result for a project closed meanwhile is dropped."""
        started_on = self.w.project

        def done(result: T) -> None:
            if on_done is not None and self.w.project is started_on and not gone(on_done):
                on_done(result)

        def failed(message: str, details: str) -> None:
            if on_error is not None:
                on_error(message, details)
            else:
                self.w.show_error(f"{label} failed: {message}", details)

        self._writes.put(fn, on_done=done, on_error=failed)

    def run_read(self, page: str, fn: Callable[..., T], *args: object, on_done: Callable[[T], object],
                 announce: bool = True) -> None:
        """The read lane of a page (dashboard, compare, failures): never refused, whatever else runs; a newer
        request for the same page makes an older one's result stale (dropped when it arrives). `announce`: emit
        `read_finished(page)` when it lands (a read no page waits for, made in the background, does not)."""
        generation = self._reads.get(page, 0) + 1
        self._reads[page] = generation
        started_on = self.w.project

        def done(result: T) -> None:
            if self._reads.get(page) == generation and self.w.project is started_on and started_on is not None \
                    and not gone(on_done):
                on_done(result)
                if announce:
                    self.w.read_finished.emit(page)

        def failed(message: str, details: str) -> None:
            if self._reads.get(page) == generation and self.w.project is started_on:
                self.w.show_error(message, details)
                if announce:
                    self.w.read_finished.emit(page)

        workers.start(fn, *args, on_done=done, on_error=failed)

    def run_backup(self, reason: str) -> None:
        """The backup lane: silent, one at a time, never a dialog (a failure is said in the status bar)."""
        project = self.w.project
        if project is None or self._backup is not None:
            return
        fn = operations.backup if reason == "manual" else operations.periodic_backup

        def finished(path: Path | None = None) -> None:
            self._backup = None
            if path:
                self.w.show_status(f"Backup written to {path}", 10_000)

        def failed(message: str, _details: str) -> None:
            self._backup = None
            self.w.show_status(f"Backup failed: {message}", 20_000)

        self._backup = workers.start(fn, project, on_done=finished, on_error=failed,
                                     on_cancel=lambda _m: finished())

    def run_upkeep(self) -> None:
        """The upkeep lane: the large runs' kept values (core.metrics.values) that a change to the golden set took
        away, kept again in the background — silent, one at a time; asked for while it runs, it runs once more after
        (a failure is said in the status bar: the reads then join the tables, as before). Never on a project opened
        read-only."""
        project = self.w.project
        if project is None or project.read_only:
            return
        if self._upkeep is not None:
            self._upkeep_again = True
            return

        def finished(_result: object = None) -> None:
            self._upkeep = None
            if self._upkeep_again and self.w.project is project:
                self._upkeep_again = False
                self.run_upkeep()

        def failed(message: str, _details: str) -> None:
            self._upkeep = None
            self.w.show_status(f"The runs' values were not kept for quick reads: {message}", 20_000)

        self._upkeep = workers.start(operations.keep_values, project, on_done=finished, on_error=failed,
                                     on_cancel=lambda _m: finished())

    def cancel_task(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self.bar.label.setText("Cancelling…")

