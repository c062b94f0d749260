"""The app's start shows its window before building it (`MainWindow(staged=True)`): the first paint needs neither the
pages nor the menus, nor the modules they import; a project asked for meanwhile opens once the window is built."""

from __future__ import annotations

import shutil

from tests.gui.conftest import close_window, settle


def test_a_staged_window_is_built_after_its_first_paint_and_opens_what_was_asked_before(qtbot, demo_file, tmp_path):
    from rageval_desktop.gui.main_window import MainWindow

    copy = tmp_path / "demo.rageval"
    shutil.copy(demo_file, copy)
    w = MainWindow(staged=True)
    qtbot.addWidget(w)
    assert not w.ready and not hasattr(w, "table")       # nothing built yet
    w.open_path(copy)                                     # asked before the build: waits for it
    built = []
    w.built.connect(lambda: built.append(True))
    w.show()
    with qtbot.waitSignal(w.project_opened, timeout=20_000):
        pass
    settle(qtbot, w)
    assert w.ready and built == [True]
    assert w.table.model().rowCount() == 72 and w.menuBar().actions()
    close_window(qtbot, w)


def test_a_staged_window_never_shown_is_built_anyway_and_closes_cleanly(qtbot):
    from rageval_desktop.gui.main_window import MainWindow

    w = MainWindow(staged=True)
    qtbot.addWidget(w)
    qtbot.waitUntil(lambda: w.ready, timeout=2_000)        # no paint: the fallback timer builds it
    close_window(qtbot, w)
    early = MainWindow(staged=True)                        # closed before it is built: no error, nothing left
    qtbot.addWidget(early)
    early.show()
    early.close()
    qtbot.wait(300)                                        # past the fallback timer
    assert not early.isVisible() and not early.ready
