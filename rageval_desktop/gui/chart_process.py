"""The app's charts, drawn in a process of their own, and the analysis pages' numbers, read there too.

matplotlib draws and encodes a figure in C++ while holding the interpreter lock: a forest plot of five metrics held
it for 80-155 ms at a time, and the window, which needs the lock to run any Python slot, stalled that long while a
worker drew (bench/bench_gui.py). A chart is therefore drawn by one long-lived child process (started on first
use, spawned: no Qt in it); the worker thread that asks waits for the PNG without the lock. When the child cannot
be started or dies, the chart is drawn in the asking thread as before: slower to the eye, never missing.

The same child computes what the Dashboard, Compare, Failures, Review, Audit and Team pages show, the gate's verdict
and the upkeep's reads (`read`, `call`; the functions are `page_numbers`'), on the project opened there for reading:
pandas, scipy and a page's transient frames (hundreds of MB at 200,000 rows) live and die in it, and the window holds
only the numbers it shows (issue 50's desk memory). What the child holds it gives back after each read.
"""

from __future__ import annotations

import atexit
import sys
import threading
import types
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from rageval_desktop.core.base.context import TaskContext
    from rageval_desktop.core.reports.plots import Region
    from rageval_desktop.core.store.project import Project

T = TypeVar("T")

_POOL: ProcessPoolExecutor | None = None
_LOCK = threading.Lock()
_BROKEN = False
_CHILD = False      # in the child: what it is asked to draw or read, it does itself
IDLE_S = 60.0       # the child ends after this long without work (its libraries, 330 MB, given back); the next ask
_asked = 0          # starts another. Asks under way (the child is not ended under them)
_idle: threading.Timer | None = None
on_lost: Callable[[str], object] | None = None     # told once, in words, when the child cannot be had (the window)
_LOST = ""


def _draw(kind: str, payload: dict[str, Any], size: tuple[int, int], dark: bool) -> tuple[bytes, list[Region]]:
    """Runs in the child (and as the fallback): (PNG, the clickable regions)."""
    from rageval_desktop.core.reports.plots import Theme, box_plot, delta_chart, slice_bars

    regions: list[Region] = []
    if kind == "bars":
        png = slice_bars(payload, theme=Theme(dark), size=size, regions=regions)
    elif kind == "boxes":
        png = box_plot(payload, theme=Theme(dark), size=size)
    elif kind == "deltas":
        png = delta_chart(payload, theme=Theme(dark), size=size, regions=regions)
    else:
        raise ValueError(f"no chart of kind {kind!r}")
    return png, regions


def _watch_parent() -> None:
    """Runs in the child as it starts: it ignores Ctrl+C (the app's to handle) and ends itself when the app is
    gone, however the app ended. A worker of a process pool waits on a queue whose writing end it holds too, so it
    never reads the end of it: after the app was killed (or exited before the pool's shutdown reached it), the child
    stayed, for good."""
    import multiprocessing
    import os
    import signal
    import threading
    from multiprocessing.connection import wait

    # Ctrl+C in the terminal reaches every process of the app: the app closes (and ends this one); this one printed
    # a KeyboardInterrupt traceback of its own as it died
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    global _CHILD
    _CHILD = True
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        wait([parent.sentinel])
        os._exit(0)

    threading.Thread(target=watch, name="watch-app", daemon=True).start()


def _warm() -> bool:
    import rageval_desktop.core.metrics.dashboard  # noqa: F401 - pandas and the summaries, imported once, ahead
    import rageval_desktop.core.reports.plots  # noqa: F401 - matplotlib and the plots

    return True


def _pool(take: bool = False) -> ProcessPoolExecutor | None:
    """The child's pool, started if need be; `take`: for an ask, counted as under way until `_done`."""
    global _POOL, _asked
    with _LOCK:
        if _POOL is None and not _BROKEN and not _CHILD:
            import multiprocessing

            _POOL = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                                        initializer=_watch_parent)
            try:
                with _bare_main():      # the pool starts its one child on its first submit: now, bare
                    _POOL.submit(int)
            except (BrokenProcessPool, RuntimeError, OSError):
                pass                    # the asker's own submit meets the same failure and gives up, saying why
        if take and _POOL is not None:
            _asked += 1
            if _idle is not None:
                _idle.cancel()
        return _POOL


def _done() -> None:
    """An ask answered: with none left under way, the child ends `IDLE_S` from now unless asked again."""
    global _asked
    with _LOCK:
        _asked = max(0, _asked - 1)
        if _asked == 0 and _POOL is not None:
            _arm()


def _arm() -> None:
    global _idle
    if _idle is not None:
        _idle.cancel()
    _idle = threading.Timer(IDLE_S, _retire)
    _idle.daemon = True
    _idle.start()


def _retire() -> None:
    """Idle for `IDLE_S`: the child ends (an ask that came meanwhile keeps it)."""
    global _POOL
    with _LOCK:
        if _asked == 0 and _POOL is not None:
            _POOL.shutdown(wait=False, cancel_futures=True)
            _POOL = None


def warm() -> None:
    """Start the child and import pandas and matplotlib in it now (a project opened: pages and charts will follow)."""
    pool = _pool()
    if pool is not None:
        try:
            pool.submit(_warm)
        except (BrokenProcessPool, RuntimeError, OSError) as e:
            _give_up(f"it could not be started: {e}")
            return
        with _LOCK:
            if _asked == 0:
                _arm()


def draw(kind: str, payload: dict[str, Any], size: tuple[int, int], dark: bool) -> tuple[bytes, list[Region]]:
    found = _in_child(None, _draw, kind, payload, size, dark)
    return found[0] if found else _draw(kind, payload, size, dark)


def read(fn: Callable[..., T], project: Project, ctx: TaskContext | None, *args: object) -> T:
    """`fn(project, *args)`, a page's numbers: in the child, on the project's file opened there for reading (it sees
    every committed write), or here when the project is not a file of its own or the child cannot be had. `fn` is a
    module-level function of a Qt-free module (`page_numbers`), its arguments and result plain data; what it raises
    is raised here. Cancelled (`ctx`): a read not yet begun is called off, one under way is left to end unseen."""
    path = getattr(project, "path", None)
    if isinstance(path, Path) and path.is_file():
        found = _in_child(ctx, _read, fn, str(path), args)
        if found:
            value: T = found[0]
            return value
    return fn(project, *args)


def call(fn: Callable[..., T], ctx: TaskContext | None, *args: object) -> T:
    """`fn(*args)` in the child (or here, without one): a computation that needs no project, as `read`."""
    found = _in_child(ctx, fn, *args)
    return found[0] if found else fn(*args)


def _in_child(ctx: TaskContext | None, fn: Callable[..., T], *args: object) -> list[T]:
    """[what `fn(*args)` returned in the child], or [] when there is no child to ask."""
    pool = _pool(take=True)
    if pool is None:
        return []
    try:
        try:
            future = pool.submit(fn, *args)
        except (BrokenProcessPool, RuntimeError, OSError) as e:
            _give_up(f"it could not be started: {e}")
            return []
        try:
            while True:
                try:
                    return [future.result(timeout=0.05)]
                except TimeoutError:
                    if ctx is not None and ctx.cancelled:
                        future.cancel()
                        ctx.check()
        except (BrokenProcessPool, OSError) as e:
            _give_up(f"it stopped: {e}")
            return []
    finally:
        _done()


def _read(fn: Callable[..., T], path: str, args: tuple[object, ...]) -> T:
    """Runs in the child: `fn` on the project opened for reading, then what the read freed given back to the
    system (glibc keeps it otherwise: the child would stay at its largest read's size)."""
    import gc

    from rageval_desktop.core.base.memory import give_back
    from rageval_desktop.core.store.project import Project

    project = Project.open(path, read_only=True, check="defer")     # (the window checks a file after a crash)
    try:
        return fn(project, *args)
    finally:
        project.close()
        gc.collect()
        give_back()


def pids() -> list[int]:
    """The child's process id, once started (none before, or after it died)."""
    with _LOCK:
        pool = _POOL
    found = getattr(pool, "_processes", None) or {}
    return [proc.pid for proc in list(found.values()) if proc.pid is not None]


@contextmanager
def _bare_main() -> Iterator[None]:
    """While the pool starts its child (on its first submit, made in `_pool`), `__main__` is a bare module.
    multiprocessing's spawn re-runs the parent's `__main__` script in the child to find what was pickled; a script that
    builds the window without a `if __name__ == "__main__"` guard built a second window there, and the child died on
    its own start (issue 79: the pages then computed in the window, 108.8 s instead of 23.8 s, with no word). The child
    runs this package's functions only and needs nothing of the script. Later submits start no process (the pool
    keeps its one child; a dead one breaks the pool, and the app gives up on it)."""
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if main is not None:
            sys.modules["__main__"] = main


def _give_up(why: str = "") -> None:
    """The child could not start or died: pages are computed and charts drawn here from now on (off the GUI thread,
    as before), and the window is told once (`on_lost`) — the app is slower and holds more memory without it."""
    global _POOL, _BROKEN, _LOST
    with _LOCK:
        first = not _BROKEN
        _BROKEN = True
        _LOST = _LOST or why or "it stopped"
        if _POOL is not None:
            _POOL.shutdown(wait=False, cancel_futures=True)
            _POOL = None
    listen = on_lost
    if first and listen is not None:
        try:
            listen(f"The helper process that computes the pages and draws the charts could not be used ({_LOST}). "
                   "The app computes them itself from now on: slower, and holding more memory.")
        except RuntimeError:        # the window that listened is gone
            pass


@atexit.register
def shutdown() -> None:
    global _POOL
    with _LOCK:
        if _idle is not None:
            _idle.cancel()
        if _POOL is not None:
            _POOL.shutdown(wait=False, cancel_futures=True)
            _POOL = None
