"""`rageval-desktop [PROJECT] [--demo] [--screenshot PATH]`.

Start-up imports only Qt and the store: torch, sentence-transformers, pandas, faiss and matplotlib load
later, inside workers (tests/gui/test_startup.py checks it).
"""

from __future__ import annotations

import argparse
import re
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QApplication, QMainWindow, QWidget

from rageval_desktop.gui import boot  # noqa: F401  (first: PySide6 no longer reads our modules' sources)
from rageval_desktop.gui.main_window import MainWindow
from rageval_desktop.gui.pages import BY_KEY

if TYPE_CHECKING:
    from rageval_desktop.core.store.project import Project


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="rageval-desktop", description="RAGEval Desktop")
    parser.add_argument("project", nargs="?", help="a .rageval project to open, or a .ragevalpack review pack")
    parser.add_argument("--demo", action="store_true", help="open the bundled demo project (made on first use)")
    parser.add_argument("--screenshot", metavar="PNG", help="render the main window to PNG and exit")
    parser.add_argument("--size", metavar="WxH", help="window size, e.g. 1280x720 (for screenshots)")
    parser.add_argument("--run", metavar="NAME", help="show this run first (default: the golden set)")
    parser.add_argument("--slice", metavar="TAG", help="show this slice first")
    parser.add_argument("--view", choices=list(BY_KEY), help="open this view first")
    return parser.parse_args(argv)


def make_app(argv: Sequence[str] = (), *, icon: bool = True, first_paint: bool = False) -> QApplication:
    """The application, its style and theme; `icon=False` leaves the window icon to `set_icon` (the app's start sets
    it after the first paint: 4 ms); `first_paint`: a theme that follows the system takes the scheme seen last time,
    and the window checks it once built (appearance.system_dark)."""
    from rageval_desktop.core.base.imports import freeze_after

    # what the first large imports leave (pandas, openai) is frozen out of the cycle collector's full passes, which
    # held the interpreter 95-130 ms on a worker thread, the window with it (core.base.imports)
    freeze_after()
    found = QApplication.instance()
    app = found if isinstance(found, QApplication) else QApplication([sys.argv[0], *argv])
    app.setApplicationName("RAGEval Desktop")
    app.setOrganizationName("RAGEval")
    app.setStyle("Fusion")
    if icon:
        set_icon(app)
    from rageval_desktop.gui.appearance import apply_appearance

    apply_appearance(first_paint=first_paint)
    return app


def set_icon(app: QApplication) -> None:
    from PySide6.QtGui import QIcon

    from rageval_desktop.core.base.paths import resources_dir

    icon = QIcon()
    for size in (16, 32, 48, 64, 128, 256, 512):
        path = resources_dir() / "icons" / f"rageval-{size}.png"
        if path.exists():
            icon.addFile(str(path))
    app.setWindowIcon(icon)


PLACEHOLDER = re.compile(r"\b[A-Za-z]+ing…|^…$")    # "Comparing…", "listing…", a cell still read: not settled
SETTLE_MS = 20_000


def unsettled(window: QWidget) -> list[str]:
    """The visible labels and buttons that still say a read is under way ("Comparing…", "listing…"), and charts drawn
    for a pane of another size (the dashboard's slice names were cut off in the gallery at 1024): a screenshot of
    them shows a state the live app passes through, not one it settles in."""
    from PySide6.QtWidgets import QAbstractButton, QLabel

    found = []
    for label in window.findChildren(QLabel):
        if label.isVisible() and PLACEHOLDER.search(label.text()):
            found.append(label.text())
        stale = getattr(label, "stale", None)        # a chart drawn for another size: its redraw is on the way
        if callable(stale) and stale():
            found.append(f"a chart drawn for another pane ({label.objectName()})")
    for button in window.findChildren(QAbstractButton):
        if button.isVisible() and PLACEHOLDER.search(button.text()):
            found.append(button.text())
    return found


def screenshot_when_ready(window: MainWindow, path: Path, app: QApplication, computed_view: str | None = None) -> None:
    """Grab after the project is open and its table listed (read off the GUI thread) and painted, or, for a computed
    view, after its numbers arrive — and once no label says a read is still under way ("Comparing…": the gallery
    showed such pages blank); exit 1 if anything failed or never settled, so scripts notice."""
    started = time.monotonic()

    def grab() -> None:
        if window.last_error:      # a page's read failed on its lane (its error was shown): no picture of that page
            print(f"error: {window.last_error}; no screenshot was written", file=sys.stderr)
            app.exit(1)
            return
        waiting = unsettled(window)
        if waiting and (time.monotonic() - started) * 1000 < SETTLE_MS:
            QTimer.singleShot(200, grab)
            return
        if waiting:
            print(f"error: the window never settled ({'; '.join(waiting[:3])}); no screenshot was written",
                  file=sys.stderr)
            app.exit(1)
            return
        window.grab().save(str(path))
        print(f"screenshot written to {path}")
        app.exit(0)

    def finished(kind: str) -> None:
        if kind == "failed":      # said, not only exited with: a script sees why (was: exit 1 in silence)
            print(f"error: {getattr(window, 'last_error', '') or 'the project could not be opened'}; no screenshot "
                  "was written", file=sys.stderr)
            app.exit(1)
        elif kind == "view" and window.project is not None:
            # after the page's numbers, its chart is drawn again for its final pane (debounced 250 ms): wait for it
            # (a task finishing — the project opening — is not the page's numbers: it grabbed "Comparing…")
            QTimer.singleShot(700, grab)

    if not computed_view:
        window.rows_shown.connect(lambda _n: QTimer.singleShot(150, grab))
    else:       # a page whose numbers never arrive (a read that failed before it began): said, not waited on for ever
        timeout = QTimer(window)
        timeout.setSingleShot(True)
        timeout.timeout.connect(lambda: (print(f"error: the {computed_view} page's numbers never arrived; no "
                                               "screenshot was written", file=sys.stderr), app.exit(1)))
        timeout.start(3 * SETTLE_MS)
        window.read_finished.connect(lambda page: timeout.stop() if page == computed_view else None)
    window.task_finished.connect(finished)
    window.read_finished.connect(lambda page: finished("view") if page == computed_view else None)


def open_pack(path: str, args: argparse.Namespace, app: QApplication) -> int:
    """A review pack opens in the review-only window; a file that is not a pack says why and exits 1."""
    from rageval_desktop.core.base.errors import RagevalError
    from rageval_desktop.gui.pack_window import PackWindow

    try:
        window = PackWindow(path)
    except RagevalError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    catch_uncaught(window)
    if args.size:
        window.resize(*args.size)
    window.show()
    close_on_signals(window, app)
    if args.screenshot:
        QTimer.singleShot(300, lambda: (window.grab().save(args.screenshot), app.exit(0)))
    return app.exec()


def close_on_signals(window: QMainWindow, app: QApplication) -> QTimer:
    """Ctrl+C in the terminal (SIGINT) and SIGTERM close the window as File › Quit does — the project closed
    cleanly, no unclean-shutdown check on the next open (was: Ctrl+C did nothing until some Python code ran, and a
    kill left the session behind). Qt's event loop does not run Python's signal handlers: a timer gives the
    interpreter a turn every 200 ms."""
    import signal

    def stop(signum: int, _frame: object) -> None:
        QTimer.singleShot(0, window.close)
        # a second signal while the project closes: leave now (the session record tells the next open to check)
        signal.signal(signum, signal.SIG_DFL)

    for which in (signal.SIGINT, signal.SIGTERM):
        signal.signal(which, stop)
    wake = QTimer(app)
    wake.timeout.connect(lambda: None)
    wake.start(200)
    return wake


QUIET_AFTER_S = 5.0    # an unexpected failure explained at most this often (one failure can repeat with every paint)


class Shows(Protocol):
    """A window that can say what went wrong (MainWindow, PackWindow), with the project it has open, if any."""

    @property
    def project(self) -> Project | None: ...
    def show_error(self, message: str, details: str = "") -> None: ...


def catch_uncaught(window: Shows, then: Callable[[str], object] | None = None) -> None:
    """An exception raised on the GUI thread outside any worker — a page's refresh, a slot — was printed by Qt's
    event loop to a terminal nobody sees, and the page stayed half-drawn in silence. Now its traceback goes to a crash
    log and the window says so — or, in a file whose values break its rules (a setting no longer JSON, a text
    stored as bytes), that damage with how to restore. An exception in a plain thread is carried to the GUI thread and
    said the same way."""
    last = [0.0]

    def hook(kind: type[BaseException], exc: BaseException, tb: object) -> None:
        if issubclass(kind, KeyboardInterrupt):
            sys.__excepthook__(kind, exc, tb)     # type: ignore[arg-type]
            return
        from rageval_desktop.core.base.errors import RagevalError, crash_log
        from rageval_desktop.core.store import integrity

        if time.monotonic() - last[0] < QUIET_AFTER_S:     # the same failure again (a paint): said once, not read
            print(f"error: {type(exc).__name__}: {str(exc)[:300]}", file=sys.stderr)     # the file again each time
            return
        last[0] = time.monotonic()
        project = window.project
        if isinstance(exc, RagevalError):         # said for the user (a damaged judge's settings, a refused file)
            message, details = exc.for_gui(), ""
        elif project and (damage := integrity.failure_damage(project.path, exc)):
            message, details = damage, ""
        else:
            log = crash_log(exc)
            message = (f"Something went wrong: {type(exc).__name__}: {str(exc)[:300]} — the page may be incomplete; "
                       f"please report it with {log}")
            details = Path(log).read_text(encoding="utf-8", errors="replace") if Path(log).is_file() else ""
        print(f"error: {message}", file=sys.stderr)
        window.show_error(message, details)
        if then is not None:
            then(message)

    sys.excepthook = hook
    relay = _Relay(hook)

    def in_a_thread(args: threading.ExceptHookArgs) -> None:
        """An exception in a plain thread (not a worker: they report their own) was printed to stderr only; it is
        said as the GUI thread's are, on the GUI thread."""
        if args.exc_value is None or issubclass(args.exc_type, SystemExit):
            return
        try:
            relay.raised.emit((args.exc_type, args.exc_value, args.exc_traceback))
        except RuntimeError:        # the window (and the relay) are gone: the process is ending
            threading.__excepthook__(args)

    threading.excepthook = in_a_thread


class _Relay(QObject):
    """Carries an exception from a plain thread to the hook, on the GUI thread (the thread that made the relay)."""

    raised = Signal(object)

    def __init__(self, hook: Callable[[type[BaseException], BaseException, object], None]) -> None:
        super().__init__(QApplication.instance())
        self.raised.connect(lambda found: hook(*found))


def main(argv: Sequence[str] | None = None) -> int:
    # the chart process (gui/chart_process.py) in a frozen bundle; elsewhere freeze_support does nothing, and
    # importing multiprocessing took 10 ms before the first window
    if getattr(sys, "frozen", False):
        import multiprocessing

        multiprocessing.freeze_support()
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.size:
        try:
            width, height = (int(v) for v in args.size.lower().split("x"))
        except ValueError:
            print(f"error: --size takes WIDTHxHEIGHT, e.g. 1280x720 (got '{args.size}')", file=sys.stderr)
            return 2
        args.size = (width, height)
    pack = bool(args.project and args.project.endswith(".ragevalpack"))
    from rageval_desktop.gui import window_libraries

    lacking = window_libraries.missing()       # Qt aborts the process without them: said first, in words
    if lacking:
        print(window_libraries.explain(lacking), file=sys.stderr)
        return 1
    app = make_app(icon=pack, first_paint=not pack)
    if pack:
        return open_pack(args.project, args, app)
    window = MainWindow(staged=True)   # shown first, built right after its first paint
    # a screenshot of a page that failed is no screenshot: the script is told, and the process does not wait on
    catch_uncaught(window, then=(lambda _m: (print("error: no screenshot was written", file=sys.stderr), app.exit(1)))
                   if args.screenshot else None)
    if args.size:
        window.resize(*args.size)
    window.show()
    window.when_built(lambda: set_icon(app))
    window.when_built(lambda: close_on_signals(window, app))   # (importing signal: 0.5 ms before the paint)
    if args.run or args.slice:
        window.project_opened.connect(lambda _p: window.select(run=args.run, slice_tag=args.slice))
    if args.view:
        window.project_opened.connect(lambda _p: window.select_nav(args.view))
    if args.screenshot:
        target = Path(args.screenshot)
        if args.project or args.demo:
            computed = args.view in ("dashboard", "compare", "failures", "audit", "team", "judges")
            screenshot_when_ready(window, target, app, args.view if computed else None)
        else:
            window.when_built(lambda: QTimer.singleShot(150, lambda: (window.grab().save(str(target)), app.exit(0))))
    if args.project:
        window.open_path(args.project)
    elif args.demo:
        window.open_demo()
    code = app.exec()
    if window.project is not None:
        # a screenshot exits with the project open: close it cleanly (a session left behind would make the next
        # open check every page)
        from rageval_desktop.gui import workers

        workers.wait_all(30)
        window.project.close()
    return code


if __name__ == "__main__":
    raise SystemExit(main())
