"""The main window: navigation (golden set, runs), a lazy table, the row detail pane, the status bar.

Every project operation runs in a worker; the window only reacts to signals. The project tells what an
operation changed (`Project.listeners`), and the views reload from that — never from a manual refresh.
"""

from __future__ import annotations

import functools
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6 import QtCore
from PySide6.QtCore import QObject, QTimer, Signal

# the first paint needs these alone; the widgets the build uses are imported where it uses them (PySide6 makes a
# class as it is first named: 8 ms for those, before the window could show)
from PySide6.QtWidgets import QApplication, QMainWindow, QWidget

from rageval_desktop.gui import pages as page_list
from rageval_desktop.gui.appearance import apply_appearance, scheme_differs
from rageval_desktop.gui.golden_actions import GoldenActions
from rageval_desktop.gui.judging_actions import JudgingActions
from rageval_desktop.gui.lazy import lazy
from rageval_desktop.gui.prefs import settings
from rageval_desktop.gui.window_tasks import WindowTasks

operations = lazy("rageval_desktop.gui.operations")   # (imported on first use: after the first paint)
workers = lazy("rageval_desktop.gui.workers")

if TYPE_CHECKING:
    from PySide6.QtGui import QAction, QCloseEvent

    from rageval_desktop.core.store.changes import Changes
    from rageval_desktop.core.store.project import Project
    from rageval_desktop.gui.workers import Worker

MAX_RECENT = 8
BACKUP_EVERY_MS = 10 * 60 * 1000


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


class ProjectEvents(QObject):
    """Carries `Project.listeners` calls (any thread) to the GUI thread."""

    changed = Signal(object)    # a core Changes


class FirstPaint(QWidget):
    """A staged window's content until it is built: blank in the theme's colours; once painted, it asks for the
    build on the next turn of the event loop (or after 200 ms if the window is never painted, e.g. hidden)."""

    def __init__(self, build: Any) -> None:
        super().__init__()
        self._build = build
        QTimer.singleShot(200, self, build)     # (timers with this widget as their context end with it)

    def paintEvent(self, event: Any) -> None:
        super().paintEvent(event)
        QTimer.singleShot(0, self, self._build)


class MainWindow(GoldenActions, JudgingActions, WindowTasks, QMainWindow):
    project_opened = Signal(object)
    task_finished = Signal(str)
    read_finished = Signal(str)           # a page's read landed (its name)
    rows_shown = Signal(int)              # the run or golden table shows its new listing (how many rows)
    job_finished = Signal(str)
    built = Signal()                      # a staged window has its pages and menus (see __init__)

    # the state's, shared with every page
    undo_stack = property(lambda self: self.state.undo_stack)
    current_run = property(lambda self: self.state.current_run,
                           lambda self, run: setattr(self.state, "current_run", run))

    @property
    def busy(self) -> bool:
        """A task runs on the write lane."""
        return self._task is not None

    @property
    def closing(self) -> int:
        """Projects still closing on their thread (the window may quit once none is)."""
        return self._closing

    @property
    def detail_width_ready(self) -> bool:
        """The detail pane has its remembered width (set once the rows page is first laid out)."""
        return self.rows._detail_width_set

    def __init__(self, *, staged: bool = False) -> None:
        """`staged` (the app's start): the window is shown empty first and built right after its first paint —
        its pages, menus and the modules they import then (`when_built` holds calls made before). Otherwise it is
        built here."""
        super().__init__()
        self.project: Project | None = None
        self._task: Worker | None = None
        self._job: Worker | None = None
        self._closing = 0                      # projects still closing on their thread
        self._reads: dict[str, int] = {}       # page -> generation of its newest read (older results are stale)
        self._backup: Worker | None = None
        self._pending: list[Any] = []          # calls made before the window was built
        self.last_info = ""                    # the last message shown with show_info (tests and screenshots read it)
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
        from rageval_desktop.gui.state import AppState

        self.events = ProjectEvents(self)
        self.events.changed.connect(self._on_project_changed)
        self.state = AppState(self, self)   # what the pages see of the app: project, run, slice, lanes, changes
        self.job_finished.connect(self.state.job_finished)
        self._build()
        self._build_actions()
        # the lazily imported modules load here, on the GUI thread, before any worker runs (Python 3.11's LazyLoader
        # is not safe against two threads loading one module at once)
        _ = (operations.open_project, workers.pool)
        self.backup_timer = QTimer(self)
        self.backup_timer.setInterval(BACKUP_EVERY_MS)
        self.backup_timer.timeout.connect(self._periodic_backup)
        # a theme that follows the system: the first paint took the scheme seen last time; now the system's own,
        # and its changes while the app runs (a connection to a method ends with the window)
        QApplication.styleHints().colorSchemeChanged.connect(self.follow_system)
        self.follow_system()
        self.ready = True
        self.built.emit()
        pending, self._pending = self._pending, []
        for call in pending:
            call()

    def when_built(self, call: Any) -> None:
        """Call now if the window is built, else right after it is."""
        if self.ready:
            call()
        else:
            self._pending.append(call)

    # --- layout --------------------------------------------------------------------------------
    def _build(self) -> None:
        from PySide6.QtWidgets import (
            QLabel,
            QListWidget,
            QProgressBar,
            QPushButton,
            QSplitter,
            QStackedWidget,
            QVBoxLayout,
        )

        from rageval_desktop.gui.views.notice_bar import NoticeBar
        from rageval_desktop.gui.views.rows_view import RowsView
        from rageval_desktop.gui.views.welcome import WelcomePage

        self.stack = QStackedWidget()
        self.welcome = WelcomePage(self, self)
        self.stack.addWidget(self.welcome)

        self.nav = QListWidget()
        self.nav.setObjectName("nav")
        self.nav.setFixedWidth(210)
        self.nav.currentItemChanged.connect(self._on_nav)

        self.rows = RowsView(self)             # the golden set or a run as a table, its filters and detail pane
        self.rows.shown.connect(self.rows_shown.emit)
        self.rows_page = self.rows
        self.read_finished.connect(lambda page: setattr(self.rows, "rows_pending", False) if page == "rows" else None)
        self.pages = QStackedWidget()
        self.pages.addWidget(self.rows_page)
        self._pages: dict[str, QWidget] = {}  # built on first visit: the first window shows sooner
        self.splitter = QSplitter()
        self.splitter.addWidget(self.nav)
        self.splitter.addWidget(self.pages)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([210, 1180])
        self.notice_bar = NoticeBar()
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
        self.task_label = QLabel()
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(180)
        self.progress.setVisible(False)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setVisible(False)
        self.cancel_button.clicked.connect(self.cancel_task)
        bar = self.statusBar()
        bar.addWidget(self.path_label, 1)
        bar.addPermanentWidget(self.saved_label)
        bar.addPermanentWidget(self.rows_label)
        self.rows.counted.connect(self.rows_label.setText)
        bar.addPermanentWidget(self.task_label)
        bar.addPermanentWidget(self.progress)
        bar.addPermanentWidget(self.cancel_button)

    def _build_actions(self) -> None:
        from PySide6.QtGui import QAction, QKeySequence

        file_menu = self.menuBar().addMenu("&File")

        def action(menu: Any, text: str, slot: Any, shortcut: Any = None, tip: str = "") -> QAction:
            act = QAction(text, self)
            if shortcut is not None:
                # a standard key can be empty on a platform (Preferences on Linux): the listed key stays bound
                keys: list[QKeySequence] = []
                for k in shortcut if isinstance(shortcut, list) else [shortcut]:
                    seq = QKeySequence(k)
                    if not seq.isEmpty() and seq.toString() not in [x.toString() for x in keys]:
                        keys.append(seq)
                act.setShortcuts(keys)
            act.setStatusTip(tip)
            act.triggered.connect(slot)
            menu.addAction(act)
            return act

        action(file_menu, "&New Project…", self.new_project, [QKeySequence.StandardKey.New, "Ctrl+N"],
               "Create a project file")
        action(file_menu, "&Open Project…", self.choose_project, [QKeySequence.StandardKey.Open, "Ctrl+O"])
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        action(file_menu, "Open &Demo Project", self.open_demo, None, "The bundled Python-docs demo")
        file_menu.addSeparator()
        self.import_action = action(file_menu, "&Import File…", self.choose_import, "Ctrl+I",
                                    "Golden set, run or corpus: CSV, JSONL, JSON, Parquet, XLSX")
        self.export_action = action(file_menu, "&Export Report…", self.export_report, "Ctrl+E",
                                    "HTML, PDF, XLSX, CSV, JSONL, Parquet or Markdown")
        self.pack_export_action = action(file_menu, "Export Review &Packs…", self.export_packs, None,
                                         "A sample's rows as one file per reviewer, rated blind without the project")
        self.pack_import_action = action(file_menu, "Import Review Pac&ks…", self.import_packs, None,
                                         "Merge the ratings of returned review packs")
        self.backup_action = action(file_menu, "&Back Up Now", self.backup_now)
        self.restore_action = action(file_menu, "Res&tore from Backup…", self.restore_backup)
        file_menu.addSeparator()
        self.close_action = action(file_menu, "&Close Project", self.close_project,
                                   [QKeySequence.StandardKey.Close, "Ctrl+W"])
        action(file_menu, "&Quit", self.close, [QKeySequence.StandardKey.Quit, "Ctrl+Q"])
        edit_menu = self.menuBar().addMenu("&Edit")
        self.undo_action = action(edit_menu, "&Undo", self.undo, QKeySequence.StandardKey.Undo,
                                  "Undo the last edit (golden rows, ratings, judges, retirements)")
        self.redo_action = action(edit_menu, "&Redo", self.undo_stack.redo, QKeySequence.StandardKey.Redo)
        action(edit_menu, "&History…", self.show_history, "Ctrl+H", "Every edit of this session, undoable")
        edit_menu.addSeparator()
        action(edit_menu, "&Preferences…", self.show_preferences, [QKeySequence.StandardKey.Preferences, "Ctrl+,"],
               "Reviewer name, defaults for judges, theme, font size; this project's retirement policy and prices")
        action(edit_menu, "&Reviewer Name…", lambda: self.reviewer(ask=True, force=True), None,
               "The name your ratings carry")
        view_menu = self.menuBar().addMenu("&View")
        action(view_menu, "&Navigation", lambda: self.nav.setFocus(), "Ctrl+1")
        action(view_menu, "&Table", lambda: self.rows.table.setFocus(), "Ctrl+2")
        action(view_menu, "&Detail", lambda: self.rows.detail.setFocus(), "Ctrl+3")
        action(view_menu, "&Slice…", lambda: self.rows.choose_slice(), "Ctrl+L")
        action(view_menu, "Searc&h rows", self.focus_search, "Ctrl+F")
        action(view_menu, "Clear &filters", lambda: self.rows.triage.clear(), "Ctrl+Shift+F")
        view_menu.addSeparator()
        for theme, text in (("light", "Theme: &Light"), ("dark", "Theme: D&ark"),
                            ("system", "Theme: Follow the s&ystem")):
            action(view_menu, text, lambda _=False, t=theme: self.set_theme(t))
        go_menu = self.menuBar().addMenu("&Go")
        for kind, text in (("golden", "&Golden Set"), ("dashboard", "&Dashboard"), ("compare", "&Compare"),
                           ("failures", "&Failures"), ("judges", "&Judges"), ("jobs", "Jo&bs"),
                           ("review", "&Review"), ("audit", "&Audit"), ("team", "&Team")):
            action(go_menu, f"Go to {text}", lambda _=False, k=kind: self.select_nav(k))
        help_menu = self.menuBar().addMenu("&Help")
        action(help_menu, "&Command Palette…", self.show_palette, "Ctrl+K", "Find any command by name")
        action(help_menu, "&Keyboard Shortcuts", self.show_shortcuts, "F1")
        self.check_action = action(help_menu, "C&heck Project", self.check_project, None,
                                   "Read every page of the project file for damage, in the background")
        action(help_menu, "&About", self.show_about)
        cancel = QAction(self)
        cancel.setShortcut(QKeySequence("Esc"))
        cancel.triggered.connect(self.cancel_task)
        self.addAction(cancel)
        self._set_project_actions(False)

    def _set_project_actions(self, enabled: bool) -> None:
        for act in (self.import_action, self.export_action, self.backup_action, self.restore_action,
                    self.close_action, self.pack_export_action, self.pack_import_action, self.check_action):
            act.setEnabled(enabled)

    def undo(self) -> None:
        """Ctrl+Z: the last edit of any kind (ratings included), from the one undo stack."""
        self.undo_stack.undo()

    def show_history(self) -> None:
        from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QUndoView, QVBoxLayout

        dialog = QDialog(self)
        dialog.setWindowTitle("History of this session's edits")
        dialog.resize(560, 460)
        layout = QVBoxLayout(dialog)
        hint = QLabel("Click an entry to go back to that point (later edits are undone; redo brings them back).")
        hint.setObjectName("hint")
        hint.setWordWrap(True)
        view = QUndoView(self.undo_stack)
        view.setEmptyLabel("(project opened)")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(dialog.reject)
        layout.addWidget(hint)
        layout.addWidget(view)
        layout.addWidget(buttons)
        self.history_dialog = dialog
        dialog.open()

    def show_palette(self) -> None:
        from PySide6.QtWidgets import QMenu, QPushButton

        from rageval_desktop.gui.views.command_palette import CommandPalette, from_action, from_button

        commands = [from_action(a) for menu in self.menuBar().findChildren(QMenu) for a in menu.actions()
                    if not a.isSeparator() and a.menu() is None and a.text() and a.isEnabled()]
        if self.project is not None:   # every page's buttons too: run judges, new sample, record audit, ...
            pages = [("Golden set", "golden", self.rows.golden_bar)] + [
                (spec.title, spec.key, self.page(spec.key)) for spec in page_list.PAGES]
            for title, kind, widget in pages:
                for button in widget.findChildren(QPushButton):
                    if button.text():
                        commands.append(from_button(title, button, functools.partial(self.select_nav, kind)))
            commands += self._triage_commands()
        self.palette_dialog = CommandPalette(commands, self)
        self.palette_dialog.open()

    def _triage_commands(self) -> list:
        """The run table's filters by name (Ctrl+K): each shows the current run's rows, then presses the button,
        toggles the box or opens the list."""
        from rageval_desktop.gui.views.command_palette import Command

        bar = self.rows.triage

        def on_rows(then: Any) -> Any:
            def run() -> None:
                if self.pages.currentWidget() is not self.rows_page:
                    self.select(run=self.current_run) if self.current_run else self.select_nav("golden")
                then()
            return run

        out = [Command(f"Run table › {b.text().replace('&', '').rstrip('.…')}", "", on_rows(b.click))
               for b in (bar.clear_button, bar.columns_button, bar.review_button)]
        out.append(Command("Run table › Disagreements (show only rows where judges or humans disagree)", "",
                           on_rows(bar.disagree.toggle)))
        for name, box in (("status", bar.status), ("failure class", bar.failure), ("judge score", bar.judge),
                          ("human rating", bar.human)):
            out.append(Command(f"Run table › Filter by {name}…", "",
                               on_rows(lambda b=box: (b.setFocus(), b.showPopup()))))
        out.append(Command("Run table › Search rows", "Ctrl+F", self.focus_search))
        return out

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
        from rageval_desktop.gui.views.preferences import PreferencesDialog

        dialog = PreferencesDialog(self.project, self)
        if dialog.exec() != PreferencesDialog.DialogCode.Accepted:
            return
        dialog.save_user()
        apply_appearance()
        review: Any = self._pages.get("review")
        if review is not None:               # the review keys may have changed
            review.keys_changed()
        if self.project is None:
            return
        try:
            policy, prices = dialog.project_changes()
        except ValueError as exc:
            self.show_error(str(exc))
            return
        project = self.project

        def save(ctx: Any) -> None:
            from rageval_desktop.core.judges.prices import all_prices, set_price
            from rageval_desktop.core.review.settings import set_policy

            set_policy(project, **policy)
            current = all_prices(project)
            for model, i, o, bi, bo in prices:
                now = current.get(model)
                if now is not None and not now["batch_set"] and \
                        (now["batch_input_per_mtok"], now["batch_output_per_mtok"]) == (bi, bo):
                    bi = bo = None   # the batch price shown was derived (half the live price): it stays derived
                same = now is not None and (now["input_per_mtok"], now["output_per_mtok"]) == (i, o) and (
                    bi is None or (now["batch_input_per_mtok"], now["batch_output_per_mtok"]) == (bi, bo))
                if not same:
                    set_price(project, model, i, o, bi, bo)

        self.run_task("Saving the project's preferences", save,
                      on_done=lambda _: self.statusBar().showMessage("Preferences saved", 5000))

    # --- pages ---------------------------------------------------------------------------------
    def page(self, kind: str) -> Any:
        if kind not in self._pages:
            import importlib  # pages are built (and their modules imported) on first visit: a faster first window

            spec = page_list.BY_KEY[kind]
            widget = getattr(importlib.import_module(f"rageval_desktop.gui.views.{spec.module}"), spec.cls)(self.state)
            self._pages[kind] = widget
            self.pages.addWidget(widget)
            self.state.subscribe(widget)
        return self._pages[kind]

    # --- opening -------------------------------------------------------------------------------
    def open_path(self, path: str | Path) -> None:
        if not self.ready:
            self.when_built(lambda: self.open_path(path))
            return
        path = Path(path)
        self.run_task(f"Opening {path.name}", operations.open_project, path, on_done=self._opened)

    def open_demo(self) -> None:
        if not self.ready:
            self.when_built(self.open_demo)
            return
        self.run_task("Preparing the demo project", operations.ensure_demo_project, on_done=self.open_path)

    def _opened(self, project: Project) -> None:
        if self.project is not None:  # open the new one once the old one is closed
            self.close_project(then=lambda: self._opened(project))
            return
        self.project = project
        self.state.set_project(project)
        project.listeners.append(self.events.changed.emit)
        self._remember(project.path)
        self.setWindowTitle(f"{project.meta('name') or project.path.stem} — RAGEval Desktop")
        self.path_label.setText(str(project.path))
        self.path_label.setToolTip(str(project.path))
        self.rows.fill_slices()
        self._fill_nav()
        self.rows.read_selective()
        self.stack.setCurrentWidget(self.workspace)
        self._set_project_actions(True)
        self.backup_timer.start()
        self.rows.table.setFocus()
        if project.check_due:   # the last close was not clean: every page is read, without holding the window
            self.check_project(reason="unclean shutdown")
        self.collect_batch_jobs()
        # charts are drawn in their own process: start it soon, from a thread of its own (starting a process took
        # 34 ms, and more on a busy machine, on whichever thread asked)
        QTimer.singleShot(2000, lambda: threading.Thread(target=_warm_charts, name="chart-warm", daemon=True).start())
        QTimer.singleShot(2500, self, lambda: threading.Thread(
            target=_warm_client, args=(project,), name="client-warm", daemon=True).start()
            if self.project is project else None)      # (not for a project closed meanwhile)
        self.project_opened.emit(project)

    def close_project(self, then: Any = None) -> None:
        """Detach the project from the window at once; cancelling its work (calls in flight included), the
        closing backup and closing the file happen on a thread behind a progress dialog — the GUI thread never
        waits. `then` runs once the file is closed (opening another project, quitting)."""
        from PySide6.QtWidgets import QProgressDialog

        if self.project is None:
            if then is not None:
                then()
            return
        self.backup_timer.stop()
        project, self.project = self.project, None
        self.state.set_project(None)
        for worker in (self._task, self._job):
            if worker is not None:   # detached: a batch job's remote batches keep running (collected on reopen)
                worker.cancel(detach=True)
        self.rows.clear_rows()
        self.nav.clear()
        project.listeners.clear()
        self.stack.setCurrentWidget(self.welcome)
        self.path_label.setText("No project")
        self.notice_bar.dismiss()
        self.rows_label.clear()
        self.setWindowTitle("RAGEval Desktop")
        self._set_project_actions(False)
        self._closing += 1
        dialog = QProgressDialog(self)
        dialog.setLabelText(f"Closing {project.path.name}: stopping its work and saving a backup…")
        dialog.setRange(0, 0)
        dialog.setWindowTitle("Closing project")
        dialog.setCancelButton(None)
        dialog.setMinimumDuration(2 ** 30)  # a busy indicator gets no setValue calls: it is shown by the timer below
        done_closing: list[bool] = []

        def show_if_slow() -> None:  # quick closes show nothing
            if not done_closing:
                try:
                    dialog.show()
                except RuntimeError:  # the window went first
                    pass

        QTimer.singleShot(400, show_if_slow)

        def finish(project: Project = project) -> str:
            workers.pool().waitForDone(60_000)  # the cancelled job ends within a second; tasks finish their step
            message = ""
            if project.changes_since_backup:
                try:
                    project.backup("on-close")
                except Exception as exc:  # a failed backup must not keep the file open
                    message = f"The closing backup failed: {exc}"
            project.close()
            return message

        def closed(message: str) -> None:
            done_closing.append(True)
            try:
                self._closing -= 1
                dialog.reset()
                dialog.deleteLater()
                if message:
                    self.statusBar().showMessage(message, 15_000)
            except RuntimeError:  # the window (and its dialog) was deleted meanwhile: nothing left to tell
                return
            if then is not None:
                then()

        workers.in_thread(finish, on_done=closed, on_error=lambda m: closed(f"Closing failed: {m}"))

    def restore_backup(self, backup: str | None = None, *, confirm: bool = True) -> None:
        """Close the project, restore it from a backup (the current state is backed up first; see
        core/store/restore.py), open it again."""
        from PySide6.QtWidgets import QFileDialog, QMessageBox

        from rageval_desktop.core.store.backup import backup_dir

        if self.project is None:
            return
        path = self.project.path
        if backup is None:
            backup, _ = QFileDialog.getOpenFileName(self, "Restore from backup", str(backup_dir(path)),
                                                    "RAGEval backups (*.rageval)")
            if not backup:
                return
        if confirm and QMessageBox.question(
                self, "Restore from backup",
                f"Replace {path.name} with the backup {Path(backup).name}?\n\nThe project as it is now is backed up "
                "first, so this can be undone by restoring that backup.") != QMessageBox.StandardButton.Yes:
            return

        def restored(report: Any) -> None:
            self.open_path(path)
            self.statusBar().showMessage(f"Restored from {Path(backup).name}; the state before is saved as "
                                         f"{', '.join(Path(s).name for s in report.saved_current_as)}", 20_000)

        def restore_and_reopen() -> None:
            self.run_task(f"Restoring {path.name}", operations.restore_backup, path, Path(backup), on_done=restored)

        self.close_project(then=restore_and_reopen)

    def new_project(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        path, _ = QFileDialog.getSaveFileName(self, "New project", str(Path.home() / "evaluation.rageval"),
                                              "RAGEval projects (*.rageval)")
        if path:
            if not path.endswith(".rageval"):
                path += ".rageval"
            self.run_task("Creating the project", operations.create_project, Path(path), on_done=self._opened)

    def choose_project(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        path, _ = QFileDialog.getOpenFileName(self, "Open project", str(Path.home()), "RAGEval projects (*.rageval)")
        if path:
            self.open_path(path)

    def recent_projects(self) -> list[str]:
        value = settings().value("recent", [])
        items = [value] if isinstance(value, str) else [str(v) for v in value] if isinstance(value, list) else []
        return [p for p in items if Path(p).exists()]

    def _remember(self, path: Path) -> None:
        items = [str(path.resolve())] + [p for p in self.recent_projects() if p != str(path.resolve())]
        settings().setValue("recent", items[:MAX_RECENT])

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        for path in self.recent_projects():
            act = self.recent_menu.addAction(Path(path).name)
            act.setStatusTip(path)
            act.triggered.connect(lambda _=False, p=path: self.open_path(p))
        if self.recent_menu.isEmpty():
            self.recent_menu.addAction("(none yet)").setEnabled(False)

    # --- navigation ----------------------------------------------------------------------------
    def _fill_nav(self) -> None:
        from PySide6.QtWidgets import QListWidgetItem

        from rageval_desktop.core.store import browse, queries

        assert self.project is not None
        item = self.nav.currentItem()
        keep = item.data(QtCore.Qt.ItemDataRole.UserRole) if item else ("golden", None)
        info = queries.project_info(self.project)
        self.nav.blockSignals(True)
        self.nav.clear()
        self._nav_item(f"Golden set  ({info['golden_rows']})", ("golden", None))
        header = QListWidgetItem("RUNS")
        header.setFlags(QtCore.Qt.ItemFlag.NoItemFlags)
        header.setData(QtCore.Qt.ItemDataRole.UserRole, None)
        self.nav.addItem(header)
        for run_id, name, rows in browse.list_runs(self.project):
            self._nav_item(f"{name}  ({rows:,})", ("run", (run_id, name)))
        section = None
        for spec in page_list.PAGES:
            if spec.section != section:
                section = spec.section
                header = QListWidgetItem(section)
                header.setFlags(QtCore.Qt.ItemFlag.NoItemFlags)
                header.setData(QtCore.Qt.ItemDataRole.UserRole, None)
                self.nav.addItem(header)
            count = f"  ({info[spec.counted]})" if spec.counted else ""
            self._nav_item(spec.title + count, (spec.key, None))
        self.nav.blockSignals(False)
        for i in range(self.nav.count()):
            if self.nav.item(i).data(QtCore.Qt.ItemDataRole.UserRole) == keep:
                self.nav.setCurrentRow(i)
                return
        self.nav.setCurrentRow(0)

    def _nav_item(self, text: str, key: tuple) -> None:
        from PySide6.QtWidgets import QListWidgetItem

        item = QListWidgetItem(text)
        item.setData(QtCore.Qt.ItemDataRole.UserRole, key)
        self.nav.addItem(item)

    def select(self, run: str | None = None, slice_tag: str | None = None) -> None:
        """Show a run (by name) and/or a slice; used by the command line and by other views."""
        if slice_tag is not None:
            self.rows.slice_box.setCurrentIndex(max(self.rows.slice_box.findData(slice_tag), 0))
        if run is not None:
            for i in range(self.nav.count()):
                key = self.nav.item(i).data(QtCore.Qt.ItemDataRole.UserRole)
                if key and key[0] == "run" and key[1][1] == run:
                    self.nav.setCurrentRow(i)

    def show_run_row(self, run: str, row_id: int) -> None:
        """The run's table with the row selected and its detail shown."""
        self.rows._select_after = row_id     # when the run's listing arrives (it is read off the GUI thread)
        self.select(run=run)
        self.rows.show_row(row_id)

    def _on_nav(self, *_: Any) -> None:
        self.show_current()

    def current_key(self) -> tuple | None:
        item = self.nav.currentItem()
        if item is None or self.project is None:
            return None
        return item.data(QtCore.Qt.ItemDataRole.UserRole)

    def run_names(self) -> list[str]:
        from rageval_desktop.core.store import browse

        return [name for _, name, _ in browse.list_runs(self.project)] if self.project else []

    def review_source(self) -> Any:
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

        if page == "review" and where.get("row") is not None:
            self.select_nav("review")
            if self.page("review").open_row(int(where["row"]), where.get("metric")):
                return
            if where.get("or_sample") and where.get("run") and where.get("metric") and self.project is not None:
                # rated outside any sample (imported ratings): the rows asked for become a sample of their own
                # (chosen, so no audit counts it as drawn), and the card opens on the row
                self._sample_and_open(where["run"], where["metric"], list(where["or_sample"]), int(where["row"]),
                                      str(where.get("reason") or "chosen rows"))
                return
            if where.get("run"):        # rated outside a sample (imported ratings): the row in its run's table
                self.show_run_row(where["run"], int(where["row"]))
                self.show_status(f"row {where['row']} is in no review sample: shown in run {where['run']}")
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
        shown: Any = self.page("failures")
        metric = where.get("metric")
        shown.filter_to(metric or None)
        if self.pages.currentIndex() == self.pages.indexOf(shown):
            shown.refresh(self.run_names())
        else:
            self.select_nav("failures")

    def _sample_and_open(self, run: str, metric: str, rows: list[int], row: int, reason: str) -> None:
        from rageval_desktop.core.review.sampling import sample_of_rows

        project = self.project
        if project is None:
            return

        def made(sample: Any) -> None:
            review: Any = self.page("review")
            review.refresh(self.run_names())
            review._select_sample(sample.id)
            review.open_row(row, metric)

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
        if changes.touches(Area.GOLDEN, Area.RUNS, Area.CORPUS, Area.JUDGES):
            self.rows.fill_slices()
            self._fill_nav()
            self.show_current()

    def closeEvent(self, event: QCloseEvent) -> None:
        """Quitting never blocks: with a project open (or closing), the window stays until it is closed."""
        if self.project is not None or self._closing:
            event.ignore()
            for worker in (self._task, self._job):
                if worker is not None:   # the app closes: a batch job's remote batches run on (collected on reopen)
                    worker.cancel(detach=True)
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
