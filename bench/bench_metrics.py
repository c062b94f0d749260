"""`rageval metrics --json` at 10k / 100k / 1M run rows (5 passages, 2 judges, a rated sample), side by side with a
pandas script over the same rows (the anchor: read run rows, golden rows, passages and judgments with
pandas.read_sql_query, then per slice: hit@5, MRR and each judge's mean). Fresh processes, interleaved,
min/median/max of --repeats; the ratio is ours over the anchor. Projects are built once per size in --dir.

    .venv/bin/python bench/bench_metrics.py [--sizes 10000,100000,1000000] [--repeats 3] [--dir /tmp]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_table import big_project  # noqa: E402

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


def timed(args: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(args, check=True, capture_output=True)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dir", default="/tmp")
    args = parser.parse_args()
    rageval = str(Path(sys.executable).parent / "rageval")
    for size in (int(s) for s in args.sizes.split(",")):
        path = Path(args.dir) / f"bench-metrics-{size}.rageval"
        if not path.exists():
            t = time.perf_counter()
            big_project(path, size)
            print(f"built {path} ({size:,} rows) in {time.perf_counter() - t:.0f} s", flush=True)
        ours, anchor = [], []
        for _ in range(args.repeats):
            ours.append(timed([rageval, "metrics", str(path), "--run", "big", "--json"]))
            anchor.append(timed([sys.executable, "-c", PANDAS, str(path)]))
        ratio = [o / a for o, a in zip(ours, anchor, strict=True)]
        mmm = f"{min(ours):.2f}/{statistics.median(ours):.2f}/{max(ours):.2f}"
        print(f"{size:>9,} rows: rageval metrics --json {mmm} s; "
              f"pandas script {min(anchor):.2f}/{statistics.median(anchor):.2f}/{max(anchor):.2f} s; "
              f"ratio median {statistics.median(ratio):.2f}x", flush=True)


if __name__ == "__main__":
    main()
