"""The analysis, review, audit and team pages' numbers are computed in the app's helper process
(`chart_process.read`, issue 50: the window held pandas, pyarrow, scipy and each page's frames, 475 MB at 200,000
rows): what comes back is what the page would have computed itself, an error arrives as raised, a read not yet begun
is called off, and the window's own process never imports the heavy libraries."""

from __future__ import annotations

import os
import threading
import time

import pytest

from rageval_desktop.core.base.context import Cancelled, TaskContext
from rageval_desktop.core.base.errors import NotFound
from rageval_desktop.gui import chart_process, page_numbers

pytestmark = pytest.mark.slow      # spawns the helper and imports pandas and matplotlib in it (2-7 s)


def test_a_pages_numbers_from_the_helper_are_the_ones_computed_here(demo):
    assert chart_process.call(os.getpid, None) != os.getpid()         # computed elsewhere
    there = chart_process.read(page_numbers.failures, demo, None, "v2", None, None, None, None, False)
    here = page_numbers.failures(demo, "v2", None, None, None, None, False)
    assert there == here and there["rows"]
    summary, base, png, regions = chart_process.read(page_numbers.dashboard, demo, None, "v2", "v1", "slices",
                                                     (640, 320), False)
    assert (summary, base) == page_numbers.dashboard(demo, "v2", "v1", "slices", (640, 320), False)[:2]
    assert png.startswith(b"\x89PNG") and regions


def test_a_read_sees_what_the_window_just_wrote(demo):
    """The helper opens the file anew for each read: a write committed here is in the next read there."""
    before = chart_process.read(page_numbers.failures, demo, None, "v2", None, None, None, None, False)
    with demo.write("test", changed=()) as conn:
        conn.execute("DELETE FROM judgments")
    after = chart_process.read(page_numbers.failures, demo, None, "v2", None, None, None, None, False)
    assert after != before and after == page_numbers.failures(demo, "v2", None, None, None, None, False)


def test_an_error_in_the_helper_arrives_as_raised(demo):
    with pytest.raises(NotFound) as there:
        chart_process.read(page_numbers.failures, demo, None, "no-such-run", None, None, None, None, False)
    with pytest.raises(NotFound) as here:
        page_numbers.failures(demo, "no-such-run", None, None, None, None, False)
    assert str(there.value) == str(here.value)


def test_a_cancelled_read_not_yet_begun_is_called_off():
    chart_process.call(os.getpid, None)                     # the helper is up
    busy = threading.Thread(target=chart_process.call, args=(time.sleep, None, 1.5))
    busy.start()
    time.sleep(0.2)                                         # the helper is sleeping: the next read waits its turn
    ctx = TaskContext()
    threading.Timer(0.1, ctx.cancel).start()
    started = time.monotonic()
    with pytest.raises(Cancelled):
        chart_process.call(os.getpid, ctx)
    assert time.monotonic() - started < 1.0                 # not after the sleep: called off while it waited
    busy.join()


VISIT = """
import sys, time
from pathlib import Path
from rageval_desktop.gui.app import make_app
from rageval_desktop.gui.main_window import MainWindow
from rageval_desktop.gui.pages import PAGES
from rageval_desktop.gui import workers

if __name__ == "__main__":
    from PySide6.QtCore import QEventLoop

    app = make_app()
    w = MainWindow()
    w.resize(1280, 720)
    w.show()
    loop = QEventLoop()
    w.project_opened.connect(lambda _p: loop.quit())
    w.open_path(Path(sys.argv[1]))
    loop.exec()

    def settle(seconds):
        end, limit = time.monotonic() + seconds, time.monotonic() + 60
        while time.monotonic() < end or (workers.active() and time.monotonic() < limit):
            app.processEvents()
            time.sleep(0.01)

    settle(1)
    for spec in PAGES:
        w.select_nav(spec.key)
        settle(1)
    shown = {spec.key: w.page(spec.key) is not None for spec in PAGES}
    heavy = sorted(m for m in ("pandas", "pyarrow", "scipy", "matplotlib", "sklearn", "krippendorff")
                   if m in sys.modules)
    print(all(shown.values()), heavy, flush=True)
    w.close()
    end = time.monotonic() + 30
    while (workers.active() or w.closing) and time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)
"""


def test_the_windows_process_holds_none_of_the_heavy_libraries(demo_file, tmp_path):
    """Every page visited and read: pandas, pyarrow, scipy and matplotlib live in the helper only (before: the
    dashboard's read brought pandas and pyarrow, the compare page's verdict scipy, the audit page's pandas)."""
    import shutil
    import subprocess
    import sys

    project = tmp_path / "demo.rageval"
    shutil.copy(demo_file, project)
    script = tmp_path / "visit.py"
    script.write_text(VISIT)
    done = subprocess.run([sys.executable, str(script), str(project)], capture_output=True, text=True, timeout=240,
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "True []", done.stdout + done.stderr[-2000:]


def test_the_upkeep_reads_a_runs_values_in_the_helper_and_keeps_what_core_would(demo, monkeypatch):
    """The upkeep lane's reads (at 200,000 rows +87 MB in the window's process) run in the helper; the window writes
    the parts, and they are the ones core reads and encodes itself."""
    from rageval_desktop.core.metrics import rowdata, values
    from rageval_desktop.core.store.queries import run_id
    from rageval_desktop.gui import operations

    monkeypatch.setattr(values, "KEEP_FROM", 1)
    here = rowdata.read_parts
    seen: list[int] = []
    monkeypatch.setattr(rowdata, "read_parts", lambda project, rid, *a, **k: seen.append(rid) or here(project, rid,
                                                                                                       *a, **k))
    rid = run_id(demo, "v2")
    assert operations.keep_values(demo, TaskContext()) == 2          # v1 and v2
    assert seen == []                                               # (this process's read_parts was never asked)
    kept = dict(demo.reader().execute("SELECT part, data FROM run_values WHERE run_id = ?", (rid,)).fetchall())
    assert set(kept) == set(values.PARTS) and all(kept.values())
    assert kept == dict(here(demo, rid, list(values.PARTS)))


def test_the_helper_ends_when_idle_and_starts_again_when_asked(monkeypatch):
    """Idle for `IDLE_S`, the helper ends (its libraries, 330 MB, given back); the next ask starts another, and an ask
    under way is never cut off, however long it takes."""
    monkeypatch.setattr(chart_process, "IDLE_S", 0.3)
    first = chart_process.call(os.getpid, None)
    assert chart_process.pids() == [first]
    chart_process.call(time.sleep, None, 0.8)                 # longer than IDLE_S: answered, not ended under it
    deadline = time.monotonic() + 10
    while chart_process.pids() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert chart_process.pids() == []                        # ended once idle ...

    def alive(pid: int) -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True

    while alive(first) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(first)                                  # ... and its process gone
    second = chart_process.call(os.getpid, None)
    assert second not in (first, os.getpid())                # a new one, asked as before
