"""The contrast table: per page and theme, the lowest contrast of any text on it (measured on rendered pixels,
tests/support/contrast.py) and what it is. WCAG AA: 4.5:1 for text, 3:1 for large text and icons.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_contrast.py [PROJECT]   # default: a fresh demo copy
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PySide6.QtWidgets import QApplication  # noqa: E402

from rageval_desktop.core.demo import write_demo_project  # noqa: E402
from rageval_desktop.gui.appearance import apply_appearance  # noqa: E402
from rageval_desktop.gui.main_window import MainWindow  # noqa: E402
from rageval_desktop.gui.pages import PAGES  # noqa: E402
from rageval_desktop.gui.prefs import settings  # noqa: E402
from tests.support.contrast import lowest  # noqa: E402


def main() -> None:
    app = QApplication.instance() or QApplication([])
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else write_demo_project(Path(tempfile.mkdtemp()) / "d.rageval")
    before = settings().value("theme", "system")
    print(f"{'page':<10} {'theme':<6} {'lowest':>7} {'needed':>6}  what")
    for theme in ("light", "dark"):
        settings().setValue("theme", theme)
        apply_appearance()
        w = MainWindow()
        w.resize(1280, 720)
        w.show()
        w.open_path(path)
        for _ in range(50):
            app.processEvents()
            time.sleep(0.02)
        w.notice_bar.show_notice("A notice, with its close button", tone="ok")
        for key in ["golden", *[p.key for p in PAGES]]:
            w.select_nav(key)
            for _ in range(15):
                app.processEvents()
                time.sleep(0.02)
            w.show_status("saved 12:00 (record integrity check)", 60_000)
            found = lowest(w, key)
            if found:
                print(f"{key:<10} {theme:<6} {found.contrast:>7.2f} {found.needed:>6}  {found.where}: {found.text!r} "
                      f"({found.foreground} on {found.background})")
        w.close()
    settings().setValue("theme", before)


if __name__ == "__main__":
    main()
