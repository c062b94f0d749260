"""What the objects the main window holds (its lanes, session, file, judging and golden actions) read of the window,
typed once as a Protocol: each object is checked against it, and MainWindow against it where it makes them (mypy over
the whole GUI). Nothing here is imported before the first paint."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from PySide6.QtCore import SignalInstance
    from PySide6.QtWidgets import (
        QLabel,
        QProgressBar,
        QPushButton,
        QStackedWidget,
        QStatusBar,
        QWidget,
    )

    from rageval_desktop.core.store.project import Project
    from rageval_desktop.gui.state import AppState, Page
    from rageval_desktop.gui.views.nav_list import NavKey, NavList
    from rageval_desktop.gui.views.notice_bar import NoticeBar
    from rageval_desktop.gui.views.rows_view import RowsView


P = TypeVar("P", bound="Page")
T = TypeVar("T")

class WindowHost(Protocol):
    # the window's signals (class attributes of MainWindow)
    task_finished: SignalInstance
    read_finished: SignalInstance
    job_finished: SignalInstance
    # its state and parts
    state: AppState
    events: Any                    # ProjectEvents: `changed` carries core's changes to the GUI thread
    nav: NavList
    pages: QStackedWidget
    rows: RowsView
    notice_bar: NoticeBar
    task_label: QLabel
    progress: QProgressBar
    cancel_button: QPushButton
    last_error: str

    @property
    def project(self) -> Project | None: ...
    @property
    def frame(self) -> QWidget: ...             # the window as a dialog's parent
    @property
    def busy(self) -> bool: ...
    def statusBar(self) -> QStatusBar: ...
    # what one object calls of another, or of the window
    def page(self, key: str) -> Page: ...
    def view(self, cls: type[P]) -> P: ...
    def built_page(self, key: str) -> Page | None: ...
    def select_nav(self, key: str) -> None: ...
    def current_key(self) -> NavKey | None: ...
    def run_names(self) -> list[str]: ...
    def open_path(self, path: str | Path) -> None: ...
    def cancel_work(self, *, detach: bool = False) -> None: ...
    def run_task(self, label: str, fn: Callable[..., T], *args: object,
                 on_done: Callable[[T], object] | None = None) -> object: ...
    def run_read(self, page: str, fn: Callable[..., T], *args: object, on_done: Callable[[T], object],
                 announce: bool = True) -> None: ...
    def show_error(self, message: str, details: str = "") -> None: ...
    def show_status(self, message: str, ms: int = 6000) -> None: ...
    def show_info(self, text: str) -> None: ...
    def reviewer(self, ask: bool = False, force: bool = False) -> str: ...


__all__ = ["WindowHost"]
