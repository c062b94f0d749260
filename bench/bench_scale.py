"""The app at scale (issue 16): 10k / 100k / 1M run rows with 5 passages each, linked to a golden set.

For each size, in fresh processes (peak memory is each process's VmHWM):
- import: `rageval import run` against pandas reading the same JSONL alone (goal: ≤ 1.5× pandas, ≤ 1 GB at 1M);
- judge: an offline lexical judge over every row (`rageval judge`);
- metrics: `rageval metrics --json` (goal: ≤ 10 s at 1M) and the dashboard computation alone;
- first paint: the app's run table, opened on the run (goal: flat across sizes, ± 20%).

    HF_HUB_OFFLINE=1 .venv/bin/python bench/bench_scale.py [--sizes 10000,100000,1000000] [--no-pandas]

Needs ~3 GB of disk per million rows (the JSONL) plus the project; pandas reading 1M rows needs ~17 GB of memory
(--no-pandas skips it and compares with the 100k ratio instead).
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

from bench.bench_cost import timed  # noqa: E402

WORDS = ("retrieval augmented generation evaluates answers against gold chunks with judges recall precision "
         "latency cost slice golden adversarial keyword multi hop time sensitive edge easy").split()
SLICES = ["easy", "edge", "adversarial", "time-sensitive", "multi-hop", "keyword-heavy"]
GOLDEN = 20_000        # golden rows (run rows cycle over them)


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def generate(folder: Path, rows: int) -> tuple[Path, Path]:
    """golden.jsonl and run.jsonl, written a row at a time (the generator itself stays small)."""
    rng = random.Random(7)
    golden, run = folder / "golden.jsonl", folder / "run.jsonl"
    g = min(rows, GOLDEN)
    with golden.open("w") as fh:
        for i in range(g):
            fh.write(json.dumps({"id": f"g{i}", "question": f"golden question {i}?", "gold_answer": sentence(rng, 20),
                                 "gold_chunk_ids": [f"c{i}", f"c{i + 1}"], "slice_tag": SLICES[i % 6]}) + "\n")
    with run.open("w") as fh:
        for i in range(rows):
            gid = i % g
            chunks = [f"c{gid}" if rng.random() < 0.5 else f"c{rng.randrange(50_000)}"] + \
                [f"c{rng.randrange(50_000)}" for _ in range(4)]
            fh.write(json.dumps({
                "id": f"q{i}", "golden_id": f"g{gid}", "question": f"golden question {gid}?",
                "answer": sentence(rng, 40),
                "retrieved": [{"chunk_id": c, "text": sentence(rng, 60), "score": round(1 - k / 10, 2)}
                              for k, c in enumerate(chunks)],
                "latency_ms": round(rng.uniform(200, 3000), 1), "cost_usd": round(rng.uniform(1e-4, 1e-3), 6),
                "prompt_tokens": rng.randrange(200, 2000), "completion_tokens": rng.randrange(10, 300)}) + "\n")
    return golden, run


def dashboard_child(path: str) -> None:
    from rageval_desktop.core.metrics.dashboard import dashboard
    from rageval_desktop.core.store.project import Project

    with Project.open(path, read_only=True) as p:
        t0 = time.perf_counter()
        summary = dashboard(p, "v1")
        print(f"{time.perf_counter() - t0:.3f} {summary['slices']['all']['n']}")


def measure(n: int, pandas: bool) -> list[str]:
    cli = "rageval_desktop.cli"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        golden, run = generate(folder, n)
        made = time.perf_counter() - t0
        out = [f"{n:>9,} rows ({run.stat().st_size / 1e6:,.0f} MB JSONL, generated in {made:.0f} s)"]
        project = folder / "s.rageval"
        timed(cli, "new", str(project))
        timed(cli, "import", "golden", str(project), str(golden))
        ours = timed(cli, "import", "run", str(project), str(run), "--run", "v1", "--json")
        line = f"  import: {ours['s']:.1f} s, peak {ours['rss_mb']:,.0f} MB"
        if ours["helper_rss_mb"] > 1:
            line += f" + reader process {ours['helper_rss_mb']:,.0f} MB"
        if pandas:
            theirs = timed("bench.bench_cost", "_pandas", str(run))
            line += (f"; pandas reading the file alone {theirs['s']:.1f} s, peak {theirs['rss_mb']:,.0f} MB → "
                     f"{ours['s'] / theirs['s']:.2f}×")
        out.append(line)
        timed(cli, "judges", "add", str(project), "--name", "lex", "--metric", "correctness", "--kind", "lexical")
        judge = timed(cli, "judge", str(project), "--run", "v1", "--json")
        out.append(f"  lexical judge over every row: {judge['s']:.1f} s ({n / judge['s']:,.0f} rows/s), "
                   f"peak {judge['rss_mb']:,.0f} MB")
        metrics = timed(cli, "metrics", str(project), "--run", "v1", "--json")
        summary = json.loads(metrics["stdout"])
        dash = timed("bench.bench_scale", "_dashboard", str(project))
        seconds = dash["stdout"].split()[0]
        out.append(f"  metrics --json: {metrics['s']:.1f} s, peak {metrics['rss_mb']:,.0f} MB "
                   f"(n = {summary['slices']['all']['n']:,} questions); dashboard computation alone "
                   f"{float(seconds):.1f} s, "
                   f"peak {dash['rss_mb']:,.0f} MB")
        paint = timed("bench.bench_cost", "_paint", str(project))
        out.append(f"  app: {paint['stdout'].strip()}; peak {paint['rss_mb']:,.0f} MB")
        out.append(f"  project file {project.stat().st_size / 1e9:.2f} GB")
    return out


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "_dashboard":
        dashboard_child(sys.argv[2])
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--no-pandas", action="store_true")
    args = parser.parse_args()
    for n in (int(s) for s in args.sizes.split(",")):
        for line in measure(n, not args.no_pandas):
            print(line, flush=True)


if __name__ == "__main__":
    main()
