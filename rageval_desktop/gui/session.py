"""The session: which project the window has open, and opening, closing, restoring and the recent projects. An
object the window holds (`window.session`); the pages observe it through the app state (`AppState.project_changed`),
the window's frame through `opened` and `closed`.

Opening runs on the write lane; closing detaches the project at once and finishes on a thread (cancelling its work,
the closing backup, closing the file) behind a progress dialog shown only when it is slow — the GUI thread never
waits."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Signal

from rageval_desktop.gui.lazy import lazy
from rageval_desktop.gui.prefs import settings

operations = lazy("rageval_desktop.gui.operations")   # (imported on first use: after the first paint)
workers = lazy("rageval_desktop.gui.workers")

if TYPE_CHECKING:
    from collections.abc import Callable

    from PySide6.QtWidgets import QMenu, QProgressDialog

    from rageval_desktop.core.store.project import Project
    from rageval_desktop.core.store.restore import RestoreReport
    from rageval_desktop.gui.window_host import WindowHost

MAX_RECENT = 8


def recent_projects() -> list[str]:
    """The projects opened last on this computer (newest first) that still exist."""
    value = settings().value("recent", [])
    items = [value] if isinstance(value, str) else [str(v) for v in value] if isinstance(value, list) else []
    return [p for p in items if Path(p).exists()]


def remember(path: Path) -> None:
    items = [str(path.resolve())] + [p for p in recent_projects() if p != str(path.resolve())]
    settings().setValue("recent", items[:MAX_RECENT])



def _finish_closing(project: Project) -> str:
    """On a worker: wait for the cancelled work, back up what changed since the last backup, close the file; what
    went wrong, in words ("" when nothing did)."""
    workers.pool().waitForDone(60_000)  # the cancelled job ends within a second; tasks finish their step
    message = ""
    if project.changes_since_backup:
        try:
            project.backup("on-close")
        except Exception as exc:  # a failed backup must not keep the file open
            message = f"The closing backup failed: {exc}"
    project.close()
    return message

class Session(QObject):
    opened = Signal(object)       # the Project now open (the app state has it already)
    closed = Signal()             # the project was detached (its file closes on a thread)

    def __init__(self, window: WindowHost) -> None:
        super().__init__()
        self.w = window
        self.project: Project | None = None
        self.closing = 0                       # projects still closing on their thread

    # --- opening ------------------------------------------------------------------------------------------------
    def open_path(self, path: str | Path) -> None:
        path = Path(path)
        self.w.run_task(f"Opening {path.name}", operations.open_project, path, on_done=self.adopt)

    def open_demo(self) -> None:
        self.w.run_task("Preparing the demo project", operations.ensure_demo_project, on_done=self.open_path)

    def create(self, path: Path, then: Callable[[Project], object] | None = None) -> None:
        """A new project file at `path`, opened (then `then(project)`)."""
        def created(project: Project) -> None:
            self.adopt(project)
            if then is not None:
                then(project)

        self.w.run_task("Creating the project", operations.create_project, path, on_done=created)

    def adopt(self, project: Project) -> None:
        """An opened project becomes the window's (the one open before is closed first)."""
        if self.project is not None:
            self.close(then=lambda: self.adopt(project))
            return
        self.project = project
        self.w.state.set_project(project)
        project.listeners.append(self.w.events.changed.emit)
        remember(project.path)
        self.opened.emit(project)

    def new_project(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        path, _ = QFileDialog.getSaveFileName(self.w.frame, "New project", str(Path.home() / "evaluation.rageval"),
                                              "RAGEval projects (*.rageval)")
        if path:
            self.create(Path(path if path.endswith(".rageval") else path + ".rageval"))

    def choose_project(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        path, _ = QFileDialog.getOpenFileName(self.w.frame, "Open project", str(Path.home()),
                                              "RAGEval projects (*.rageval)")
        if path:
            self.w.open_path(path)

    def recent_projects(self) -> list[str]:
        return recent_projects()

    def fill_recent(self, menu: QMenu) -> None:
        menu.clear()
        for path in recent_projects():
            act = menu.addAction(Path(path).name)
            act.setStatusTip(path)
            act.triggered.connect(lambda _=False, p=path: self.w.open_path(p))
        if menu.isEmpty():
            menu.addAction("(none yet)").setEnabled(False)

    # --- closing ------------------------------------------------------------------------------------------------
    def close(self, then: Callable[[], object] | None = None) -> None:
        """Detach the project from the window at once; cancelling its work (calls in flight included), the
        closing backup and closing the file happen on a thread behind a progress dialog — the GUI thread never
        waits. `then` runs once the file is closed (opening another project, quitting)."""
        if self.project is None:
            if then is not None:
                then()
            return
        project, self.project = self.project, None
        self.w.state.set_project(None)
        self.w.cancel_work(detach=True)   # a batch job's remote batches keep running (collected on reopen)
        project.listeners.clear()
        self.closed.emit()
        self.closing += 1
        dialog, done_closing = self._closing_dialog(project)

        def closed(message: str) -> None:
            done_closing.append(True)
            try:
                self.closing -= 1
                dialog.reset()
                dialog.deleteLater()
                if message:
                    self.w.show_status(message, 15_000)
            except RuntimeError:  # the window (and its dialog) was deleted meanwhile: nothing left to tell
                return
            if then is not None:
                then()

        workers.in_thread(lambda: _finish_closing(project), on_done=closed,
                          on_error=lambda m: closed(f"Closing failed: {m}"))

    def _closing_dialog(self, project: Project) -> tuple[QProgressDialog, list[bool]]:
        """A busy dialog shown only if closing takes over 400 ms, and the flag that says it is done."""
        from PySide6.QtWidgets import QProgressDialog

        dialog = QProgressDialog(self.w.frame)
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
        return dialog, done_closing

    def restore_backup(self, backup: str | None = None, *, confirm: bool = True) -> None:
        """Close the project, restore it from a backup (the current state is backed up first; see
        core/store/restore.py), open it again."""
        from PySide6.QtWidgets import QFileDialog, QMessageBox

        from rageval_desktop.core.store.backup import backup_dir
        from rageval_desktop.core.store.backup import unverified as unverified_backup

        if self.project is None:
            return
        path = self.project.path
        if backup is None:
            backup, _ = QFileDialog.getOpenFileName(self.w.frame, "Restore from backup", str(backup_dir(path)),
                                                    "RAGEval backups (*.rageval)")
            if not backup:
                return
        unverified = unverified_backup(Path(backup))
        if confirm and QMessageBox.question(
                self.w.frame, "Restore from backup",
                f"Replace {path.name} with the backup {Path(backup).name}?\n\nThe project as it is now is backed up "
                "first, so this can be undone by restoring that backup."
                + (f"\n\nWarning: {unverified}." if unverified else "")) != QMessageBox.StandardButton.Yes:
            return
        chosen = Path(backup)

        def restored(report: RestoreReport) -> None:
            self.w.open_path(path)
            warned = "".join(f" — warning: {w}" for w in report.warnings)
            self.w.show_status(f"Restored from {chosen.name}; the state before is saved as "
                               f"{', '.join(Path(s).name for s in report.saved_current_as)}{warned}", 20_000)

        def restore_and_reopen() -> None:
            self.w.run_task(f"Restoring {path.name}", operations.restore_backup, path, chosen, on_done=restored)

        self.close(then=restore_and_reopen)
