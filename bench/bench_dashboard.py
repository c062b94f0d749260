"""Dashboard for a run of 100k rows x 3 judges: seconds to compute (after the data is in the project).

    .venv/bin/python bench/bench_dashboard.py [--rows 100000]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rageval_desktop.core.importers import import_golden, import_run  # noqa: E402
from rageval_desktop.core.judges.registry import add_judge  # noqa: E402
from rageval_desktop.core.metrics.dashboard import dashboard  # noqa: E402
from rageval_desktop.core.store.project import Project, utcnow  # noqa: E402

SLICES = ["easy", "edge", "adversarial", "time-sensitive", "multi-hop", "keyword-heavy"]


def build(path: Path, rows: int) -> Project:
    rng = random.Random(1)
    project = Project.create(path)
    golden = path.parent / "g.jsonl"
    run = path.parent / "r.jsonl"
    with golden.open("w") as g, run.open("w") as r:
        for i in range(rows):
            g.write(json.dumps({"id": f"q{i}", "question": f"question {i}?", "gold_answer": "a",
                                "gold_chunk_ids": [f"c{i}", f"c{i}b"], "slice_tag": SLICES[i % 6]}) + "\n")
            ranks = rng.sample(range(1, 11), 5)
            passages = [{"chunk_id": f"c{i}" if k == ranks[0] and rng.random() < 0.7 else f"x{rng.randrange(9**6)}",
                         "text": "passage", "score": 1 / (k + 1)} for k in range(1, 6)]
            r.write(json.dumps({"id": f"q{i}", "question": f"question {i}?", "answer": "a", "retrieved": passages,
                                "latency_ms": rng.uniform(200, 2000), "cost_usd": 0.0002}) + "\n")
    import_golden(project, golden)
    import_run(project, run, "big")
    judges = [add_judge(project, f"j{n}", m, "lexical") for n, m in
              enumerate(["correctness", "correctness_binary", "correctness"])]
    ids = [r[0] for r in project.reader().execute("SELECT id FROM run_rows")]
    with project.write("fake judgments") as w:
        for j in judges:
            low, high = j.spec.low, j.spec.high
            w.executemany("INSERT INTO judgments (judge_id, run_row_id, idem_key, status, score, created_at) "
                          "VALUES (?, ?, ?, 'ok', ?, ?)",
                          [(j.id, rid, f"{j.id}-{rid}", float(rng.randint(int(low), int(high))), utcnow())
                           for rid in ids])
    return project


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        project = build(Path(tmp) / "b.rageval", args.rows)
        built = time.perf_counter() - t0
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            summary = dashboard(project, "big")
            times.append(time.perf_counter() - t0)
        project.close()
    s = summary["slices"]["all"]
    print(f"{args.rows:,} rows x 3 judges (built in {built:.0f} s): dashboard in {min(times):.2f} s "
          f"(runs: {', '.join(f'{t:.2f}' for t in times)}); all: recall@5 {s['recall@5']}, "
          f"correctness {s['correctness']} {s['correctness_ci']}")


if __name__ == "__main__":
    main()
