"""Keypress to the next row drawn on the review screen (goal <= 50 ms): 40 ratings on the demo project.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_review.py
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtCore import QEventLoop  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

from rageval_desktop.core.demo import write_demo_project  # noqa: E402
from rageval_desktop.core.review.sampling import create_sample  # noqa: E402
from rageval_desktop.core.store.project import Project  # noqa: E402
from rageval_desktop.gui.app import make_app  # noqa: E402
from rageval_desktop.gui.main_window import MainWindow, settings  # noqa: E402


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = write_demo_project(Path(tmp) / "demo.rageval")
        with Project.open(path) as p:
            create_sample(p, "v2", "correctness", size=40, seed=1)
        settings().setValue("reviewer", "bench")
        app = make_app()
        w = MainWindow()
        w.show()
        loop = QEventLoop()
        w.project_opened.connect(lambda _p: loop.quit())
        w.open_path(path)
        loop.exec()
        opened = QEventLoop()
        w.read_finished.connect(lambda page: opened.quit() if page == "review" else None)
        w.select_nav("review")
        opened.exec()                           # the desk's sample, read on the read lane
        view = w.page("review")
        view.setFocus()
        drawn, saved = [], []
        for i in range(40):
            done = QEventLoop()
            view.rated.connect(done.quit)
            t0 = time.perf_counter()
            QTest.keyClicks(view, str(1 + i % 5))   # the desk moves on as the key is pressed (gui/models/desk.py)
            view.repaint()                      # the next row is drawn
            drawn.append((time.perf_counter() - t0) * 1000)
            done.exec()                         # the rating is committed behind it
            saved.append((time.perf_counter() - t0) * 1000)
            view.rated.disconnect(done.quit)
        w.close()
        app.processEvents()
    for name, times in (("keypress -> next row drawn", drawn), ("keypress -> rating committed", saved)):
        times.sort()
        print(f"{name}, 40 ratings: median {statistics.median(times):.1f} ms, "
              f"p95 {times[int(0.95 * len(times)) - 1]:.1f} ms, max {times[-1]:.1f} ms")


if __name__ == "__main__":
    main()
