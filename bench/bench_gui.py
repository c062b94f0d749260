"""GUI speed: (1) a run of 200k rows — first paint of its table, scrolling to the end, memory (the window's own
process, page by page, beside a 2,000-row run: what grows with the rows and what each page's libraries add); (2) the
longest stall of the event loop while a 2,000-row judge job runs against the loopback server (a 10 ms timer records
how late each tick fires), in the app (the rows page, the dashboard) and in a bare Qt window running the same job on a
thread (the anchor).

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_gui.py [--rows 200000] [--judge-rows 2000] [--repeats 1]
        [--only table|memory|stall|switch]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QElapsedTimer, QEventLoop, QTimer  # noqa: E402

from rageval_desktop.core.judges.registry import add_judge  # noqa: E402
from rageval_desktop.core.store.project import Project  # noqa: E402
from rageval_desktop.gui.app import make_app  # noqa: E402
from rageval_desktop.gui.main_window import MainWindow  # noqa: E402
from tests.core.test_judging import make_project  # noqa: E402


def big_project(path: Path, rows: int) -> None:
    with Project.create(path) as p, p.write("fill") as w:
        w.execute("INSERT INTO runs (name, created_at) VALUES ('big', 'now')")
        w.executemany("INSERT INTO run_rows (id, run_id, position, external_id, question, answer, latency_ms, cost_usd)"
                      " VALUES (?, 1, ?, ?, ?, ?, ?, ?)",
                      [(i + 1, i, f"r{i}", f"question {i} about retrieval?", "an answer " * 20, 100.0 + i % 900,
                        0.0002) for i in range(rows)])
        w.executemany("INSERT INTO retrieved_passages (run_row_id, rank, chunk_id, text, score) VALUES (?, ?, ?, ?, ?)",
                      [(i + 1, r, f"c{i}-{r}", "passage text", 1.0 / r) for i in range(rows) for r in (1, 2, 3)])


def open_window(app, path: Path) -> MainWindow:
    w = MainWindow()
    w.show()
    loop = QEventLoop()
    w.project_opened.connect(lambda _p: loop.quit())
    w.open_path(path)
    loop.exec()
    return w


def close_and_wait(app, w: MainWindow) -> None:
    """Close as a user does; the project closes on a worker: wait for it before the temp folder goes."""
    from rageval_desktop.gui import workers

    w.close()
    deadline = time.perf_counter() + 30
    while (workers.active() or w.closing) and time.perf_counter() < deadline:
        app.processEvents()
        time.sleep(0.01)
    workers.wait_all(30)
    app.processEvents()


def build_apart(path: Path, rows: int, kind: str = "plain") -> None:
    """The project built by a process of its own: this one's memory is then the window's alone (the builder's rows
    were counted in the window's peak: 277 MB where the window held 119). `kind` "judged": bench_table's project
    (golden rows in slices, two judges' verdicts, ratings), which every page has something to show of."""
    subprocess.run([sys.executable, __file__, "--build-only", str(path), str(rows), kind], check=True)


def rss_mb() -> tuple[float, float]:
    """(resident now, peak) of this process in MB, from /proc."""
    status = Path("/proc/self/status").read_text()
    now = int(status.split("VmRSS:")[1].split()[0]) / 1024
    peak = int(status.split("VmHWM:")[1].split()[0]) / 1024
    return now, peak


def family_mb() -> float:
    """Resident MB of this process and every process it started, and theirs (the helper, multiprocessing's resource
    tracker): what the machine pays for the app, read from /proc."""
    import os

    parent: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                parent[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    ours, grew = {os.getpid()}, True
    while grew:
        found = {pid for pid, ppid in parent.items() if ppid in ours} - ours
        grew = bool(found)
        ours |= found
    page = os.sysconf("SC_PAGE_SIZE")
    total = 0
    for pid in ours:
        try:
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * page
        except (OSError, ValueError, IndexError):
            pass
    return total / 2**20


class FamilyPeak:
    """The largest `family_mb` seen, sampled every 50 ms on a thread of its own (VmHWM is one process's peak; the
    app's processes peak at different moments)."""

    def __init__(self) -> None:
        import threading

        self.peak, self._stop = 0.0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            self.peak = max(self.peak, family_mb())

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.peak


def memory_of(path: Path) -> None:
    """In a process of its own: the window on `path` — its run shown, scrolled to the end, then each page visited and
    left to read (until no read of the window runs) — printing what it holds resident after each step, as JSON."""
    import gc
    import json

    from rageval_desktop.gui.pages import PAGES

    app = make_app()
    out: dict[str, float] = {"started": rss_mb()[0]}
    family = FamilyPeak()
    w = open_window(app, path)
    w.resize(1280, 720)

    from rageval_desktop.gui import workers

    def settle(seconds: float) -> None:
        """At least `seconds`, then until no read or task of the window is running (at most two minutes), then as
        long again as the window waits to give freed memory back (workers.TRIM_AFTER_S)."""
        end, limit = time.perf_counter() + seconds, time.perf_counter() + 120
        while time.perf_counter() < end or (workers.active() and time.perf_counter() < limit):
            app.processEvents()
            time.sleep(0.01)
        gc.collect()
        end = time.perf_counter() + workers.TRIM_AFTER_S + 0.5
        while time.perf_counter() < end:
            app.processEvents()
            time.sleep(0.01)

    out["window"] = rss_mb()[0]
    w.select(run="big")
    settle(3)
    out["run shown"] = rss_mb()[0]
    bar = w.rows.table.verticalScrollBar()
    for i in range(1, 201):
        bar.setValue(bar.maximum() * i // 200)
        w.rows.table.viewport().repaint()
    settle(1)
    out["scrolled to the end"] = rss_mb()[0]
    for spec in PAGES:
        w.select_nav(spec.key)
        settle(2)
        out[f"+ {spec.key}"] = rss_mb()[0]
    w.select(run="big")
    settle(2)
    out["back to the run"], out["peak"] = rss_mb()
    # the helper process the pages' numbers and charts are computed in (gui.chart_process): what it holds after its
    # last read, and its own peak (the window's figures above are the window's process alone)
    from rageval_desktop.gui import chart_process

    for pid in chart_process.pids()[:1]:
        status = Path(f"/proc/{pid}/status").read_text()
        out["helper process"] = int(status.split("VmRSS:")[1].split()[0]) / 1024
        out["helper's peak"] = int(status.split("VmHWM:")[1].split()[0]) / 1024
    # the machine's memory (issue 79.1): every process of the app, after the last read and once idle past the helper's
    # idle time (it ends then, giving back its libraries), and the largest sum seen on the way
    out["all processes, after the last read"] = family_mb()
    end = time.perf_counter() + chart_process.IDLE_S + 5
    while time.perf_counter() < end:
        app.processEvents()
        time.sleep(0.05)
    out["all processes, idle"] = family_mb()
    out["all processes, peak"] = family.stop()
    close_and_wait(app, w)
    print(json.dumps(out))


def memory_bench(rows: int, small: int = 2_000) -> str:
    """What the window holds at `rows` and at `small` rows, step by step, each in a fresh process: what grows with the
    rows, and what each page's first visit adds whatever the rows (the libraries it imports)."""
    import json

    found = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in (small, rows):
            path = Path(tmp) / f"m{n}.rageval"
            build_apart(path, n, "judged")
            done = subprocess.run([sys.executable, __file__, "--memory-of", str(path)], capture_output=True,
                                  text=True, check=True)
            found[n] = json.loads(done.stdout.strip().splitlines()[-1])
    lines = [f"resident MB, the window's own process: {small:,} rows / {rows:,} rows"]
    lines += [f"  {step:<22} {found[small].get(step, 0):6.0f} / {found[rows][step]:6.0f}" for step in found[rows]]
    return "\n".join(lines)


def table_bench(app, rows: int) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.rageval"
        build_apart(path, rows)
        w = open_window(app, path)
        w.resize(1280, 720)                 # the same table width whatever the detail pane's default
        w.rows_page.setSizes([660, 420])
        app.processEvents()
        t0 = time.perf_counter()
        w.select(run="big")              # the listing is read off the GUI thread: wait for it, then paint
        deadline = time.perf_counter() + 60
        while w.rows.rows_pending and time.perf_counter() < deadline:
            app.processEvents()
            time.sleep(0.001)
        w.rows.table.viewport().repaint()
        first = (time.perf_counter() - t0) * 1000
        bar = w.rows.table.verticalScrollBar()
        worst, t1 = 0.0, time.perf_counter()
        steps = 200
        for i in range(1, steps + 1):
            s = time.perf_counter()
            bar.setValue(bar.maximum() * i // steps)
            w.rows.table.viewport().repaint()
            worst = max(worst, (time.perf_counter() - s) * 1000)
        model = w.rows.table.model()
        while model.pages_pending and time.perf_counter() < deadline + 60:   # the pages scrolled to, read on the lane
            app.processEvents()
            time.sleep(0.001)
        w.rows.table.viewport().repaint()
        scroll = time.perf_counter() - t1
        last = model.index(rows - 1, 2).data()
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        close_and_wait(app, w)
    return (f"{rows:,}-row run: first paint {first:.0f} ms; scrolled to the end in {steps} jumps, {scroll:.2f} s, "
            f"slowest jump {worst:.0f} ms (last row: {last!r}); peak RSS {rss:.0f} MB (the window's process)")


class LoopWatch:
    """A 10 ms timer that records how late each tick fires: the event loop's stalls."""

    def __init__(self) -> None:
        self.clock = QElapsedTimer()
        self.clock.start()
        self.last = self.clock.elapsed()
        self.lates: list[int] = []
        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self.tick)
        self.timer.start()

    def tick(self) -> None:
        now = self.clock.elapsed()
        self.lates.append(now - self.last - 10)
        self.last = now

    def stop(self) -> list[int]:
        self.timer.stop()
        return sorted(self.lates)


@contextmanager
def judged_setup(rows: int) -> Iterator[tuple[Project, Path]]:
    """The loopback server (0.2 s a call) and a project of `rows` rows with an LLM judge of it, open."""
    server = subprocess.Popen([sys.executable, "-m", "tests.support.fake_openai", "--latency", "0.2"], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True)
    url = server.stdout.readline().strip()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "j.rageval"
            p = make_project(path, n=rows)
            add_judge(p, "llm", "correctness", "llm", model="m", base_url=url, params={"concurrency": 16})
            yield p, path
    finally:
        server.kill()


def stall_bench(app, rows: int, page: str = "rows") -> str:
    with judged_setup(rows) as (p, path):
        p.close()
        w = open_window(app, path)
        w.select(run="v1")
        if page != "rows":       # a page that recomputes as judgments arrive (the dashboard's numbers, chart)
            w.select_nav(page)
        # settled first: the stalls measured are those during the job, not the run's listing and the page's first
        # numbers landing (which arrived after the watch had started, the rows page's 40 ms among them)
        from rageval_desktop.gui import workers

        deadline = time.perf_counter() + 60
        while (w.rows.rows_pending or workers.active()) and time.perf_counter() < deadline:
            app.processEvents()
            time.sleep(0.01)
        watch = LoopWatch()
        done = QEventLoop()
        w.job_finished.connect(lambda _s: done.quit())
        t0 = time.perf_counter()
        w.judging.start_judging("v1", ["llm"])
        done.exec()
        seconds = time.perf_counter() - t0
        lates = watch.stop()
        judged = w.project.reader().execute("SELECT COUNT(*) FROM judgments").fetchone()[0]
        close_and_wait(app, w)
    return (f"{judged:,} judgments in {seconds:.1f} s with the {page} page open: event-loop stall max {lates[-1]} "
            f"ms, p99 {lates[int(len(lates) * 0.99)]} ms over {len(lates):,} ticks of 10 ms")


def bare_stall_bench(app, rows: int) -> str:
    """The anchor: a bare Qt window (a QWidget shown, nothing else) while the same judge job runs in the same process
    on a plain thread (core's run_judge_job against the same loopback server), watched by the same 10 ms timer."""
    import threading

    from PySide6.QtWidgets import QLabel

    from rageval_desktop.core.jobs.judge_job import run_judge_job
    from rageval_desktop.core.jobs.spec import JobSpec

    with judged_setup(rows) as (p, _path):
        window = QLabel("bare")
        window.resize(1280, 720)
        window.show()
        app.processEvents()
        watch = LoopWatch()
        done = threading.Event()
        t0 = time.perf_counter()
        thread = threading.Thread(target=lambda: (run_judge_job(p, JobSpec(run="v1")), done.set()))
        thread.start()
        while not done.is_set():
            app.processEvents()
            time.sleep(0.001)
        seconds = time.perf_counter() - t0
        lates = watch.stop()
        thread.join()
        judged = p.reader().execute("SELECT COUNT(*) FROM judgments").fetchone()[0]
        window.close()
        p.close()
    return (f"{judged:,} judgments in {seconds:.1f} s in a bare Qt window: event-loop stall max {lates[-1]} "
            f"ms, p99 {lates[int(len(lates) * 0.99)]} ms over {len(lates):,} ticks of 10 ms")


def switch_bench(app) -> str:
    """The longest event-loop stall around a switch to each page on the demo (first visit: the page is built)."""
    from rageval_desktop.core.demo import write_demo_project
    from rageval_desktop.gui.pages import PAGES

    with tempfile.TemporaryDirectory() as tmp:
        path = write_demo_project(Path(tmp) / "d.rageval")
        w = open_window(app, path)
        out = []
        for spec in PAGES:
            watch = LoopWatch()
            started = watch.clock.elapsed()
            w.select_nav(spec.key)
            switched = watch.clock.elapsed() - started     # the call itself blocks the loop this long
            pause = QEventLoop()
            QTimer.singleShot(1500, pause.quit)             # the page's reads land meanwhile
            pause.exec()
            out.append(f"{spec.key} {max([switched, *watch.stop()])} ms")
        close_and_wait(app, w)
    return "switching pages on the demo, longest stall: " + ", ".join(out)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--judge-rows", type=int, default=2_000)
    parser.add_argument("--repeats", type=int, default=1, help="rounds of the stall part (bare, rows, dashboard)")
    parser.add_argument("--only", choices=["table", "memory", "stall", "switch"], help="one part (table: the 200k-row "
                        "run's first paint, scrolling and peak memory; memory: what the window holds, page by page)")
    parser.add_argument("--build-only", nargs=3, metavar=("PATH", "ROWS", "KIND"), help=argparse.SUPPRESS)
    parser.add_argument("--memory-of", metavar="PATH", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.build_only:
        if args.build_only[2] == "judged":
            from bench.bench_table import big_project as judged_project

            judged_project(Path(args.build_only[0]), int(args.build_only[1]))
        else:
            big_project(Path(args.build_only[0]), int(args.build_only[1]))
        return
    if args.memory_of:
        memory_of(Path(args.memory_of))
        return
    if args.only in (None, "memory"):
        print(memory_bench(args.rows))
    app = make_app()
    if args.only in (None, "table"):
        print(table_bench(app, args.rows))
    if args.only in (None, "stall"):
        for _ in range(args.repeats):          # interleaved: a busy moment hits each alike
            print(bare_stall_bench(app, args.judge_rows))
            print(stall_bench(app, args.judge_rows))
            print(stall_bench(app, args.judge_rows, "dashboard"))
    if args.only in (None, "switch"):
        print(switch_bench(app))


if __name__ == "__main__":
    main()
