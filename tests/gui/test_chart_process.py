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


DIES = """
import os
from rageval_desktop.gui import chart_process
if __name__ == "__main__":
    pool = chart_process._pool()
    pool.submit(os.getpid).result()        # the child is up, its start-up done
    print(list(pool._processes), flush=True)
    os._exit(0)                            # the app dies without its exit handlers (killed, crashed)
"""


@pytest.mark.slow      # spawns the child (about 1 s)
def test_the_chart_process_ends_when_the_app_is_gone(tmp_path):
    """Was: a process pool's worker holds the writing end of the queue it reads, so it never saw the app go: after a
    crash or a kill, the chart process stayed for good (one was found 10 minutes on)."""
    import os
    import subprocess
    import sys
    import time

    script = tmp_path / "dies.py"
    script.write_text(DIES)
    said = tmp_path / "said.txt"
    with said.open("w") as out:   # a file, not a pipe: a child left behind would hold a pipe open
        subprocess.run([sys.executable, str(script)], stdout=out, stderr=subprocess.DEVNULL, timeout=60, check=True)
    (child,) = [int(p) for p in said.read_text().strip("[]\n").split(",")]

    def alive() -> bool:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return False
        return True

    end = time.monotonic() + 10
    while alive() and time.monotonic() < end:
        time.sleep(0.05)
    if alive():
        os.kill(child, 9)
        pytest.fail("the chart process outlived the app")


CTRL_C = """
import os, signal, time
from rageval_desktop.gui import chart_process
if __name__ == "__main__":
    pool = chart_process._pool()
    child = pool.submit(os.getpid).result()
    os.kill(child, signal.SIGINT)          # Ctrl+C in the terminal reaches the chart process too
    time.sleep(0.5)
    print(pool.submit(os.getpid).result() == child, flush=True)   # it is still there, for the app to close
    chart_process.shutdown()
"""


@pytest.mark.slow      # spawns the child (about 1 s)
def test_ctrl_c_in_the_terminal_leaves_the_chart_process_to_the_app(tmp_path):
    """Was: Ctrl+C on `make demo` printed a 20-line KeyboardInterrupt traceback from the chart process."""
    import subprocess
    import sys

    script = tmp_path / "ctrl_c.py"
    script.write_text(CTRL_C)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "True" and "KeyboardInterrupt" not in done.stderr and "Traceback" not in done.stderr


UNGUARDED = """
import os, sys
from rageval_desktop.gui import chart_process
with open(sys.argv[1], "a") as marks:      # a user's script: work at module level, no __main__ guard
    marks.write(f"{os.getpid()}\\n")
print(chart_process.call(os.getpid, None) != os.getpid(), chart_process._BROKEN, flush=True)
chart_process.shutdown()
"""


@pytest.mark.slow      # spawns the child (about 1 s)
def test_a_script_without_a_main_guard_is_not_run_again_by_the_helper(tmp_path):
    """Issue 79: spawn re-ran the user's script in the helper to start it; a script that built the window at module
    level built it again there, the helper died on its own start, and the pages were computed in the window with no
    word (108.8 s instead of 23.8 s). The helper starts without the script now: the script runs once, the helper
    answers."""
    import subprocess
    import sys

    script, marks = tmp_path / "unguarded.py", tmp_path / "marks.txt"
    script.write_text(UNGUARDED)
    out = subprocess.run([sys.executable, str(script), str(marks)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert len(marks.read_text().split()) == 1                  # the script ran once, not again in the helper
    assert out.stdout.split() == ["True", "False"]              # answered by the helper, which did not break


def test_a_helper_that_cannot_be_had_is_said_once(monkeypatch):
    """When the helper cannot start or dies, the app computes in its workers as before — and now says so, once."""
    heard: list[str] = []
    monkeypatch.setattr(chart_process, "_BROKEN", False)
    monkeypatch.setattr(chart_process, "_LOST", "")
    monkeypatch.setattr(chart_process, "_POOL", None)
    monkeypatch.setattr(chart_process, "on_lost", heard.append)
    chart_process._give_up("it could not be started: no more processes")
    chart_process._give_up("it stopped")
    assert len(heard) == 1 and "could not be used (it could not be started: no more processes)" in heard[0]
    assert "computes them itself" in heard[0] and chart_process._BROKEN


def test_the_window_shows_the_helper_lost_in_its_notice_bar(window, qtbot):
    chart_process.on_lost("The helper process … could not be used (it stopped).")    # as a worker thread calls it
    qtbot.waitUntil(lambda: window.notice_bar.isVisible(), timeout=5_000)
    assert window.notice_bar.label.text().startswith("The helper process") and window.notice_bar.tone == "warning"
