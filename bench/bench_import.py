"""Import a generated 100k-row run (5 passages per row): seconds and peak memory, beside two pandas anchors over the
same file: reading it alone, and reading it and storing the same rows (run rows and their passages, indexed) in SQLite
with `to_sql`. Each measurement runs in its own process so peak RSS is its own; the kinds take turns.

    .venv/bin/python bench/bench_import.py [--rows 100000] [--format jsonl|csv|parquet] [--repeat 3] [--file F]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

WORDS = ("retrieval augmented generation evaluates answers against gold chunks with judges recall precision "
         "latency cost slice golden adversarial keyword multi hop time sensitive edge easy").split()


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def generate(path: Path, rows: int) -> None:
    rng = random.Random(7)
    records = []
    for i in range(rows):
        records.append({
            "id": f"q{i}", "question": sentence(rng, 12) + "?", "answer": sentence(rng, 40),
            "retrieved": [{"chunk_id": f"c{rng.randrange(50_000)}", "text": sentence(rng, 60),
                           "score": round(rng.random(), 4)} for _ in range(5)],
            "latency_ms": round(rng.uniform(200, 3000), 1), "cost_usd": round(rng.uniform(1e-4, 1e-3), 6),
            "prompt_tokens": rng.randrange(200, 2000), "completion_tokens": rng.randrange(10, 300)})
    if path.suffix == ".jsonl":
        with path.open("w") as fh:
            for r in records:
                fh.write(json.dumps(r) + "\n")
    else:
        import pandas as pd

        frame = pd.DataFrame(records)
        if path.suffix == ".csv":
            frame["retrieved"] = [json.dumps(v) for v in frame["retrieved"]]
            frame.to_csv(path, index=False)
        else:
            frame.to_parquet(path, index=False)


MEASURE = textwrap.dedent("""
    import json, resource, sys, time
    kind, path, project = sys.argv[1], sys.argv[2], sys.argv[3]
    t0 = time.perf_counter()
    if kind.startswith("pandas"):
        import pandas as pd
        if path.endswith(".jsonl"):
            frame = pd.read_json(path, lines=True)
        elif path.endswith(".csv"):
            frame = pd.read_csv(path)
        else:
            frame = pd.read_parquet(path)
        rows = len(frame)
        if kind == "pandas+sqlite":     # the same rows stored: the run's rows and their passages, in SQLite
            import sqlite3
            conn = sqlite3.connect(project)
            lists = frame.pop("retrieved")
            if path.endswith(".csv"):
                lists = lists.map(json.loads)
            frame["row_id"] = range(1, rows + 1)
            passages = pd.DataFrame([dict(p, row_id=i, rank=k) for i, items in zip(frame["row_id"], lists)
                                     for k, p in enumerate(items, start=1)])
            frame.to_sql("run_rows", conn, index=False)
            passages.to_sql("retrieved_passages", conn, index=False)
            conn.execute("CREATE INDEX passages_row ON retrieved_passages (row_id, chunk_id)")
            conn.commit()
            conn.close()
    else:
        from rageval_desktop.core.importers import import_run
        from rageval_desktop.core.store.project import Project
        p = Project.create(project)
        rows = import_run(p, path, "bench").added
        p.close()
    seconds = time.perf_counter() - t0
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    reader_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024   # the import's reader process
    print(json.dumps({"kind": kind, "rows": rows, "seconds": seconds, "peak_mb": peak_mb, "reader_mb": reader_mb}))
""")

KINDS = ("pandas", "pandas+sqlite", "rageval")
LABELS = {"pandas": "pandas read alone", "pandas+sqlite": "pandas read + to_sql", "rageval": "rageval import run"}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--format", default="jsonl", choices=["jsonl", "csv", "parquet"])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--file", help="an existing file to import instead of a generated one")
    parser.add_argument("--keep", help="generate the file here and keep it (for --file next time)")
    parser.add_argument("--generate-only", nargs=2, metavar=("PATH", "ROWS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate_only:
        generate(Path(args.generate_only[0]), int(args.generate_only[1]))
        return
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(args.file or args.keep or Path(tmp) / f"run.{args.format}")
        if not args.file:
            # in a process of its own: a child's peak memory (ru_maxrss) starts from its parent's, so this process
            # must never hold the generated rows (at 1M they took 11 GB, and every measurement reported that)
            subprocess.run([sys.executable, __file__, "--generate-only", str(data), str(args.rows)], check=True)
        size_mb = data.stat().st_size / 1e6
        results: dict[str, list[dict]] = {k: [] for k in KINDS}
        for _ in range(args.repeat):            # interleaved: a busy moment hits every kind alike
            for kind in KINDS:
                target = Path(tmp) / f"{kind}.out"
                target.unlink(missing_ok=True)
                out = subprocess.run([sys.executable, "-c", MEASURE, kind, str(data), str(target)],
                                     capture_output=True, text=True, check=True)
                results[kind].append(json.loads(out.stdout))
    rows = results["rageval"][0]["rows"]
    print(f"file: {rows:,} rows x 5 passages, {data.suffix[1:]}, {size_mb:.0f} MB; min/median/max of {args.repeat}")
    median = {k: statistics.median(r["seconds"] for r in v) for k, v in results.items()}
    for kind in KINDS:
        secs = sorted(r["seconds"] for r in results[kind])
        peak = statistics.median(r["peak_mb"] for r in results[kind])
        ratio = median["rageval"] / median[kind]
        reader = statistics.median(r["reader_mb"] for r in results[kind]) if kind == "rageval" else 0
        ours = statistics.median(r["peak_mb"] + r["reader_mb"] for r in results["rageval"])
        print(f"{LABELS[kind]:22s} {secs[0]:6.2f} / {statistics.median(secs):6.2f} / {secs[-1]:6.2f} s   "
              f"peak RSS {peak:5.0f} MB" + (f" + reader process {reader:4.0f} MB" if reader else "")
              + f"   rageval / this: {ratio:4.2f}x time, {ours / (peak + reader):4.2f}x memory (both processes)")


if __name__ == "__main__":
    main()
