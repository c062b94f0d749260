"""Every GUI test must leave no worker thread running and no active timer behind on a closed window."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _no_leaks(qapp):
    from PySide6.QtWidgets import QApplication

    if not QApplication.instance().styleSheet():  # windows under test wear the app's style sheet, as users see them
        from rageval_desktop.gui.appearance import apply_appearance

        apply_appearance()
    yield
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from rageval_desktop.gui import workers

    workers.wait_all(30)
    QApplication.processEvents()
    assert workers.active() == 0, "a worker outlived its test"
    leaked = [t.objectName() or type(t.parent()).__name__ for w in QApplication.topLevelWidgets()
              if not w.isVisible() for t in w.findChildren(QTimer) if t.isActive()]
    assert not leaked, f"active timers left on closed windows: {leaked}"


def close_window(qtbot, w) -> None:
    """Close a window the way a user does; closing a project finishes on a thread, then the window closes."""
    w.close()

    from rageval_desktop.gui import workers

    def closed() -> bool:
        try:
            shut = not w.isVisible() and w.closing == 0
        except RuntimeError:  # the window deleted itself on close
            shut = True
        return shut and workers.active() == 0

    qtbot.waitUntil(closed, timeout=30_000)


def open_window(qtbot, path: Path):
    """A main window, shown, with the project at `path` open."""
    from rageval_desktop.gui.main_window import MainWindow

    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    with qtbot.waitSignal(w.project_opened, timeout=20_000):
        w.open_path(path)
    settle(qtbot, w)
    return w


def settle(qtbot, w) -> None:
    """Wait until the table shows its newest listing: filters, sorts and the table of a run chosen are read off the
    GUI thread (the old listing stays painted meanwhile)."""
    qtbot.waitUntil(lambda: not w.rows.rows_pending, timeout=30_000)


@pytest.fixture
def window(qtbot, demo_file, tmp_path):
    """The window on a fresh copy of the demo project; closed (and checked for leaks) after the test."""
    copy = tmp_path / "demo.rageval"
    shutil.copy(demo_file, copy)
    w = open_window(qtbot, copy)
    yield w
    close_window(qtbot, w)


def save_shots(qtbot, widget, name: str) -> None:
    """With RAGEVAL_SCREENSHOT_DIR set: `name`.png and `name`-dark.png of the widget, light and dark themes."""
    import os

    from PySide6.QtWidgets import QApplication

    from rageval_desktop.gui.appearance import apply_appearance, settings

    shots = os.environ.get("RAGEVAL_SCREENSHOT_DIR")
    if not shots:
        return
    QApplication.processEvents()   # the repolish lands before the grab
    widget.grab().save(str(Path(shots) / f"{name}.png"))
    before = settings().value("theme", "system")
    settings().setValue("theme", "dark")
    apply_appearance()
    QApplication.processEvents()   # the repolish lands before the grab
    widget.grab().save(str(Path(shots) / f"{name}-dark.png"))
    settings().setValue("theme", before)
    apply_appearance()


def visit(window, qtbot, key: str, read: str) -> None:
    """Go to a page and wait for its read named `read` (pages read their lists off the GUI thread)."""
    with qtbot.waitSignal(window.read_finished, timeout=30_000, check_params_cb=lambda page: page == read):
        window.select_nav(key)


def reread(window, qtbot, page, read: str) -> None:
    """A page's refresh, waited for until its read named `read` has landed."""
    with qtbot.waitSignal(window.read_finished, timeout=30_000, check_params_cb=lambda name: name == read):
        page.refresh(window.run_names())


def select_row(window, qtbot, row: int) -> None:
    """Select a row of the run table and wait for its detail (read on the read lane)."""
    table = window.rows.table
    with qtbot.waitSignal(window.rows.row_shown, timeout=30_000,
                          check_params_cb=lambda i: i == table.model().row_id(row)):
        if table.currentIndex().row() == row:      # already current: no selection change to ask for it again
            window.rows.on_row(table.currentIndex())
        else:
            table.selectRow(row)
