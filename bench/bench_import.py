"""Import a generated 100k-row run (5 passages per row): seconds and peak memory, beside pandas reading the
same file alone. Each measurement runs in its own process so peak RSS is its own.

    .venv/bin/python bench/bench_import.py [--rows 100000] [--format jsonl|csv|parquet]
"""

from __future__ import annotations

import argparse
import json
import random
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
    if kind == "pandas":
        import pandas as pd
        if path.endswith(".jsonl"):
            frame = pd.read_json(path, lines=True)
        elif path.endswith(".csv"):
            frame = pd.read_csv(path)
        else:
            frame = pd.read_parquet(path)
        rows = len(frame)
    else:
        from rageval_desktop.core.importers import import_run
        from rageval_desktop.core.store.project import Project
        p = Project.create(project)
        rows = import_run(p, path, "bench").added
        p.close()
    seconds = time.perf_counter() - t0
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"kind": kind, "rows": rows, "seconds": round(seconds, 2), "peak_mb": round(peak_mb)}))
""")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--format", default="jsonl", choices=["jsonl", "csv", "parquet"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / f"run.{args.format}"
        generate(data, args.rows)
        size_mb = data.stat().st_size / 1e6
        results = []
        for kind in ("pandas", "rageval"):
            out = subprocess.run([sys.executable, "-c", MEASURE, kind, str(data), str(Path(tmp) / "b.rageval")],
                                 capture_output=True, text=True, check=True)
            results.append(json.loads(out.stdout))
        project_mb = (Path(tmp) / "b.rageval").stat().st_size / 1e6
    print(f"file: {args.rows:,} rows x 5 passages, {args.format}, {size_mb:.0f} MB; project file {project_mb:.0f} MB")
    for r in results:
        label = "pandas read alone " if r["kind"] == "pandas" else "rageval import run"
        print(f"{label}: {r['seconds']:6.2f} s   peak RSS {r['peak_mb']:5d} MB   ({r['rows']:,} rows)")


if __name__ == "__main__":
    main()
