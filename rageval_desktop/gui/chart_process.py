"""The app's charts, drawn in a process of their own.

matplotlib draws and encodes a figure in C++ while holding the interpreter lock: a forest plot of five metrics held
it for 80-155 ms at a time, and the window, which needs the lock to run any Python slot, stalled that long while a
worker drew (bench/bench_gui.py). A chart is therefore drawn by one long-lived child process (started on first
use, spawned: no Qt in it); the worker thread that asks waits for the PNG without the lock. When the child cannot
be started or dies, the chart is drawn in the asking thread as before: slower to the eye, never missing.
"""

from __future__ import annotations

import atexit
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

_POOL: ProcessPoolExecutor | None = None
_LOCK = threading.Lock()
_BROKEN = False


def _draw(kind: str, payload: dict[str, Any], size: tuple[int, int], dark: bool) -> tuple[bytes, list]:
    """Runs in the child (and as the fallback): (PNG, the clickable regions)."""
    from rageval_desktop.core.reports.plots import Theme, box_plot, delta_chart, slice_bars

    regions: list = []
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
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        wait([parent.sentinel])
        os._exit(0)

    threading.Thread(target=watch, name="watch-app", daemon=True).start()


def _warm() -> bool:
    import rageval_desktop.core.reports.plots  # noqa: F401 - matplotlib and the plots, imported once, ahead

    return True


def _pool() -> ProcessPoolExecutor | None:
    global _POOL
    with _LOCK:
        if _POOL is None and not _BROKEN:
            import multiprocessing

            _POOL = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                                        initializer=_watch_parent)
        return _POOL


def warm() -> None:
    """Start the child and import matplotlib in it now (a project opened: charts will follow)."""
    pool = _pool()
    if pool is not None:
        try:
            pool.submit(_warm)
        except (BrokenProcessPool, RuntimeError, OSError):
            _give_up()


def draw(kind: str, payload: dict[str, Any], size: tuple[int, int], dark: bool) -> tuple[bytes, list]:
    pool = _pool()
    if pool is not None:
        try:
            return pool.submit(_draw, kind, payload, size, dark).result()
        except (BrokenProcessPool, RuntimeError, OSError):
            _give_up()
    return _draw(kind, payload, size, dark)


def _give_up() -> None:
    """The child could not start or died: draw in-process from now on (said nowhere: the charts still come)."""
    global _POOL, _BROKEN
    with _LOCK:
        _BROKEN = True
        if _POOL is not None:
            _POOL.shutdown(wait=False, cancel_futures=True)
            _POOL = None


@atexit.register
def shutdown() -> None:
    global _POOL
    with _LOCK:
        if _POOL is not None:
            _POOL.shutdown(wait=False, cancel_futures=True)
            _POOL = None
