"""Entry point of the bundle (PyInstaller): the app, or the CLI twin when started as `rageval`.

The bundle ships one executable, `rageval-desktop`; `make package` puts a link to it named `rageval` beside it (on
Windows, `rageval-desktop.exe cli ...` does the same). multiprocessing's freeze_support comes first: the app's chart
process is this same executable, started again.
"""

import multiprocessing
import os
import sys
from pathlib import Path


def _qt_paths() -> None:
    """What PyInstaller's PySide6 run-time hook does, done here for the window only (the hook is left out of the
    bundle: it loaded QtCore at every start, the command line's too): Qt's plug-ins and QML where the bundle has
    them, and the embedded qt.conf when the bindings did not make one."""
    base = getattr(sys, "_MEIPASS", None)
    if base is None:
        return
    qt = os.path.join(base, "PySide6") if sys.platform.startswith("win") else os.path.join(base, "PySide6", "Qt")
    os.environ["QT_PLUGIN_PATH"] = os.path.join(qt, "plugins")
    os.environ["QML2_IMPORT_PATH"] = os.path.join(qt, "qml")
    try:
        from _pyi_rth_utils import qt as qt_rth_utils  # PyInstaller's own helper, present in a bundle
    except ImportError:
        return
    qt_rth_utils.create_embedded_qt_conf("PySide6", qt)


def _run() -> int:
    multiprocessing.freeze_support()
    if Path(sys.argv[0]).stem == "rageval" or sys.argv[1:2] == ["cli"]:
        if sys.argv[1:2] == ["cli"]:
            del sys.argv[1]
        from rageval_desktop.cli import main

        return main()
    _qt_paths()
    from rageval_desktop.gui.app import main

    return main()


if __name__ == "__main__":
    raise SystemExit(_run())
