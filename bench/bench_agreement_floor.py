"""`rageval agreement --json` against the numpy floor (issue 50): a project of three runs of the same questions, a
stratified sample drawn in each run and rated in full (about 2,060 ratings on a 1-5 scale), 20 judges (17 of
them judged every rated row, 3 none). Whole processes, fresh each time, interleaved: our command against a script
that reads the same pairs with sqlite3 and computes each judge's quadratic κ and a 1,000-resample percentile
bootstrap with numpy (the anchor). CPU-seconds (user + system, from the child's rusage) beside wall seconds;
min/median/max of --repeats. The in-process line counts the SQL statements the audit runs.

    .venv/bin/python bench/bench_agreement_floor.py [--repeats 5] [--questions 700] [--dir /tmp]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

JUDGES, EMPTY = 20, 3

ANCHOR = textwrap.dedent("""
    import sqlite3, sys
    import numpy as np
    conn = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
    found = conn.execute(
        "SELECT x.judge_id, h.score, x.score FROM human_ratings h JOIN judgments x ON x.run_row_id = h.run_row_id "
        "AND x.status = 'ok' WHERE h.metric = 'correctness' AND h.withdrawn_at IS NULL AND h.skipped = 0").fetchall()
    judges = np.array([r[0] for r in found]); human = np.array([r[1] for r in found]) - 1
    judge = np.clip(np.rint(np.array([r[2] for r in found])), 1, 5) - 1
    k = 5; weight = 1 - (np.subtract.outer(np.arange(k), np.arange(k)) / (k - 1)) ** 2
    def kappa(tables):
        n = tables.sum(axis=(-1, -2), keepdims=True); p = tables / n
        expected = p.sum(axis=-1)[..., :, None] * p.sum(axis=-2)[..., None, :]
        return 1 - (1 - (weight * p).sum(axis=(-1, -2))) / (1 - (weight * expected).sum(axis=(-1, -2)))
    rng = np.random.default_rng(0); out = {}
    for j in np.unique(judges):
        h = human[judges == j].astype(np.int64); g = judge[judges == j].astype(np.int64); n = h.size
        cells = h * k + g
        value = kappa(np.bincount(cells, minlength=k * k).reshape(k, k).astype(float))
        draws = cells[rng.integers(0, n, size=(1000, n))]
        tables = np.stack([np.bincount(d, minlength=k * k) for d in draws]).reshape(1000, k, k).astype(float)
        out[int(j)] = (float(value), *np.percentile(kappa(tables), [2.5, 97.5]))
    print(len(out))
""")


def build(path: Path, questions: int) -> None:
    import numpy as np

    from rageval_desktop.core.base.clock import utcnow
    from rageval_desktop.core.importers import import_golden, import_run
    from rageval_desktop.core.judges.registry import add_judge
    from rageval_desktop.core.review import sampling
    from rageval_desktop.core.store.project import Project

    rng = np.random.default_rng(0)
    project = Project.create(path, actor="bench")
    slices = rng.choice(["easy", "edge", "multi-hop"], questions, p=[0.6, 0.3, 0.1])
    golden = [{"id": f"g{i}", "question": f"Question number {i}?", "gold_answer": f"The answer is {i}.",
               "gold_chunk_ids": [f"c{i}"], "slice_tag": str(slices[i])} for i in range(questions)]
    (path.parent / "g.jsonl").write_text("".join(json.dumps(r) + "\n" for r in golden))
    import_golden(project, path.parent / "g.jsonl")
    for run in ("v1", "v2", "v3"):
        rows = [{"id": f"g{i}", "question": f"Question number {i}?", "answer": f"The answer is {i} ({run}).",
                 "retrieved": [{"chunk_id": f"c{i}", "text": f"Chunk {i}.", "score": 0.9}]} for i in range(questions)]
        (path.parent / f"{run}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        import_run(project, path.parent / f"{run}.jsonl", run)
    size = round(questions * 0.98)
    samples = [sampling.create_sample(project, run, "correctness", size, 0, "stratified") for run in ("v1", "v2", "v3")]
    rated: list[tuple[int, int]] = [(int(r), s.id) for s in samples for r, in project.reader().execute(
        "SELECT run_row_id FROM review_sample_rows WHERE sample_id = ?", (s.id,))]
    quality = {"v1": 0.0, "v2": 0.3, "v3": 0.6}
    run_of = dict(project.reader().execute("SELECT rr.id, r.name FROM run_rows rr JOIN runs r ON r.id = rr.run_id"))
    human = np.clip(np.rint(rng.normal(3 + np.array([quality[run_of[r]] for r, _ in rated]), 1.1)), 1, 5)
    ids = [add_judge(project, f"judge-{k:02d}", "correctness", "lexical").id for k in range(JUDGES)]
    with project.write("bench data", changed=("ratings", "judgments")) as w:
        w.executemany("INSERT INTO human_ratings (run_row_id, metric, reviewer, score, sample_id, created_at) "
                      "VALUES (?, 'correctness', 'ann', ?, ?, ?)",
                      [(r, float(h), s, utcnow()) for (r, s), h in zip(rated, human, strict=True)])
        for k, jid in enumerate(ids[EMPTY:]):
            noise = rng.integers(-(k % 3), k % 3 + 1, len(rated))        # judges from exact to loose
            scores = np.clip(human + noise, 1, 5)
            w.executemany("INSERT INTO judgments (judge_id, run_row_id, idem_key, status, score, created_at) "
                          "VALUES (?, ?, ?, 'ok', ?, ?)", [(jid, r, f"{jid}-{r}", float(s), utcnow())
                                                           for (r, _), s in zip(rated, scores, strict=True)])
    project.close()


def timed(argv: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, wall


def statements(path: Path) -> int:
    """How many SQL statements the command's own work runs, in process (the project's connections traced)."""
    import sqlite3

    import rageval_desktop.api as rv

    count = 0
    real = sqlite3.connect

    def traced(*args, **kwargs):            # type: ignore[no-untyped-def]
        conn = real(*args, **kwargs)

        def seen(_sql: str) -> None:
            nonlocal count
            count += 1
        conn.set_trace_callback(seen)
        return conn

    sqlite3.connect = traced                # type: ignore[assignment]
    try:
        api = rv.open(path, read_only=True)
        count = 0
        api.agreement()
        api.close()
    finally:
        sqlite3.connect = real              # type: ignore[assignment]
    return count


def spread(values: list[float]) -> str:
    return f"{min(values):.2f}/{statistics.median(values):.2f}/{max(values):.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--questions", type=int, default=700)
    parser.add_argument("--dir", default="/tmp")
    args = parser.parse_args()
    path = Path(args.dir) / f"bench-agreement-{args.questions}" / "p.rageval"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        build(path, args.questions)
    import sqlite3

    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        ratings = conn.execute("SELECT COUNT(*) FROM human_ratings").fetchone()[0]
    rageval = str(Path(sys.executable).parent / "rageval")
    ours: list[tuple[float, float]] = []
    anchor: list[tuple[float, float]] = []
    timed([rageval, "agreement", str(path), "--json"])                # warm the page cache and bytecode
    timed([sys.executable, "-c", ANCHOR, str(path)])
    for _ in range(args.repeats):
        ours.append(timed([rageval, "agreement", str(path), "--json"]))
        anchor.append(timed([sys.executable, "-c", ANCHOR, str(path)]))
    cpu_ours, cpu_anchor = [c for c, _ in ours], [c for c, _ in anchor]
    print(f"{ratings} ratings, {JUDGES} judges ({EMPTY} with no judgments), 3 runs; {args.repeats} interleaved runs, "
          "min/median/max")
    print(f"  rageval agreement --json: CPU {spread(cpu_ours)} s, wall {spread([w for _, w in ours])} s")
    print(f"  numpy anchor:             CPU {spread(cpu_anchor)} s, wall {spread([w for _, w in anchor])} s")
    print(f"  ratio of medians (CPU): {statistics.median(cpu_ours) / statistics.median(cpu_anchor):.2f}x "
          "(goal <= 2x)")
    print(f"  SQL statements the audit runs: {statements(path)}")


if __name__ == "__main__":
    main()
