"""Triage listings over a 200k-row run with one judge: each sort and each filter is one SQL id query (the lazy
table then fetches only the page it paints). Run by hand:

    HF_HUB_OFFLINE=1 .venv/bin/python bench/bench_triage.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rageval_desktop.core.judges.registry import add_judge  # noqa: E402
from rageval_desktop.core.metrics.triage import Filters, run_source  # noqa: E402
from rageval_desktop.core.store.project import Project, utcnow  # noqa: E402

N = 200_000


def fill(p: Project) -> None:
    judge = add_judge(p, "f1", "correctness", "lexical")
    now = utcnow()
    with p.write("fill") as w:
        w.execute("INSERT INTO runs (name, created_at) VALUES ('big', ?)", (now,))
        w.executemany("INSERT INTO run_rows (id, run_id, position, external_id, question, answer, latency_ms) "
                      "VALUES (?, 1, ?, ?, ?, ?, ?)",
                      [(i + 1, i, f"r{i:06d}", f"question {i}", f"answer {i}", float(i % 5000)) for i in range(N)])
        w.executemany("INSERT INTO judgments (judge_id, run_row_id, idem_key, status, score, created_at) "
                      "VALUES (?, ?, ?, 'ok', ?, ?)", [(judge.id, i + 1, f"a{i}", float(1 + i % 5), now)
                                                       for i in range(N)])


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, Project.create(Path(tmp) / "b.rageval") as p:
        fill(p)
        source = run_source(p, 1, "big")
        headers = [c.header for c in source.columns]
        for name in ("id", "latency", "f1", "human correctness", "question", "slice", "gold@5"):
            t = time.perf_counter()
            source.ids(p, (headers.index(name), True))
            print(f"sort by {name:18s} {(time.perf_counter() - t) * 1000:6.0f} ms")
        for kw in ({"search": "question 1999"}, {"judge": "f1", "score_min": 4, "score_max": 5}, {"human": "rated"},
                   {"disagreements": True}, {"failure": "any"}):
            t = time.perf_counter()
            n = len(run_source(p, 1, "big", Filters(**kw)).ids(p))
            print(f"filter {kw}: {n:,} rows in {(time.perf_counter() - t) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
