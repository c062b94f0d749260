"""Entry point of the bundle (PyInstaller): the app, or the CLI twin when started as `rageval`.

The bundle ships one executable, `rageval-desktop`; `make package` puts a link to it named `rageval` beside it (on
Windows, `rageval-desktop.exe cli ...` does the same). multiprocessing's freeze_support comes first: the app's chart
process is this same executable, started again.
"""

import multiprocessing
import sys
from pathlib import Path


def _run() -> int:
    multiprocessing.freeze_support()
    if Path(sys.argv[0]).stem == "rageval" or sys.argv[1:2] == ["cli"]:
        if sys.argv[1:2] == ["cli"]:
            del sys.argv[1]
        from rageval_desktop.cli import main

        return main()
    from rageval_desktop.gui.app import main

    return main()


if __name__ == "__main__":
    raise SystemExit(_run())
