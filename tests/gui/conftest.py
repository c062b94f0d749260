"""Every GUI test must leave no worker thread running and no active timer behind on a closed window."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_leaks(qapp):
    yield
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from rageval_desktop.gui import workers

    workers.pool().waitForDone(10_000)
    QApplication.processEvents()
    assert workers.active() == 0, "a worker outlived its test"
    leaked = [t.objectName() or type(t.parent()).__name__ for w in QApplication.topLevelWidgets()
              if not w.isVisible() for t in w.findChildren(QTimer) if t.isActive()]
    assert not leaked, f"active timers left on closed windows: {leaked}"
