"""The run table at 200k rows: each sort and filter, read the way the window reads it (off the GUI thread, the old
listing painted meanwhile) against the way it was read before (on the GUI thread, `LazyTableModel` without a
reader). For each: the longest stall of the GUI thread (a 5 ms timer records how late each tick fires) and the
time until the new listing is shown. Each case is run `--repeats` times, interleaved; min/median/max.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_table.py [--rows 200000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QElapsedTimer, QEventLoop, Qt, QTimer  # noqa: E402

from bench.bench_gui import close_and_wait, open_window  # noqa: E402
from rageval_desktop.core.base.clock import utcnow  # noqa: E402
from rageval_desktop.core.judges.registry import add_judge  # noqa: E402
from rageval_desktop.core.metrics.triage import Filters, run_source  # noqa: E402
from rageval_desktop.core.store.project import Project  # noqa: E402
from rageval_desktop.gui.app import make_app  # noqa: E402
from rageval_desktop.gui.main_window import MainWindow  # noqa: E402
from rageval_desktop.gui.models.lazy_table import LazyTableModel  # noqa: E402


def big_project(path: Path, n: int) -> None:
    """n golden rows (one gold chunk each) and a run answering them with 5 passages, two judges, a few ratings."""
    now = utcnow()
    with Project.create(path) as p:
        a = add_judge(p, "f1", "correctness", "lexical")
        b = add_judge(p, "recall", "correctness_binary", "lexical", params={"measure": "recall"})
        with p.write("fill") as w:
            w.executemany("INSERT INTO golden_rows (id, question, question_norm, gold_answer, gold_chunk_ids, "
                          "slice_tag, created_at, updated_at) VALUES (?, ?, ?, 'a', ?, ?, ?, ?)",
                          [(f"g{i}", f"question {i}", f"question {i}", f'["c{i}-{1 + i % 9}"]',
                            ("easy", "edge", "multi-hop")[i % 3], now, now) for i in range(n)])
            # the slices themselves, as an import makes them: without them the slice box offered no 'edge' and the
            # "slice 'edge'" case filtered nothing (issue 50)
            w.executemany("INSERT OR IGNORE INTO slices (name, position) VALUES (?, ?)",
                          [(name, i) for i, name in enumerate(("easy", "edge", "multi-hop"))])
            w.execute("INSERT INTO runs (name, created_at) VALUES ('big', ?)", (now,))
            w.executemany("INSERT INTO run_rows (id, run_id, position, external_id, golden_id, question, answer, "
                          "latency_ms) VALUES (?, 1, ?, ?, ?, ?, ?, ?)",
                          [(i + 1, i, f"r{i:06d}", f"g{i}", f"question {i}", f"answer {i}",
                            float((i * 7919) % 5000)) for i in range(n)])
            w.executemany("INSERT INTO retrieved_passages (run_row_id, rank, chunk_id, text, score) "
                          "VALUES (?, ?, ?, 'passage text', ?)",
                          [(i + 1, r, f"c{i}-{r}", 1.0 / r) for i in range(n) for r in range(1, 6)])
            for judge, score in ((a, lambda i: float(1 + i % 5)), (b, lambda i: float(i % 3 == 0))):
                w.executemany("INSERT INTO judgments (judge_id, run_row_id, idem_key, status, score, created_at) "
                              "VALUES (?, ?, ?, 'ok', ?, ?)",
                              [(judge.id, i + 1, f"{judge.id}-{i}", score(i), now) for i in range(n)])
            w.executemany("INSERT INTO human_ratings (run_row_id, metric, reviewer, score, created_at) "
                          "VALUES (?, 'correctness', 'kim', ?, ?)", [(i + 1, 1 + i % 5, now) for i in range(0, n, 97)])


class LoopWatch:
    def __init__(self, every: int = 5) -> None:
        self.every, self.clock = every, QElapsedTimer()
        self.clock.start()
        self.last, self.worst = self.clock.elapsed(), 0
        self.timer = QTimer()
        self.timer.setInterval(every)
        self.timer.timeout.connect(self.tick)
        self.timer.start()

    def tick(self) -> None:
        now = self.clock.elapsed()
        self.worst = max(self.worst, now - self.last - self.every)
        self.last = now

    def stop(self) -> int:
        self.timer.stop()
        return self.worst


def wait_until(app, done, timeout: float = 120.0) -> None:
    deadline = time.perf_counter() + timeout
    while not done() and time.perf_counter() < deadline:
        loop = QEventLoop()
        QTimer.singleShot(1, loop.quit)
        loop.exec()


def window_case(app, w: MainWindow, action) -> tuple[float, float]:
    """(GUI-thread stall ms, ms until the new listing is shown) for one action in the window."""
    wait_until(app, lambda: not w.rows.rows_pending)
    watch = LoopWatch()
    t0 = time.perf_counter()
    call_started = watch.clock.elapsed()
    action()
    blocked = watch.clock.elapsed() - call_started
    wait_until(app, lambda: not w.rows.rows_pending and getattr(w.rows.table.model(), "pending", None) is None)
    w.rows.table.viewport().repaint()
    shown = (time.perf_counter() - t0) * 1000
    return max(blocked, watch.stop()), shown


def before_case(app, project: Project, source_args: tuple, filters: Filters, sort: tuple[int, bool] | None,
                ) -> tuple[float, float]:
    """The old way: the id query on the GUI thread (a new model under the filter, or model.sort)."""
    t0 = time.perf_counter()
    model = LazyTableModel(project, run_source(project, *source_args, filters))
    if sort is not None:
        model.sort(sort[0], Qt.SortOrder.DescendingOrder if sort[1] else Qt.SortOrder.AscendingOrder)
    if model.rowCount():
        model.row_values(0)
    ms = (time.perf_counter() - t0) * 1000
    model.deleteLater()
    return ms, ms


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    app = make_app()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.rageval"
        t = time.perf_counter()
        big_project(path, args.rows)
        print(f"built a {args.rows:,}-row project in {time.perf_counter() - t:.1f} s")
        w = open_window(app, path)
        w.resize(1280, 720)
        wait_until(app, lambda: not w.rows.rows_pending)
        stall, shown = window_case(app, w, lambda: w.select(run="big"))
        print(f"open the run: GUI-thread stall {stall:.0f} ms, shown after {shown:.0f} ms")
        headers = [c.header for c in w.rows.table.model().source.columns]
        bar = w.rows.triage
        cases = [(f"sort by {h}", Filters(), (headers.index(h), True)) for h in ("question", "latency", "f1", "gold@5")]
        cases += [("search 'question 1999'", Filters(search="question 1999"), None),
                  ("f1 score 5", Filters(judge="f1", score_min=5, score_max=5), None),
                  ("human rated", Filters(human="rated"), None),
                  ("human unrated", Filters(human="unrated"), None),
                  ("human pass", Filters(human="pass"), None),
                  ("judged", Filters(status="judged"), None),
                  ("unjudged", Filters(status="unjudged"), None),
                  ("judge error", Filters(status="judge error"), None),
                  ("failing: any", Filters(failure="any"), None),
                  ("slice 'edge'", Filters(slice_tag="edge"), None),
                  ("disagreements", Filters(disagreements=True), None)]

        def apply(filters: Filters, sort: tuple[int, bool] | None):
            def go() -> None:
                if sort is not None:
                    w.rows.table.horizontalHeader().setSortIndicator(
                        sort[0], Qt.SortOrder.DescendingOrder if sort[1] else Qt.SortOrder.AscendingOrder)
                elif filters.search:
                    bar.search.setText(filters.search)
                    bar.changed.emit()
                elif filters.disagreements:
                    bar.disagree.setChecked(True)
                elif filters.human:
                    bar.human.setCurrentIndex(bar.human.findData(filters.human))
                elif filters.status:
                    bar.status.setCurrentIndex(bar.status.findData(filters.status))
                elif filters.failure:
                    bar.failure.setCurrentIndex(bar.failure.findData(filters.failure))
                elif filters.slice_tag:
                    index = w.rows.slice_box.findData(filters.slice_tag)
                    if index < 0:
                        raise SystemExit(f"no {filters.slice_tag!r} in the slice box: the case would filter nothing")
                    w.rows.slice_box.setCurrentIndex(index)
                else:
                    bar.judge.setCurrentIndex(bar.judge.findData(filters.judge))
                    bar.low.setValue(filters.score_min)
                    bar.high.setValue(filters.score_max)
                    bar._now()
            return go

        results: dict[str, dict[str, list[tuple[float, float]]]] = {}
        for _ in range(args.repeats):
            for name, filters, sort in cases:
                bar.clear()
                w.rows.slice_box.setCurrentIndex(0)     # all slices
                w.rows.table.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
                w.rows._orders.clear()
                wait_until(app, lambda: not w.rows.rows_pending)
                now = window_case(app, w, apply(filters, sort))
                before = before_case(app, w.project, (1, "big"), filters, sort)
                results.setdefault(name, {"now": [], "before": []})
                results[name]["now"].append(now)
                results[name]["before"].append(before)

        def mmm(values: list[float]) -> str:
            return f"{min(values):.0f}/{statistics.median(values):.0f}/{max(values):.0f}"

        print(f"\n{args.rows:,} rows; ms, min/median/max of {args.repeats}:")
        print(f"{'case':<26} {'before: GUI blocked':>20} {'now: GUI stall':>16} {'now: shown after':>18}")
        for name, r in results.items():
            print(f"{name:<26} {mmm([b for b, _ in r['before']]):>20} {mmm([s for s, _ in r['now']]):>16} "
                  f"{mmm([v for _, v in r['now']]):>18}")
        close_and_wait(app, w)


if __name__ == "__main__":
    main()
