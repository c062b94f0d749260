"""Cost that follows the work, not the project's size (issue 15): one benchmark per everyday action, each at three
sizes, each measured in a fresh process (its own peak RSS), projects built directly in SQL so setting up 100k rows
takes seconds.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/bench_cost.py ITEM [--sizes 1000,10000,100000]

ITEM:
  golden   import 10 new golden rows into a set of N (the existing questions' embeddings cached), default flags;
           then the follow-up near-duplicate check of the 10 new rows, beside embedding 10 texts in a fresh process
  open     `rageval info P` on projects of ~5 MB, ~100 MB and ~1 GB (--sizes are MB here), median of 5
  judge    the offline lexical judge over a run of N rows (rows/s, peak RSS), then the same job again (a no-op)
  paint    first paint of the run table for a run of N rows (QT_QPA_PLATFORM=offscreen)
  import   `rageval import run` of an N-row JSONL (5 passages per row) beside pandas reading the file alone
  all      every item at its default sizes
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CACHE = Path(tempfile.gettempdir()) / "rageval-bench-cost"
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
WORDS = ("retrieval augmented generation evaluates answers against gold chunks with judges recall precision "
         "latency cost slice golden adversarial keyword multi hop time sensitive edge easy").split()
TIMED = textwrap.dedent("""
    import json, runpy, sys, time
    t0 = time.perf_counter()
    sys.argv = sys.argv[1:]
    code = 0
    try:
        runpy.run_module(sys.argv[0], run_name="__main__")
    except SystemExit as exc:
        code = exc.code or 0
    sys.stdout.flush()
    seconds = time.perf_counter() - t0
    # VmHWM, not ru_maxrss: Linux carries the parent's high-water mark into ru_maxrss across fork + exec
    hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))
    # a helper process (an import's reader) counts too: the largest child's peak (over-stated, if anything, by
    # what the parent held when it forked)
    import resource
    helper = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(json.dumps({"s": seconds, "rss_mb": hwm / 1024, "helper_rss_mb": helper / 1024, "code": code}),
          file=sys.stderr)
""")


def timed(module: str, *args: str) -> dict:
    """Run `python -m module args` in a fresh process: wall seconds (after interpreter start) and peak RSS."""
    done = subprocess.run([sys.executable, "-c", TIMED, module, *args], cwd=ROOT, env=ENV, capture_output=True,
                          text=True)
    last = done.stderr.strip().splitlines()[-1]
    out = json.loads(last)
    if out["code"]:
        raise SystemExit(f"{module} {' '.join(args)} failed:\n{done.stderr[-2000:]}")
    out["stdout"] = done.stdout
    return out


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def run_project(path: Path, rows: int, passages: int = 5) -> None:
    """A project with N golden rows and one run 'v1' of N rows linked to them (answers, 5 passages each)."""
    from rageval_desktop.core.store.project import Project

    rng = random.Random(5)
    with Project.create(path) as p, p.write("fill") as w:
        w.execute("INSERT INTO slices (name, position) VALUES ('easy', 0)")
        w.executemany("INSERT INTO golden_rows (id, question, question_norm, gold_answer, slice_tag, created_at, "
                      "updated_at) VALUES (?, ?, ?, ?, 'easy', 'now', 'now')",
                      [(f"g{i}", f"question {i}?", f"question {i}", sentence(rng, 15)) for i in range(rows)])
        w.execute("INSERT INTO runs (name, created_at) VALUES ('v1', 'now')")
        w.executemany("INSERT INTO run_rows (id, run_id, position, external_id, golden_id, question, answer) "
                      "VALUES (?, 1, ?, ?, ?, ?, ?)",
                      [(i + 1, i, f"g{i}", f"g{i}", f"question {i}?", sentence(rng, 30)) for i in range(rows)])
        w.executemany("INSERT INTO retrieved_passages (run_row_id, rank, chunk_id, text) VALUES (?, ?, ?, ?)",
                      [(i + 1, r, f"c{i}-{r}", sentence(rng, 40)) for i in range(rows) for r in range(1, passages + 1)])


# --- items ---------------------------------------------------------------------------------------------------
def bench_golden(sizes: list[int]) -> list[str]:
    import numpy as np

    from rageval_desktop.core.judges.embedded import MINILM_ID, text_hash
    from rageval_desktop.core.store.project import Project

    lines = []
    model_only = timed("bench.bench_cost", "_embed10")
    lines.append(f"embedding 10 questions in a fresh process (torch + MiniLM load + encode): {model_only['s']:.2f} s, "
                 f"{model_only['rss_mb']:.0f} MB")
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "g.rageval"
            rng = np.random.default_rng(1)
            with Project.create(path) as p, p.write("fill") as w:
                qs = [f"How do I do thing number {i} in a golden set?" for i in range(n)]
                w.executemany("INSERT INTO golden_rows (id, question, question_norm, gold_answer, slice_tag, "
                              "created_at, updated_at) VALUES (?, ?, ?, 'a', 'easy', 'now', 'now')",
                              [(f"g{i}", q, q.lower(), ) for i, q in enumerate(qs)])
                vecs = rng.standard_normal((n, 384)).astype(np.float32)
                vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
                w.executemany("INSERT INTO embeddings (text_hash, model_id, dim, vector) VALUES (?, ?, 384, ?)",
                              [(text_hash(q), MINILM_ID, v.tobytes()) for q, v in zip(qs, vecs, strict=True)])
            new = Path(tmp) / "new.jsonl"
            new.write_text("".join(json.dumps({"question": f"A brand new question {k} about slices?",
                                               "gold_answer": "b", "slice_tag": "easy"}) + "\n" for k in range(10)))
            plain = timed("rageval_desktop.cli", "import", "golden", str(path), str(new), "--json")
            first = timed("rageval_desktop.cli", "golden", "dedupe", str(path), "--new", "--json")
            new2 = Path(tmp) / "new2.jsonl"
            new2.write_text(new.read_text().replace("brand new", "second new"))
            try:
                checked = timed("rageval_desktop.cli", "import", "golden", str(path), str(new2), "--dedupe-check",
                                "--json")
                extra = (f"; first check (stores the set's vectors) {first['s']:.2f} s; then an import of 10 with "
                         f"--dedupe-check {checked['s']:.2f} s, {checked['rss_mb']:.0f} MB "
                         f"(the check ≈ {checked['s'] - plain['s']:.2f} s)")
            except SystemExit:   # a version without the flag (the check was the default)
                checked = timed("rageval_desktop.cli", "import", "golden", str(path), str(new2),
                                "--no-dedupe-check", "--json")
                extra = f"; with --no-dedupe-check {checked['s']:.2f} s, {checked['rss_mb']:.0f} MB"
            lines.append(f"{n:>7,} golden rows: import 10 (default flags) {plain['s']:.2f} s, "
                         f"{plain['rss_mb']:.0f} MB{extra}")
    return lines


def embed10() -> None:
    from rageval_desktop.core.judges.embedded import load_model

    load_model().encode([f"A brand new question {k} about slices?" for k in range(10)], normalize_embeddings=True)


def build_sized(path: Path, megabytes: int) -> None:
    """A project of about this size: a small run plus corpus chunks of 4 KB."""
    run_project(path, 1000)
    import sqlite3

    conn = sqlite3.connect(path)
    chunks = max(0, (megabytes * 1_000_000 - path.stat().st_size) // 4300)
    conn.execute("BEGIN")
    conn.execute("WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?) "
                 "INSERT INTO corpus_chunks (chunk_id, doc_id, text) SELECT 'k' || i, 'd' || (i / 10), "
                 "hex(randomblob(2000)) FROM n", (chunks,))
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def bench_open(sizes: list[int]) -> list[str]:
    lines = []
    CACHE.mkdir(exist_ok=True)
    for mb in sizes:
        path = CACHE / f"open-{mb}mb.rageval"
        if not path.exists():
            build_sized(path, mb)
        size = path.stat().st_size / 1e6
        times = [timed("rageval_desktop.cli", "info", str(path), "--json")["s"] for _ in range(5)]
        opens = [float(timed("bench.bench_cost", "_open", str(path))["stdout"]) for _ in range(5)]
        cold = _cold_open(path)
        median_ms = statistics.median(opens) * 1000
        lines.append(f"{size:>7.0f} MB project: Project.open for writing + close median {median_ms:.1f}"
                     f" ms; rageval info median {statistics.median(times):.3f} s (min {min(times):.3f}); "
                     f"rageval info after dropping the file from the page cache {cold}")
    return lines


def _cold_open(path: Path) -> str:
    """The first open: the file's pages evicted from the OS cache first (posix_fadvise DONTNEED)."""
    try:
        fd = os.open(path, os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
    except (AttributeError, OSError):
        return "n/a"
    return f"{timed('rageval_desktop.cli', 'info', str(path), '--json')['s']:.3f} s"


def open_close(path: str) -> None:
    from rageval_desktop.core.store.project import Project

    t0 = time.perf_counter()
    Project.open(path).close()
    print(time.perf_counter() - t0)


def bench_judge(sizes: list[int]) -> list[str]:
    lines = []
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "j.rageval"
            run_project(path, n)
            timed("rageval_desktop.cli", "judges", "add", str(path), "--name", "lex", "--metric", "correctness",
                  "--kind", "lexical")
            first = timed("rageval_desktop.cli", "judge", str(path), "--run", "v1", "--judge", "lex", "--json")
            again = timed("rageval_desktop.cli", "judge", str(path), "--run", "v1", "--judge", "lex", "--json")
            stats = json.loads(first["stdout"])
            done = stats.get("done", stats.get("stats", {}).get("done"))
            lines.append(f"{n:>7,} rows: lexical judge {first['s']:.2f} s ({n / first['s']:,.0f} rows/s incl. "
                         f"start-up; {done} judged), peak {first['rss_mb']:.0f} MB; no-op re-run {again['s']:.3f} s, "
                         f"{again['rss_mb']:.0f} MB")
    return lines


def bench_paint(sizes: list[int]) -> list[str]:
    lines = []
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "p.rageval"
            run_project(path, n, passages=3)
            out = timed("bench.bench_cost", "_paint", str(path))
            lines.append(f"{n:>7,} rows: {out['stdout'].strip()}")
    return lines


def paint(path: str) -> None:
    import sqlite3

    from bench.bench_gui import close_and_wait, open_window
    from rageval_desktop.gui.app import make_app

    conn = sqlite3.connect(path)   # a one-row run to switch to between measurements
    conn.execute("INSERT INTO runs (name, created_at) VALUES ('tiny', 'now')")
    conn.execute("INSERT INTO run_rows (run_id, position, external_id, question) SELECT id, 0, 'x', 'q?' FROM runs "
                 "WHERE name = 'tiny'")
    conn.commit()
    conn.close()
    app = make_app()
    w = open_window(app, Path(path))
    w.resize(1280, 720)
    app.processEvents()
    firsts = []
    for _ in range(5):
        w.select(run="tiny")
        app.processEvents()
        t0 = time.perf_counter()
        w.select(run="v1")
        w.rows.table.viewport().repaint()
        firsts.append((time.perf_counter() - t0) * 1000)
    app.processEvents()
    last = w.rows.table.model().rowCount()
    close_and_wait(app, w)
    print(f"first paint median {statistics.median(firsts):.1f} ms (min {min(firsts):.1f}); rows known {last:,}")


def bench_import(sizes: list[int]) -> list[str]:
    from bench.bench_import import generate

    lines = []
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            data = Path(tmp) / "run.jsonl"
            generate(data, n)
            pandas = timed("bench.bench_cost", "_pandas", str(data))
            project = Path(tmp) / "i.rageval"
            timed("rageval_desktop.cli", "new", str(project))
            ours = timed("rageval_desktop.cli", "import", "run", str(project), str(data), "--run", "v1", "--json")
            helper = f" + reader process {ours['helper_rss_mb']:.0f} MB" if ours["helper_rss_mb"] > 1 else ""
            lines.append(f"{n:>7,} rows ({data.stat().st_size / 1e6:.0f} MB JSONL): import {ours['s']:.2f} s, "
                         f"{ours['rss_mb']:.0f} MB{helper}; pandas read alone {pandas['s']:.2f} s, "
                         f"{pandas['rss_mb']:.0f} MB → {ours['s'] / pandas['s']:.2f}×")
    return lines


def read_pandas(path: str) -> None:
    import pandas as pd

    pd.read_json(path, lines=True)


ITEMS = {"golden": (bench_golden, [1000, 10000, 100000]), "open": (bench_open, [5, 100, 1000]),
         "judge": (bench_judge, [1000, 10000, 100000]), "paint": (bench_paint, [1000, 10000, 100000]),
         "import": (bench_import, [1000, 10000, 100000])}


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1].startswith("_"):   # a measured child
        {"_embed10": lambda: embed10(), "_paint": lambda: paint(sys.argv[2]), "_open": lambda: open_close(sys.argv[2]),
         "_pandas": lambda: read_pandas(sys.argv[2])}[sys.argv[1]]()
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("item", choices=[*ITEMS, "all"])
    parser.add_argument("--sizes", help="comma-separated sizes (rows; MB for open)")
    args = parser.parse_args()
    for name in ITEMS if args.item == "all" else [args.item]:
        func, default = ITEMS[name]
        sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else default
        print(f"== {name}")
        for line in func(sizes):
            print(line, flush=True)


if __name__ == "__main__":
    main()
