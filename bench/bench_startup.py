"""Start to first window, and to the demo project's first table, in fresh processes (median of N).

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_startup.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

PROBE = textwrap.dedent("""
    import json, sys, time
    t0 = time.perf_counter()
    from PySide6.QtCore import QTimer
    from rageval_desktop.gui import app as gui_app
    marks = {}
    class Probe(gui_app.MainWindow):
        def showEvent(self, event):
            super().showEvent(event)
            marks.setdefault("first_window_s", time.perf_counter() - t0)
    gui_app.MainWindow = Probe
    app = gui_app.make_app()
    w = Probe()
    w.show()
    w.project_opened.connect(lambda p: (marks.setdefault("table_s", time.perf_counter() - t0), app.quit()))
    w.open_path(sys.argv[1])
    app.exec()
    print(json.dumps(marks))
""")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        demo = Path(tmp) / "demo.rageval"
        subprocess.run([sys.executable, "-m", "rageval_desktop", "demo", str(demo)], check=True, capture_output=True)
        marks = []
        for _ in range(args.runs):
            out = subprocess.run([sys.executable, "-c", PROBE, str(demo)], capture_output=True, text=True, check=True)
            marks.append(json.loads(out.stdout.strip().splitlines()[-1]))
    for key, label in (("first_window_s", "start to first window"), ("table_s", "start to demo table shown")):
        values = [m[key] for m in marks]
        print(f"{label}: median {statistics.median(values):.3f} s (min {min(values):.3f}, max {max(values):.3f}, "
              f"n={len(values)})")


if __name__ == "__main__":
    main()
