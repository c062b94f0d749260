"""The small application state pages depend on (napari's layers contract): the open project, the chosen run and
slice, the read and write lanes, the undo stack, and the changes core announces — never the window.

The window (or the review-pack window) is the state's `host`: it runs the lanes and the actions that open dialogs
or switch pages, behind the `Host` protocol. A page gets an `AppState` and nothing else; `gui/pages.py` lists the
pages, one line each.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QWidget

from rageval_desktop.core.store.changes import Area, Changes
from rageval_desktop.gui.undo import make_stack, push

if TYPE_CHECKING:
    from rageval_desktop.core.base.context import TaskContext
    from rageval_desktop.core.jobs.spec import JobSpec
    from rageval_desktop.core.ops import Op, OpResult
    from rageval_desktop.core.ops.sources import ReviewSource
    from rageval_desktop.core.store.project import Project


T = TypeVar("T")


class Host(Protocol):
    """What the state asks of the window it lives in (MainWindow, PackWindow)."""

    def run_task(self, label: str, fn: Callable[..., T], *args: object,
                 on_done: Callable[[T], object] | None = None) -> object: ...
    def run_read(self, page: str, fn: Callable[..., T], *args: object, on_done: Callable[[T], object],
                 announce: bool = True) -> None: ...
    def run_write(self, label: str, fn: Callable[[TaskContext], T], *, on_done: Callable[[T], object] | None = None,
                  on_error: Callable[[str, str], object] | None = None) -> None: ...
    def show_error(self, message: str, details: str = "") -> None: ...
    def show_status(self, message: str, ms: int = 6000) -> None: ...
    def reviewer(self, ask: bool = False, force: bool = False) -> str: ...
    def review_source(self) -> ReviewSource | None: ...
    def run_names(self) -> list[str]: ...
    def navigate(self, page: str, **where: Any) -> None: ...


class PageActions(Protocol):
    """What a page may start that outlives it — a judging job, a window's dialog, a row promoted to the golden set:
    `state.actions` (the main window's judging and golden actions; a review pack's window has none)."""

    def add_llm_judge(self) -> None: ...
    def edit_judge(self, record: dict | None) -> None: ...
    def test_judge(self, name: str | None) -> None: ...
    def rewrite_rubric(self, name: str | None) -> None: ...
    def start_judging(self, run: str | None, judges: list[str] | None, spec: JobSpec | None = None, *,
                      batch: bool = False, job_id: int | None = None) -> None: ...
    def cancel_job(self) -> None: ...
    def resume_job(self, job: dict[str, Any]) -> None: ...
    def promote_row(self, row_id: int) -> None: ...


class Page(QWidget):
    """What every page of the window is (napari's layers contract): a widget built with the `AppState` alone, its
    listing read again by `refresh(runs)`, and `shows`, the areas of the project whose changes refresh it (a page
    with `changes_arrived(changes)` handles them itself). `gui/pages.py` lists them; `MainWindow.view(cls)` gives
    one typed."""

    shows: frozenset[Area] = frozenset()
    refresh_delay_ms = 800          # on screen: a change refreshes it once the changes settle this long

    def refresh(self, runs: list[str]) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not say how it refreshes")


class AppState(QObject):
    project_changed = Signal(object)     # the Project now open, or None
    run_changed = Signal(object)         # the run chosen in any page (the others follow it)
    slice_changed = Signal(object)       # the slice chosen (None: all slices)
    changed = Signal(object)             # a core Changes, on the GUI thread, after each committed write
    job_finished = Signal(str)           # a judging job ended (its summary)

    def __init__(self, host: Host, parent: QObject | None = None, actions: PageActions | None = None) -> None:
        super().__init__(parent)
        self.host = host
        self.project: Project | None = None
        self._run: str | None = None
        self._slice: str | None = None
        self.undo_stack = make_stack(self)
        self._actions = actions
        self._timers: list[QTimer] = []

    @property
    def actions(self) -> PageActions:
        """The window's actions a page may start (judging, resuming a job, promoting a row)."""
        if self._actions is None:
            raise RuntimeError("this window starts no judging or golden-set actions")
        return self._actions

    # --- what is chosen -----------------------------------------------------------------------------------------
    @property
    def current_run(self) -> str | None:
        return self._run

    @current_run.setter
    def current_run(self, run: str | None) -> None:
        if run != self._run:
            self._run = run
            self.run_changed.emit(run)

    @property
    def current_slice(self) -> str | None:
        return self._slice

    @current_slice.setter
    def current_slice(self, slice_tag: str | None) -> None:
        if slice_tag != self._slice:
            self._slice = slice_tag
            self.slice_changed.emit(slice_tag)

    def opened(self) -> Project:
        """The project open now: for a page's action, which only runs while one is (its buttons are off without)."""
        if self.project is None:
            raise RuntimeError("no project is open")
        return self.project

    def set_project(self, project: Project | None) -> None:
        if project is None:
            self.stop_refreshes()
        self.project = project
        self._run = None
        self.undo_stack.clear()
        self.project_changed.emit(project)

    # --- the lanes ----------------------------------------------------------------------------------------------
    def run_task(self, label: str, fn: Callable[..., T], *args: object,
                 on_done: Callable[[T], object] | None = None) -> object:
        """The write lane: one task at a time, in a worker; `on_done(result)` back on the GUI thread."""
        return self.host.run_task(label, fn, *args, on_done=on_done)

    def run_read(self, page: str, fn: Callable[..., T], *args: object, on_done: Callable[[T], object],
                 announce: bool = True) -> None:
        """The read lane: a page's newest read wins; older results are dropped. `announce`: the window says when it
        lands (`read_finished`); a detail read on selection, which no page's refresh waits for, does not."""
        self.host.run_read(page, fn, *args, on_done=on_done, announce=announce)

    def run_write(self, label: str, fn: Callable[[TaskContext], T], *, on_done: Callable[[T], object] | None = None,
                  on_error: Callable[[str, str], object] | None = None) -> None:
        """The write lane's queue of short writes (a rating, an undo, a redo): in order, one at a time, never
        refused; `fn(ctx)` in a worker, `on_done(result)` back on the GUI thread (not when the project changed
        meanwhile); a failure goes to `on_error`, else to the error dialog."""
        self.host.run_write(label, fn, on_done=on_done, on_error=on_error)

    def run_op(self, label: str, op: Op, on_done: Callable[[OpResult], object] | None = None, *,
               by: object = None) -> object:
        """An undoable operation of core (core/ops) on the write lane, pushed on the undo stack when it is done.
        `by`: the page asking, which refreshes itself in `on_done` — the changes it announces do not refresh it
        again (they carry it as their initiator)."""
        from rageval_desktop.core import ops

        project = self.project
        if project is None:
            return None

        def done(result: OpResult) -> None:
            push(self, self.undo_stack, result)
            if on_done is not None:
                on_done(result)

        def run(ctx: Any) -> OpResult:
            if by is None:
                return ops.run(project, op, initiator="gui")
            with project.initiated_by(initiator_of(by)):
                return ops.run(project, op, initiator="gui")

        return self.run_task(label, run, on_done=done)

    # --- telling the user ---------------------------------------------------------------------------------------
    def show_error(self, message: str, details: str = "") -> None:
        self.host.show_error(message, details)

    def status(self, message: str, ms: int = 6000) -> None:
        self.host.show_status(message, ms)

    # --- asked of the host --------------------------------------------------------------------------------------
    def reviewer(self, ask: bool = False, force: bool = False) -> str:
        return self.host.reviewer(ask=ask, force=force)

    def review_source(self) -> ReviewSource | None:
        return self.host.review_source()

    def run_names(self) -> list[str]:
        return self.host.run_names()

    def navigate(self, page: str, **where: Any) -> None:
        """Show a page (and, for the failure browser, a run, slice and metric: `where`)."""
        self.host.navigate(page, **where)

    def open_failures(self, run: str | None, slice_tag: str, metric: str) -> None:
        self.navigate("failures", run=run, slice_tag=slice_tag, metric=metric)

    # --- changes ------------------------------------------------------------------------------------------------
    def announce(self, changes: Changes) -> None:
        self.changed.emit(changes)

    def track_timer(self, timer: QTimer) -> None:
        """A page's own pending timer, stopped with every refresh when the project closes or the window does."""
        self._timers.append(timer)

    def stop_refreshes(self) -> None:
        """No page refresh is left pending (the project closed, the window is closing)."""
        for timer in self._timers:
            timer.stop()

    def subscribe(self, page: Page) -> None:
        """A page refreshes itself when a change touches what it `shows`: if it is on screen, once the changes settle
        (`refresh_delay_ms`, so a job's stream of batches is one recompute); else when it is next shown (the
        window refreshes a page it switches to). A page with `changes_arrived(changes)` handles them itself."""
        shown = page.shows
        timer = QTimer(page)
        self._timers.append(timer)
        timer.setSingleShot(True)
        timer.setInterval(page.refresh_delay_ms)

        def due() -> None:
            if page.isVisible() and self.project is not None:
                page.refresh(self.run_names())

        timer.timeout.connect(due)

        mine = initiator_of(page)

        def arrived(changes: Changes) -> None:
            if self.project is None or not changes.touches(*shown) or changes.initiator == mine:
                return
            handler = getattr(page, "changes_arrived", None)
            if handler is not None:
                handler(changes)
            elif page.isVisible():
                timer.start()

        self.changed.connect(arrived)


def initiator_of(page: object) -> str:
    """The initiator a page's writes announce (`Changes.initiator`)."""
    return f"page:{type(page).__name__}:{id(page):x}"


def shows(*areas: Area) -> frozenset[Area]:
    """A page's `shows`: the areas whose changes it refreshes on."""
    return frozenset(areas)
