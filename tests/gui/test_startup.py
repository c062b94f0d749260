"""Start-up: the first window appears without torch, sentence-transformers, pandas, faiss or matplotlib."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import REPO

HEAVY = ["torch", "sentence_transformers", "pandas", "faiss", "matplotlib", "sqlite_utils", "openai"]

SCRIPT = textwrap.dedent("""
    import json, sys, time
    t0 = time.perf_counter()
    from rageval_desktop.gui import app as gui_app
    from PySide6.QtCore import QTimer
    seen = {}
    real_make = gui_app.MainWindow
    class Probe(real_make):
        def showEvent(self, event):
            super().showEvent(event)
            seen.setdefault("first_window_s", time.perf_counter() - t0)
            seen.setdefault("loaded_at_window", [m for m in HEAVY if m in sys.modules])
        def grab(self, *args):
            from PySide6.QtWidgets import QApplication
            model = self.rows.table.model()
            seen["rows_at_grab"] = model.rowCount() if model is not None else None
            seen["icon_at_grab"] = not QApplication.windowIcon().isNull()   # set after the first paint
            return super().grab(*args)
    gui_app.MainWindow = Probe
    code = gui_app.main([sys.argv[1], "--screenshot", sys.argv[2]])
    seen["loaded_after_open"] = [m for m in HEAVY if m in sys.modules]
    seen["exit"] = code
    print(json.dumps(seen))
""")


def test_first_window_has_no_heavy_imports(demo_file, tmp_path):
    shot = tmp_path / "shot.png"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    result = subprocess.run([sys.executable, "-c", f"HEAVY = {HEAVY!r}\n" + SCRIPT, str(demo_file), str(shot)],
                            capture_output=True, text=True, timeout=120, cwd=REPO, env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen["exit"] == 0
    assert seen["loaded_at_window"] == []
    assert seen["loaded_after_open"] == []   # opening and showing a project needs none of them either
    assert shot.stat().st_size > 10_000      # a real picture of the window was written
    assert seen["rows_at_grab"] == 72        # after the table's listing, read off the GUI thread, arrived
    assert seen["icon_at_grab"]              # the window icon, set once the window is built
    from tests.core.test_integrity import _sessions

    assert _sessions(demo_file) == []        # was: the screenshot exit left the project open (the next open checked)


@pytest.mark.slow     # an app started twice in subprocesses (about 8 s)
def test_a_computed_page_is_grabbed_once_settled_never_mid_read(demo_file, tmp_path):
    """Issue 48: the gallery showed Compare blank ("Comparing…"): the grab followed the project's opening, not the
    page's numbers. The screenshot waits for the page's read and for no label saying a read is under way."""
    probe = textwrap.dedent("""
        import json, sys
        from rageval_desktop.gui import app as gui_app
        seen = {}
        real = gui_app.MainWindow
        class Probe(real):
            def grab(self, *args):
                seen["unsettled"] = gui_app.unsettled(self)
                page = self.page(sys.argv[3])
                seen["has_result"] = getattr(page, "result", None) is not None or bool(getattr(page, "results", None))
                return super().grab(*args)
        gui_app.MainWindow = Probe
        seen["exit"] = gui_app.main([sys.argv[1], "--view", sys.argv[3], "--size", "1024x768",
                                     "--screenshot", sys.argv[2]])
        print(json.dumps(seen, default=bool))
    """)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HF_HUB_OFFLINE": "1"}
    for view in ("compare", "audit"):
        shot = tmp_path / f"{view}.png"
        result = subprocess.run([sys.executable, "-c", probe, str(demo_file), str(shot), view], capture_output=True,
                                text=True, timeout=120, cwd=REPO, env=env)
        assert result.returncode == 0, result.stderr[-2000:]
        seen = json.loads(result.stdout.strip().splitlines()[-1])
        assert seen == {"unsettled": [], "has_result": True, "exit": 0}, (view, seen)
        assert shot.stat().st_size > 10_000


UNREAD = textwrap.dedent("""
    import inspect, json
    read = []
    asked = inspect.getsource

    def spy(obj):
        read.append(getattr(obj, "__name__", "?"))
        return asked(obj)

    inspect.getsource = spy      # what PySide6's __feature__ hook reads of each module imported after it
    from rageval_desktop.gui import app
    print(json.dumps(sorted(n for n in read if n.startswith("rageval_desktop") and n != "rageval_desktop.gui.boot")))
""")


def test_pyside_reads_none_of_our_sources_on_the_way_to_the_window():
    """Issue 79.3: PySide6's hook read the whole source of every module imported after it (inspect.getsource) to see
    whether it names PySide6 — about thirty of ours before the first window, 3-4 ms of the start. gui/boot.py answers
    for ours; before it, this listed rageval_desktop.gui.main_window and the rest."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    result = subprocess.run([sys.executable, "-c", UNREAD], capture_output=True, text=True, timeout=120, cwd=REPO,
                            env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []
