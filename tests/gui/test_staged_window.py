"""The app's start shows its window before building it (`MainWindow(staged=True)`): the first paint needs neither the
pages nor the menus, nor the modules they import; a project asked for meanwhile opens once the window is built."""

from __future__ import annotations

import shutil

import pytest

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
    assert w.rows.table.model().rowCount() == 72 and w.menuBar().actions()
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


WARM = """
import sys, time
from PySide6.QtWidgets import QApplication
from rageval_desktop.core.store.project import Project
from rageval_desktop.core.judges.registry import add_judge
from rageval_desktop.gui.main_window import MainWindow
path, llm = sys.argv[1], sys.argv[2] == "llm"
with Project.create(path) as p:
    if llm:
        add_judge(p, "grader", "correctness", "llm", model="m", base_url="http://127.0.0.1:9/v1")
    else:
        add_judge(p, "f1", "correctness", "lexical")
app = QApplication([])
w = MainWindow()
w.show()
opened = []
w.project_opened.connect(opened.append)
w.open_path(path)
deadline = time.monotonic() + 6
while time.monotonic() < deadline and not (opened and "openai" in sys.modules):
    app.processEvents()
    time.sleep(0.01)
print("opened" if opened else "not opened", "openai" in sys.modules)
w.close_project()
"""


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["llm", "lexical"])
def test_a_project_with_a_model_judge_warms_the_client_after_it_opens(tmp_path, kind):
    """A judge job started from the window starts its calls at once: with an active judge that calls a model, the
    client library is imported on a thread a little after the project opens — and not without one."""
    import os
    import subprocess
    import sys

    from tests.conftest import REPO

    result = subprocess.run([sys.executable, "-c", WARM, str(tmp_path / "p.rageval"), kind], capture_output=True,
                            text=True, timeout=120, cwd=REPO, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split()[-2:] == (["opened", "True"] if kind == "llm" else ["opened", "False"])


FIRST_PAINT = """
import sys
BUILD_ONLY = ("QHeaderView", "QTableView", "QComboBox", "QFileDialog", "QMessageBox", "QListWidgetItem")
EVENTS = ("QDragEnterEvent", "QDropEvent", "QKeySequence")
import PySide6.QtCore as QtCore
from PySide6.QtCore import QSettings
from rageval_desktop.core.base.paths import user_data_dir
from rageval_desktop.gui import app as gui_app
from rageval_desktop.gui.appearance import SEEN_KEY
if sys.argv[1] != "none":
    QSettings(str(user_data_dir() / "settings.ini"), QSettings.Format.IniFormat).setValue(SEEN_KEY, sys.argv[1])
class Probe(gui_app.MainWindow):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.built.connect(lambda: print("built", "Qt" in QtCore.__dict__, flush=True))
        self.built.connect(lambda: QtCore.QTimer.singleShot(0, gui_app.QApplication.instance().quit))
    def showEvent(self, event):
        super().showEvent(event)
        print("shown", "Qt" in QtCore.__dict__, flush=True)
        import PySide6.QtGui as QtGui, PySide6.QtWidgets as QtWidgets
        made = [n for m, names in ((QtWidgets, BUILD_ONLY), (QtGui, EVENTS)) for n in names if n in m.__dict__]
        print("made before the paint:", *made, flush=True)
gui_app.MainWindow = Probe
gui_app.main([])
print("seen", QSettings(str(user_data_dir() / "settings.ini"), QSettings.Format.IniFormat).value(SEEN_KEY))
"""


@pytest.mark.parametrize("seen", ["light", "dark", "none"])
def test_the_first_paint_does_not_ask_qt_for_the_colour_scheme_once_one_was_seen(tmp_path, seen):
    """Asking Qt for the system's colour scheme materialises PySide6's whole `Qt` namespace (15 ms, a tenth of the
    start): the first paint takes the scheme seen last time, and the built window asks (and remembers the answer).
    The first start ever asks before the paint. The offscreen platform's scheme is not dark. And PySide6 makes a
    widget class as it is first named: the classes only the build and the dialogs use (8 ms) are not made before."""
    import os
    import subprocess
    import sys

    from tests.conftest import REPO

    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "RAGEVAL_DATA_DIR": str(tmp_path)}
    result = subprocess.run([sys.executable, "-c", FIRST_PAINT, seen], capture_output=True, text=True, timeout=60,
                            cwd=REPO, env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.split("\n")
    assert lines[:4] == [f"shown {seen == 'none'}", "made before the paint:", "built True", "seen light"], result.stdout


def test_a_theme_that_follows_the_system_is_put_right_once_the_window_is_built(qtbot):
    """The first paint took a remembered dark scheme; the system's is light: the built window turns light and
    remembers light. A theme the user chose stays as chosen."""
    from PySide6.QtGui import QPalette
    from PySide6.QtWidgets import QApplication

    from rageval_desktop.gui import appearance
    from rageval_desktop.gui.main_window import MainWindow

    prefs = appearance.settings()
    app = QApplication.instance()
    try:
        prefs.setValue("theme", "system")
        prefs.setValue(appearance.SEEN_KEY, "dark")
        appearance.apply_appearance(first_paint=True)
        assert appearance.is_dark() and app.palette().color(QPalette.ColorRole.Window).name() == "#202124"
        w = MainWindow(staged=True)
        qtbot.addWidget(w)
        w.show()
        qtbot.waitUntil(lambda: w.ready, timeout=5_000)
        assert not appearance.is_dark() and app.palette().color(QPalette.ColorRole.Window).name() != "#202124"
        assert prefs.value(appearance.SEEN_KEY) == "light"
        w.set_theme("dark")                                 # the user's choice: the system's scheme does not matter
        w.follow_system()
        assert appearance.is_dark()
        close_window(qtbot, w)
    finally:
        prefs.setValue("theme", "system")
        appearance.apply_appearance()
