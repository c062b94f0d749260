"""Charts drawn in their own process (issue 31: matplotlib held the interpreter lock and stalled the window): the
child's PNG and clickable regions are the in-process ones, and a child that cannot run falls back to drawing here."""

from __future__ import annotations

from concurrent.futures.process import BrokenProcessPool

import pytest

from rageval_desktop.core.metrics.compare import compare
from rageval_desktop.gui import chart_process


@pytest.mark.slow      # spawns the child and imports matplotlib in it (2-7 s)
def test_the_chart_process_draws_what_the_app_would_and_falls_back(demo, monkeypatch):
    comparison = compare(demo, "v1", "v2")
    png, regions = chart_process.draw("deltas", comparison, (640, 320), False)
    here_png, here_regions = chart_process._draw("deltas", comparison, (640, 320), False)
    assert png.startswith(b"\x89PNG") and len(regions) == len(here_regions) > 0
    assert [(r.slice, r.metric) for r in regions] == [(r.slice, r.metric) for r in here_regions]

    class Broken:
        def submit(self, *args, **kwargs):
            raise BrokenProcessPool("the child died")

        def shutdown(self, **kwargs):
            pass

    monkeypatch.setattr(chart_process, "_POOL", Broken())
    monkeypatch.setattr(chart_process, "_BROKEN", False)
    png, regions = chart_process.draw("deltas", comparison, (640, 320), False)
    assert png.startswith(b"\x89PNG") and len(regions) == len(here_regions)
    assert chart_process._BROKEN and chart_process._POOL is None        # in-process from now on


@pytest.mark.slow      # waits for the window's 2-s timer
def test_the_chart_process_is_started_off_the_gui_thread(window, qtbot, monkeypatch):
    """Starting the child took 34 ms (more on a busy machine) on the thread that asked: the window asks from a
    thread of its own, two seconds after a project opens."""
    import threading

    seen: list[str] = []
    monkeypatch.setattr(chart_process, "warm", lambda: seen.append(threading.current_thread().name))
    qtbot.waitUntil(lambda: bool(seen), timeout=10_000)      # the window (the fixture) has just opened the demo
    assert seen == ["chart-warm"] and threading.main_thread().name not in seen
