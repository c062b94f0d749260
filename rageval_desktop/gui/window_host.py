"""What the main window's action groups (WindowTasks, JudgingActions, GoldenActions) read of the window, typed once.

At run time `WindowHost` is `object`: the groups are plain classes mixed into MainWindow, and nothing here is imported
before the first paint. For the type checker it is a QMainWindow that declares the window's parts the groups use, so
that each group is checked against what MainWindow really has (mypy over the whole GUI; MainWindow defines every name
declared here, and a test holds that)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from PySide6.QtCore import SignalInstance
    from PySide6.QtWidgets import (
        QLabel,
        QListWidget,
        QMainWindow,
        QProgressBar,
        QPushButton,
        QStackedWidget,
        QWidget,
    )

    from rageval_desktop.core.jobs.spec import JobSpec
    from rageval_desktop.core.store.project import Project
    from rageval_desktop.gui.state import AppState
    from rageval_desktop.gui.views.notice_bar import NoticeBar
    from rageval_desktop.gui.views.rows_view import RowsView

    class WindowHost(QMainWindow):
        # the window's signals (class attributes of MainWindow)
        task_finished: SignalInstance
        read_finished: SignalInstance
        job_finished: SignalInstance
        # its state and parts
        project: Project | None
        state: AppState
        nav: QListWidget
        pages: QStackedWidget
        rows: RowsView
        notice_bar: NoticeBar
        task_label: QLabel
        progress: QProgressBar
        cancel_button: QPushButton
        rows_page: RowsView
        last_info: str
        _pages: dict[str, QWidget]
        _reads: dict[str, int]
        _task: Any
        _job: Any
        _backup: Any

        # what one group calls of another, or of the window
        def page(self, key: str) -> Any: ...
        def select_nav(self, key: str) -> None: ...
        def current_key(self) -> tuple | None: ...
        def run_names(self) -> list[str]: ...
        def open_path(self, path: str | Path) -> None: ...
        def _opened(self, project: Project) -> None: ...
        def restore_backup(self, backup: str | None = None, *, confirm: bool = True) -> None: ...
        def run_task(self, label: str, fn: Any, *args: Any, on_done: Any = None) -> Any: ...
        def run_read(self, page: str, fn: Any, *args: Any, on_done: Any, announce: bool = True) -> None: ...
        def show_error(self, message: str, details: str = "") -> None: ...
        def show_status(self, message: str, ms: int = 6000) -> None: ...
        def show_info(self, text: str) -> None: ...
        def reviewer(self, ask: bool = False, force: bool = False) -> str: ...
        def start_judging(self, run: str | None, judges: list[str] | None, spec: JobSpec | None = None, *,
                          batch: bool = False, job_id: int | None = None) -> None: ...
        def when_built(self, call: Callable[[], Any]) -> None: ...
else:
    WindowHost = object

__all__ = ["WindowHost"]
