"""`rageval metrics --json` and `rageval compare --json` (the run against its twin, a copy under another name: a run
compared with itself is refused) at 10k / 100k / 1M run rows (5 passages, 2 judges, a rated sample), read from the
tables and from the run's kept values (core.metrics.values, as an import leaves a run of 50,000 rows or more), side
by side with a pandas script over the same rows (the anchor: read run rows, golden rows, passages and judgments with
pandas.read_sql_query, then per slice: hit@5, MRR and each judge's mean). Fresh processes, interleaved,
min/median/max of --repeats of wall time, CPU time (user + system, the process and its threads) and peak memory,
from compiled bytecode as an installed app runs. Projects are built once per size in --dir.

    .venv/bin/python bench/bench_metrics.py [--sizes 10000,100000,1000000] [--repeats 3] [--dir /tmp]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


PANDAS = textwrap.dedent("""
    import sqlite3, sys
    import pandas as pd
    conn = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
    rows = pd.read_sql_query("SELECT rr.id, g.slice_tag, g.gold_chunk_ids FROM run_rows rr "
                             "LEFT JOIN golden_rows g ON g.id = rr.golden_id WHERE rr.run_id = 1", conn)
    passages = pd.read_sql_query("SELECT p.run_row_id, p.rank, p.chunk_id FROM retrieved_passages p "
                                 "JOIN run_rows rr ON rr.id = p.run_row_id WHERE rr.run_id = 1", conn)
    judged = pd.read_sql_query("SELECT x.run_row_id, x.judge_id, x.score FROM judgments x "
                               "JOIN run_rows rr ON rr.id = x.run_row_id WHERE rr.run_id = 1", conn)
    gold = rows.assign(chunk_id=rows["gold_chunk_ids"].str.strip('[]"')).loc[:, ["id", "chunk_id"]]
    hits = passages.merge(gold, left_on=["run_row_id", "chunk_id"], right_on=["id", "chunk_id"])
    first = hits.groupby("run_row_id")["rank"].min()
    rows["hit5"] = rows["id"].map(first).le(5).astype(float) * 100
    rows["rr"] = 100 / rows["id"].map(first)
    rows["rr"] = rows["rr"].fillna(0)
    scores = judged.pivot_table(index="run_row_id", columns="judge_id", values="score", aggfunc="last")
    rows = rows.join(scores, on="id")
    out = rows.groupby("slice_tag")[["hit5", "rr", *scores.columns]].agg(["mean", "std", "count"])
    print(len(out))
""")


def timed(args: list[str]) -> tuple[float, float, float]:
    """(wall s, CPU s, peak MB) of one command in a fresh process."""
    t0 = time.perf_counter()
    child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        raise SystemExit(f"{args} failed: {child.stderr.read().decode() if child.stderr else status}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


TWIN = textwrap.dedent("""
    import sys
    from rageval_desktop.core.base.clock import utcnow
    from rageval_desktop.core.store.project import Project
    with Project.open(sys.argv[1]) as p:
        if not p.reader().execute("SELECT 1 FROM runs WHERE name = 'twin'").fetchone():
            n = p.reader().execute("SELECT MAX(id) FROM run_rows").fetchone()[0]
            with p.write("twin", checked_references=False) as w:
                run = w.execute("INSERT INTO runs (name, created_at) VALUES ('twin', ?)", (utcnow(),)).lastrowid
                w.execute("INSERT INTO run_rows (id, run_id, position, external_id, golden_id, question, answer, "
                          "latency_ms, cost_usd, prompt_tokens, completion_tokens, metadata) SELECT id + ?, ?, "
                          "position, external_id, golden_id, question, answer, latency_ms, cost_usd, prompt_tokens, "
                          "completion_tokens, metadata FROM run_rows WHERE run_id = 1", (n, run))
                w.execute("INSERT INTO retrieved_passages SELECT run_row_id + ?, rank, chunk_id, text, score, "
                          "in_prompt FROM retrieved_passages WHERE run_row_id <= ?", (n, n))
                w.execute("INSERT INTO judgments (judge_id, run_row_id, idem_key, status, score, created_at) SELECT "
                          "judge_id, run_row_id + ?, idem_key || '-twin', status, score, created_at FROM judgments "
                          "WHERE run_row_id <= ?", (n, n))
""")


def with_twin(path: Path) -> None:
    """The project with a second run, `twin`, answering as `big` did (once; kept in the file)."""
    subprocess.run([sys.executable, "-c", TWIN, str(path)], check=True)


def kept_copy(path: Path, rageval: str) -> Path:
    """A copy of the project whose runs keep their values (core.metrics.values), as an import of that many rows
    would have left them (the builder writes the tables directly). A run of KEEP_FROM rows or more is kept as a user
    whose file lacks them would keep it — `rageval info` names it, `rageval migrate` keeps it — and that one-off
    cost is printed; smaller runs, which no write keeps, by a script."""
    import sqlite3

    from rageval_desktop.core.metrics.values import KEEP_FROM

    kept = path.with_name(path.stem + "-kept.rageval")
    if kept.exists():      # kept before the twin was made: the twin and its values added
        conn = sqlite3.connect(f"file:{kept}?mode=ro", uri=True)
        twin = conn.execute("SELECT 1 FROM runs WHERE name = 'twin'").fetchone()
        conn.close()
        if twin:
            return kept
        with_twin(kept)
    else:
        shutil.copy(path, kept)
    info = subprocess.run([rageval, "info", str(kept)], capture_output=True, text=True, check=True).stdout
    said = next((line for line in info.splitlines() if line.startswith("values not kept")), "")
    if said:
        wall, cpu, peak = timed([rageval, "migrate", str(kept)])
        print(f"  {said[:60]}…\n  rageval migrate (keeps them, once): wall {wall:.2f} s  CPU {cpu:.2f} s  "
              f"peak {peak:.0f} MB", flush=True)
    if _rows(kept) < KEEP_FROM:        # no write keeps a small run's values: the script does
        subprocess.run([sys.executable, "-c", KEEP, str(kept)], check=True)
    return kept


def _rows(path: Path) -> int:
    import sqlite3

    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM run_rows WHERE run_id = 1").fetchone()[0])
    finally:
        conn.close()


KEEP = textwrap.dedent("""
    import sys
    from rageval_desktop.core.metrics.rowdata import keep_values
    from rageval_desktop.core.store.project import Project
    with Project.open(sys.argv[1]) as p:
        for run_id, in p.reader().execute("SELECT id FROM runs").fetchall():
            print(keep_values(p, run_id, minimum=0))
""")


MIGRATE = textwrap.dedent("""
    import sys
    from rageval_desktop.core.store.project import Project
    Project.open(sys.argv[1]).close()      # the schema's migration alone: the run's values stay not kept
""")


def mmm(values: list[float], digits: int = 2) -> str:
    return "/".join(f"{v:.{digits}f}" for v in (min(values), statistics.median(values), max(values)))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dir", default="/tmp")
    args = parser.parse_args()
    rageval = str(Path(sys.executable).parent / "rageval")
    # the app as installed runs from compiled bytecode (pip compiles at install); a checkout where
    # PYTHONDONTWRITEBYTECODE is set would compile fifty modules in every measured process (0.1-0.2 CPU-s)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "rageval_desktop")], check=True)
    for size in (int(s) for s in args.sizes.split(",")):
        path = Path(args.dir) / f"bench-metrics-{size}.rageval"
        if not path.exists():
            # built in a process of its own: a child forked from a process that had grown to build a million rows
            # reported that process's peak as its own (ru_maxrss counts the memory a fork inherits before exec)
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                            "from bench.bench_table import big_project; big_project(__import__('pathlib').Path("
                            "sys.argv[2]), int(sys.argv[3]))", str(ROOT), str(path), str(size)], check=True)
            print(f"built {path} ({size:,} rows) in {time.perf_counter() - t:.0f} s", flush=True)
        with_twin(path)
        # a project built by an earlier release is migrated once, not on every read; the tables' copy keeps no values
        info = subprocess.run([rageval, "info", str(path), "--json"], capture_output=True, text=True, check=True)
        if "needs_migration_to" in info.stdout:
            subprocess.run([sys.executable, "-c", MIGRATE, str(path)], check=True)
        kept = kept_copy(path, rageval)
        cases = {"metrics, tables": [rageval, "metrics", str(path), "--run", "big", "--json"],
                 "metrics, values kept": [rageval, "metrics", str(kept), "--run", "big", "--json"],
                 "pandas script": [sys.executable, "-c", PANDAS, str(path)],
                 "compare, tables": [rageval, "compare", str(path), "--baseline", "big", "--candidate", "twin",
                                     "--json"],
                 "compare, values kept": [rageval, "compare", str(kept), "--baseline", "big", "--candidate",
                                          "twin", "--json"]}
        found: dict[str, list[tuple[float, float, float]]] = {name: [] for name in cases}
        for _ in range(args.repeats):            # interleaved
            for name, command in cases.items():
                found[name].append(timed(command))
        anchor = statistics.median(w for w, _, _ in found["pandas script"])
        print(f"{size:>9,} rows (min/median/max of {args.repeats}):", flush=True)
        for name, runs in found.items():
            walls, cpus, peaks = zip(*runs, strict=True)
            print(f"  {name:22} wall {mmm(walls)} s  CPU {mmm(cpus)} s  peak {mmm(peaks, 0)} MB  "
                  f"wall / pandas {statistics.median(walls) / anchor:.2f}x", flush=True)


if __name__ == "__main__":
    main()
