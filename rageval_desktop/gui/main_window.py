"""The main window: navigation (golden set, runs), a lazy table, the row detail pane, the status bar.

Every project operation runs in a worker; the window only reacts to signals. The project tells what an
operation changed (`Project.listeners`), and the views reload from that — never from a manual refresh.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from PySide6 import QtCore
from PySide6.QtCore import QObject, QTimer, Signal

# the first paint needs these alone; the widgets the build uses are imported where it uses them (PySide6 makes a
# class as it is first named: 8 ms for those, before the window could show)
from PySide6.QtWidgets import QApplication, QMainWindow, QWidget

from rageval_desktop.core.base.imports import thaw
from rageval_desktop.gui import pages as page_list
from rageval_desktop.gui.appearance import apply_appearance, scheme_differs
from rageval_desktop.gui.file_actions import FileActions
from rageval_desktop.gui.golden_actions import GoldenActions
from rageval_desktop.gui.judging_actions import JudgingActions
from rageval_desktop.gui.lanes import Lanes, TaskBar
from rageval_desktop.gui.lazy import lazy
from rageval_desktop.gui.page_actions import WindowActions
from rageval_desktop.gui.prefs import settings
from rageval_desktop.gui.session import Session
from rageval_desktop.gui.state import Page

operations = lazy("rageval_desktop.gui.operations")   # (imported on first use: after the first paint)
workers = lazy("rageval_desktop.gui.workers")

if TYPE_CHECKING:
    from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent, QPaintEvent

    from rageval_desktop.core.base.context import TaskContext
    from rageval_desktop.core.ops.sources import ProjectSource
    from rageval_desktop.core.review.sampling import Sample
    from rageval_desktop.core.store.changes import Changes
    from rageval_desktop.core.store.project import Project
    from rageval_desktop.gui.views.nav_list import NavKey

BACKUP_EVERY_MS = 10 * 60 * 1000
UPKEEP_AFTER_MS = 3000          # a pause in golden-set edits before the large runs' values are kept again


def _warm_charts() -> None:
    from rageval_desktop.gui import chart_process

    chart_process.warm()


def _warm_client(project: Project) -> None:
    """Reads the project's judges on this thread (never the GUI's); with an active one that calls a model, the model
    client is imported on a thread of its own (`preload_client`): a judge job started from the window then starts its
    calls at once (the import is 0.5 s of a 320-row job's 10 s: bench_judge_floor.py's "job, preloaded")."""
    from rageval_desktop.core.judges.registry import preload_client

    try:
        preload_client(project)
    except Exception:   # (the project closed meanwhile: nothing to warm)
        pass


T = TypeVar("T")
P = TypeVar("P", bound=Page)


class ProjectEvents(QObject):
    """Carries `Project.listeners` calls (any thread) to the GUI thread."""

    changed = Signal(object)    # a core Changes


class FirstPaint(QWidget):
    """A staged window's content until it is built: blank in the theme's colours; once painted, it asks for the
    build on the next turn of the event loop (or after 200 ms if the window is never painted, e.g. hidden)."""

    def __init__(self, build: Callable[[], None]) -> None:
        super().__init__()
        self._build = build
        QTimer.singleShot(200, self, build)     # (timers with this widget as their context end with it)

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        QTimer.singleShot(0, self, self._build)


class MainWindow(QMainWindow):
    """The frame: navigation, the page stack, the status bar and the menus. What it does is done by the objects it
    holds — `session` (the project open, opening, closing, recent), `lanes` (write, read and backup), `files`
    (import, export, packs, backups, the check), `judging` and `golden` (their actions) — and by the pages, which
    see only the app state (`state`, whose `actions` are what a page may start of the window's)."""

    project_opened = Signal(object)
    task_finished = Signal(str)
    read_finished = Signal(str)           # a page's read landed (its name)
    rows_shown = Signal(int)              # the run or golden table shows its new listing (how many rows)
    job_finished = Signal(str)
    built = Signal()                      # a staged window has its pages and menus (see __init__)
    helper_lost = Signal(str)             # the helper process could not be had (gui/chart_process.py), in words

    # the state's, shared with every page
    undo_stack = property(lambda self: self.state.undo_stack)
    current_run = property(lambda self: self.state.current_run,
                           lambda self, run: setattr(self.state, "current_run", run))

    @property
    def project(self) -> Project | None:
        return self.session.project

    @property
    def frame(self) -> QWidget:
        return self

    @property
    def busy(self) -> bool:
        """A task runs on the write lane."""
        return self.lanes.task is not None

    @property
    def closing(self) -> int:
        """Projects still closing on their thread (the window may quit once none is)."""
        return self.session.closing

    @property
    def detail_width_ready(self) -> bool:
        """The detail pane has its remembered width (set once the rows page is first laid out)."""
        return self.rows._detail_width_set

    def __init__(self, *, staged: bool = False) -> None:
        """`staged` (the app's start): the window is shown empty first and built right after its first paint —
        its pages, menus and the modules they import then (`when_built` holds calls made before). Otherwise it is
        built here."""
        super().__init__()
        self.session = Session(self)
        self.session.opened.connect(self._show_project)
        self.session.closed.connect(self._show_no_project)
        self.task_bar = TaskBar()             # the write lane's task: label, progress, cancel (the lanes say them)
        self.task_label, self.progress, self.cancel_button = self.task_bar.label, self.task_bar.progress, \
            self.task_bar.cancel
        self.lanes = Lanes(self, self.task_bar)
        self.files = FileActions(self, self.session, self.lanes)
        self.judging = JudgingActions(self)
        self.golden = GoldenActions(self)
        self._pending: list[Callable[[], object]] = []   # calls made before the window was built
        self._run_names: list[str] = []        # the runs, as the navigation last read them (`run_names`)
        self.last_info = ""                    # the last message shown with show_info (tests and screenshots read it)
        self.last_error = ""
        self.setWindowTitle("RAGEval Desktop")
        self.setAcceptDrops(True)
        self.resize(1360, 820)
        self.ready = False
        self._abandoned = False                # closed before it was built: never built
        if staged:
            self.setCentralWidget(FirstPaint(self._complete))
        else:
            self._complete()

    def _complete(self) -> None:
        if self.ready or self._abandoned:
            return
        from rageval_desktop.gui.menus import build_menus
        from rageval_desktop.gui.state import AppState

        self.events = ProjectEvents(self)
        self.events.changed.connect(self._on_project_changed)
        # what the pages see of the app: project, run, slice, lanes, changes, and the actions they may start
        self.state = AppState(self, self, WindowActions(self.judging, self.golden))
        self.job_finished.connect(self.state.job_finished)
        self._build()
        self.menus = build_menus(self)
        # the lazily imported modules load here, on the GUI thread, before any worker runs (Python 3.11's LazyLoader
        # is not safe against two threads loading one module at once)
        _ = (operations.open_project, workers.pool)
        self.backup_timer = QTimer(self)
        self.backup_timer.setInterval(BACKUP_EVERY_MS)
        self.backup_timer.timeout.connect(self.files.periodic_backup)
        # the large runs' kept values an edit of the golden set took away, kept again once the edits pause
        self.upkeep_timer = QTimer(self)
        self.upkeep_timer.setSingleShot(True)
        self.upkeep_timer.setInterval(UPKEEP_AFTER_MS)
        self.upkeep_timer.timeout.connect(self.lanes.run_upkeep)
        # a theme that follows the system: the first paint took the scheme seen last time; now the system's own,
        # and its changes while the app runs (a connection to a method ends with the window)
        QApplication.styleHints().colorSchemeChanged.connect(self.follow_system)
        self.follow_system()
        self.ready = True
        self.built.emit()
        pending, self._pending = self._pending, []
        for call in pending:
            call()

    def when_built(self, call: Callable[[], object]) -> None:
        """Call now if the window is built, else right after it is."""
        if self.ready:
            call()
        else:
            self._pending.append(call)

    # --- layout --------------------------------------------------------------------------------
    def _build(self) -> None:
        from PySide6.QtWidgets import (
            QLabel,
            QSplitter,
            QStackedWidget,
            QVBoxLayout,
        )

        from rageval_desktop.gui.views.nav_list import NavList
        from rageval_desktop.gui.views.notice_bar import NoticeBar
        from rageval_desktop.gui.views.rows_view import RowsView
        from rageval_desktop.gui.views.welcome import WelcomePage

        self.stack = QStackedWidget()
        self.welcome = WelcomePage(self.session, self.files.choose_import, self)
        self.stack.addWidget(self.welcome)

        self.nav = NavList()
        self.nav.currentItemChanged.connect(self._on_nav)

        self.rows = RowsView(self, self.golden)   # the golden set or a run as a table, its filters and detail pane
        self.rows.shown.connect(self.rows_shown.emit)
        self.rows_page = self.rows
        self.read_finished.connect(lambda page: setattr(self.rows, "rows_pending", False) if page == "rows" else None)
        self.pages = QStackedWidget()
        self.pages.addWidget(self.rows_page)
        self._pages: dict[str, Page] = {}  # built on first visit: the first window shows sooner
        self.splitter = QSplitter()
        self.splitter.addWidget(self.nav)
        self.splitter.addWidget(self.pages)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([210, 1180])
        self.notice_bar = NoticeBar()
        self.helper_lost.connect(lambda said: self.notice_bar.show_notice(said, tone="warning", topic="helper"))
        from rageval_desktop.gui import chart_process

        chart_process.on_lost = self.helper_lost.emit      # from any thread: the signal brings it to this one
        self.workspace = QWidget()
        wl = QVBoxLayout(self.workspace)
        wl.setContentsMargins(0, 0, 0, 0)
        wl.setSpacing(4)
        wl.addWidget(self.notice_bar)
        wl.addWidget(self.splitter, 1)
        self.stack.addWidget(self.workspace)
        self.setCentralWidget(self.stack)

        self.path_label = QLabel("No project")
        self.rows_label = QLabel()
        self.saved_label = QLabel()
        self.saved_label.setToolTip("Every change is written to the project file when it is made; there is "
                                    "nothing to save")
        self.cancel_button.clicked.connect(self.lanes.cancel_task)
        bar = self.statusBar()
        bar.addWidget(self.path_label, 1)
        bar.addPermanentWidget(self.saved_label)
        bar.addPermanentWidget(self.rows_label)
        self.rows.counted.connect(self.rows_label.setText)
        bar.addPermanentWidget(self.task_label)
        bar.addPermanentWidget(self.progress)
        bar.addPermanentWidget(self.cancel_button)

    def undo(self) -> None:
        """Ctrl+Z: the last edit of any kind (ratings included), from the one undo stack."""
        self.undo_stack.undo()

    def show_history(self) -> None:
        from rageval_desktop.gui.undo import history_dialog

        self.history_dialog = history_dialog(self.undo_stack, self)

    def show_palette(self) -> None:
        """Ctrl+K: the menus' actions, every page's buttons and the run table's filters, by name."""
        from rageval_desktop.gui.views.command_palette import CommandPalette, commands_of

        pages = [("Golden set", self.rows.golden_bar, functools.partial(self.select_nav, "golden"))] + [
            (spec.title, self.page(spec.key), functools.partial(self.select_nav, spec.key))
            for spec in page_list.PAGES] if self.project is not None else []
        commands = commands_of(self.menuBar(), pages)
        if self.project is not None:
            commands += self.rows.palette_commands(self._show_rows_page, self.focus_search)
        self.palette_dialog = CommandPalette(commands, self)
        self.palette_dialog.open()

    def _show_rows_page(self) -> None:
        if self.pages.currentWidget() is not self.rows_page:
            self.select(run=self.current_run) if self.current_run else self.select_nav("golden")

    def follow_system(self, *_scheme: object) -> None:
        """On a theme that follows the system, the system's scheme if it is not the one shown; the page shown is
        drawn again in it."""
        if scheme_differs():
            apply_appearance()
            if self.project is not None:
                self.show_current()

    def set_theme(self, theme: str) -> None:
        """View › Theme (and Ctrl+K 'theme'): light, dark or the system's, kept in the user's preferences; the page
        shown is drawn again in it."""
        settings().setValue("theme", theme)
        apply_appearance()
        if self.project is not None:
            self.show_current()
        self.show_status(f"theme: {theme}")

    # --- preferences ---------------------------------------------------------------------------
    def show_preferences(self) -> None:
        from rageval_desktop.gui.views.preferences import PreferencesDialog, save_project_preferences

        dialog = PreferencesDialog(self.project, self)
        if dialog.exec() != PreferencesDialog.DialogCode.Accepted:
            return
        dialog.save_user()
        apply_appearance()
        if "review" in self._pages:               # the review keys may have changed
            from rageval_desktop.gui.views.review_view import ReviewView

            self.view(ReviewView).keys_changed()
        if self.project is None:
            return
        try:
            policy, prices = dialog.project_changes()
        except ValueError as exc:
            self.show_error(str(exc))
            return
        save = save_project_preferences(self.project, policy, prices)
        self.run_task("Saving the project's preferences", save,
                      on_done=lambda _: self.statusBar().showMessage("Preferences saved", 5000))

    # --- pages ---------------------------------------------------------------------------------
    def page(self, kind: str) -> Page:
        """The page of `kind` (its key in gui/pages.py), built on first asking."""
        if kind not in self._pages:
            import importlib  # pages are built (and their modules imported) on first visit: a faster first window

            spec = page_list.BY_KEY[kind]
            widget = getattr(importlib.import_module(f"rageval_desktop.gui.views.{spec.module}"), spec.cls)(self.state)
            self._pages[kind] = widget
            self.pages.addWidget(widget)
            self.state.subscribe(widget)
        return self._pages[kind]

    def view(self, cls: type[P]) -> P:
        """A page by its class, typed: what is asked of it is checked (`window.view(ReviewView).open_row(...)`)."""
        found = self.page(page_list.BY_CLASS[cls.__name__].key)
        assert isinstance(found, cls)
        return found

    def built_page(self, kind: str) -> Page | None:
        """The page if it was built (visited) already, else None."""
        return self._pages.get(kind)

    # --- the session --------------------------------------------------------------------------------------------
    def open_path(self, path: str | Path) -> None:
        self.when_built(lambda: self.session.open_path(path))

    def open_demo(self) -> None:
        self.when_built(self.session.open_demo)

    def close_project(self, then: Callable[[], object] | None = None) -> None:
        self.session.close(then)

    def _show_project(self, project: Project) -> None:
        """The session opened a project: the frame shows it."""
        self.setWindowTitle(f"{project.meta('name') or project.path.stem} — RAGEval Desktop")
        self.path_label.setText(str(project.path))
        self.path_label.setToolTip(str(project.path))
        self.rows.fill_slices()
        self._fill_nav()
        self.show_current()
        self.rows.read_selective()
        self.stack.setCurrentWidget(self.workspace)
        self.menus.set_project_actions(True)
        self.backup_timer.start()
        self.upkeep_timer.start()      # (a file whose large runs lost their kept values outside the app)
        self.rows.table.setFocus()
        if project.opening_notes:      # what opening it did that the user must hear (secrets removed from settings)
            said = " ".join(f"{note[0].upper()}{note[1:]}." for note in project.opening_notes)
            self.notice_bar.show_notice(said, tone="warning", topic="opening")
        if project.check_due:   # the last close was not clean: every page is read, without holding the window
            self.files.check_project(reason="unclean shutdown")
        self.judging.collect_batch_jobs()
        # charts are drawn in their own process: start it soon, from a thread of its own (starting a process took
        # 34 ms, and more on a busy machine, on whichever thread asked)
        QTimer.singleShot(2000, lambda: threading.Thread(target=_warm_charts, name="chart-warm", daemon=True).start())
        QTimer.singleShot(2500, self, lambda: threading.Thread(
            target=_warm_client, args=(project,), name="client-warm", daemon=True).start()
            if self.project is project else None)      # (not for a project closed meanwhile)
        self.project_opened.emit(project)

    def _show_no_project(self) -> None:
        """The session detached its project: the frame shows the welcome page."""
        thaw()        # what a freeze held back of the project is the collector's again (core.base.imports)
        self.backup_timer.stop()
        self.upkeep_timer.stop()
        self.rows.clear_rows()
        self.nav.clear()
        self.stack.setCurrentWidget(self.welcome)
        self.path_label.setText("No project")
        self.notice_bar.dismiss()
        self.rows_label.clear()
        self.setWindowTitle("RAGEval Desktop")
        self.menus.set_project_actions(False)

    def cancel_work(self, *, detach: bool = False) -> None:
        """The task and the judging job stop (`detach`: a batch job's remote batches run on, collected on reopen)."""
        for worker in (self.lanes.task, self.judging.job):
            if worker is not None:
                worker.cancel(detach=detach)

    # --- the lanes (the state's host) -----------------------------------------------------------------------------
    def run_task(self, label: str, fn: Callable[..., T], *args: object,
                 on_done: Callable[[T], object] | None = None) -> object:
        return self.lanes.run_task(label, fn, *args, on_done=on_done)

    def run_read(self, page: str, fn: Callable[..., T], *args: object, on_done: Callable[[T], object],
                 announce: bool = True) -> None:
        self.lanes.run_read(page, fn, *args, on_done=on_done, announce=announce)

    def run_write(self, label: str, fn: Callable[[TaskContext], T], *, on_done: Callable[[T], object] | None = None,
                  on_error: Callable[[str, str], object] | None = None) -> None:
        self.lanes.run_write(label, fn, on_done=on_done, on_error=on_error)

    # --- navigation ----------------------------------------------------------------------------
    def _fill_nav(self) -> None:
        from rageval_desktop.core.store import browse, queries

        assert self.project is not None
        runs = browse.list_runs(self.project)
        self._run_names = [name for _, name, _ in runs]
        self.nav.fill(queries.project_info(self.project), runs)

    def select(self, run: str | None = None, slice_tag: str | None = None) -> None:
        """Show a run (by name) and/or a slice; used by the command line and by other views."""
        if slice_tag is not None:
            self.rows.slice_box.setCurrentIndex(max(self.rows.slice_box.findData(slice_tag), 0))
        if run is not None:
            self.nav.select_run(run)

    def show_run_row(self, run: str, row_id: int) -> None:
        """The run's table with the row selected and its detail shown."""
        self.rows._select_after = row_id     # when the run's listing arrives (it is read off the GUI thread)
        self.select(run=run)
        self.rows.show_row(row_id)

    def _on_nav(self, *_: object) -> None:
        self.show_current()

    def current_key(self) -> NavKey | None:
        return self.nav.current_key() if self.project is not None else None

    def run_names(self) -> list[str]:
        """The project's runs, as the navigation last read them (at the open and after each change of runs): every
        page's refresh asks, and asked the project each time."""
        return list(self._run_names) if self.project else []

    def review_source(self) -> ProjectSource | None:
        """Where the review screen reads and rates: this window's project."""
        from rageval_desktop.core.ops.sources import ProjectSource

        return ProjectSource(self.project) if self.project is not None else None

    def show_current(self) -> None:
        """The page the navigation chose: a page by key, else the rows page on the golden set or a run."""
        key = self.current_key()
        self.rows_label.setText("")  # a row count is true only for the table of rows (the rows page says it)
        if key and key[0] in page_list.BY_KEY:
            view = self.page(key[0])
            self.pages.setCurrentWidget(view)
            view.refresh(self.run_names())
            return
        self.pages.setCurrentWidget(self.rows)
        self.rows.show_key(key)

    def open_failures(self, run: str | None, slice_tag: str, metric: str) -> None:
        self.navigate("failures", run=run, slice_tag=slice_tag, metric=metric)

    def navigate(self, page: str, **where: Any) -> None:
        """A page asked to show another (the state's `navigate`): the failure browser comes with a run, slice and
        (judge) metric — a click on a chart."""
        from rageval_desktop.core.metrics.dashboard import ALL
        from rageval_desktop.gui.views.review_view import ReviewView

        if page == "review" and where.get("row") is not None:
            self.select_nav("review")
            row, run, metric = int(where["row"]), where.get("run"), where.get("metric")
            rows, reason = where.get("or_sample"), str(where.get("reason") or "chosen rows")
            self.view(ReviewView).open_row(row, metric, lambda: self._row_elsewhere(row, run, metric, rows, reason))
            return
        if page == "review" and where.get("sample") is not None:    # a sample drawn elsewhere, opened on the desk
            self.select_nav("review")
            self.view(ReviewView).select_sample(int(where["sample"]))
            return
        if page != "failures" or not where:
            self.select_nav(page)
            return
        if where.get("run"):
            self.current_run = where["run"]
        slice_tag = where.get("slice_tag")
        box = self.rows.slice_box
        box.blockSignals(True)
        box.setCurrentIndex(max(box.findData(None if slice_tag == ALL else slice_tag), 0))
        box.blockSignals(False)
        self.state.current_slice = box.currentData()
        from rageval_desktop.gui.views.analysis_views import FailuresView

        shown = self.view(FailuresView)
        metric = where.get("metric")
        shown.filter_to(metric or None)
        if self.pages.currentIndex() == self.pages.indexOf(shown):
            shown.refresh(self.run_names())
        else:
            self.select_nav("failures")

    def _row_elsewhere(self, row: int, run: str | None, metric: str | None, rows: list[int] | None,
                       reason: str) -> None:
        """A row asked for on the desk is in no review sample (rated outside one: imported ratings)."""
        if rows and run and metric and self.project is not None:
            # the rows asked for (`rows`) become a sample of their own (chosen, so no audit counts it as drawn), and
            # the card opens on the row
            self._sample_and_open(run, metric, list(rows), row, reason)
        elif run:        # the row in its run's table
            self.show_run_row(run, row)
            self.show_status(f"row {row} is in no review sample: shown in run {run}")

    def _sample_and_open(self, run: str, metric: str, rows: list[int], row: int, reason: str) -> None:
        from rageval_desktop.core.review.sampling import sample_of_rows

        project = self.project
        if project is None:
            return

        def made(sample: Sample) -> None:
            from rageval_desktop.gui.views.review_view import ReviewView

            self.view(ReviewView).open_row(row, metric)        # the newest sample holding it: the one just made

        self.run_task("Making a review sample", lambda ctx: sample_of_rows(project, run, metric, rows, reason=reason),
                      on_done=made)

    def show_status(self, message: str, ms: int = 6000) -> None:
        self.statusBar().showMessage(message, ms)

    def focus_search(self) -> None:
        if self.pages.currentWidget() is not self.rows:
            self.select_nav("golden")
        self.rows.focus_search()

    def _on_project_changed(self, changes: Changes) -> None:
        """A committed write, on the GUI thread: the window keeps its navigation and rows table; every page that shows
        what changed refreshes itself (`AppState.subscribe`)."""
        from rageval_desktop.core.store.changes import Area

        if self.project is None:
            return
        from datetime import datetime

        self.saved_label.setText(f"saved {datetime.now():%H:%M:%S} ({changes.op})")
        self.rows.changed(changes)
        self.state.announce(changes)
        if changes.touches(Area.GOLDEN):
            self.upkeep_timer.start()
        if changes.touches(Area.GOLDEN, Area.RUNS, Area.CORPUS, Area.JUDGES):
            from rageval_desktop.gui.state import initiator_of

            before = self.current_key()
            self.rows.fill_slices()
            self._fill_nav()
            shown = self.pages.currentWidget()   # (a page refreshes itself after a write it asked for)
            if shown is self.rows or self.current_key() != before or changes.initiator != initiator_of(shown):
                self.show_current()

    def select_nav(self, kind: str) -> None:
        self.nav.select_key(kind)

    # --- telling and asking the user ----------------------------------------------------------------------------
    def show_error(self, message: str, details: str = "") -> None:
        from rageval_desktop.gui.views.common import warn

        warn(self, message, details)
        self.last_error = message

    def show_info(self, text: str) -> None:
        from PySide6.QtWidgets import QMessageBox

        box = QMessageBox(QMessageBox.Icon.Information, "RAGEval Desktop", text, QMessageBox.StandardButton.Ok, self)
        box.setTextFormat(QtCore.Qt.TextFormat.PlainText)
        box.open()
        self.last_info = text

    def reviewer(self, ask: bool = False, force: bool = False) -> str:
        """The reviewer name ratings carry (a preference of this computer's user, not of the project)."""
        from PySide6.QtWidgets import QInputDialog

        name = str(settings().value("reviewer", "") or "")
        if (ask and not name) or force:
            text, ok = QInputDialog.getText(self, "Reviewer", "Your name, as it should appear on your ratings:",
                                            text=name)
            if ok and text.strip():
                name = text.strip()
                settings().setValue("reviewer", name)
        return name

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if self.ready and event.mimeData().hasUrls() and all(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        self.files.drop(event)

    def closeEvent(self, event: QCloseEvent) -> None:
        """Quitting never blocks: with a project open (or closing), the window stays until it is closed."""
        if self.project is not None or self.closing:
            event.ignore()
            self.cancel_work(detach=True)   # the app closes: a batch job's remote batches run on (collected on reopen)
            if self.project is not None:
                self.close_project(then=self.close)
            return
        if not self.ready:     # closed before it was built (a staged start): nothing to stop, nothing to build
            self._abandoned, self._pending = True, []
            super().closeEvent(event)
            return
        self.state.stop_refreshes()
        self.statusBar().clearMessage()  # stops the status bar's message timer
        super().closeEvent(event)
