"""Near-duplicate search over 10k golden questions: cold (embedding every question) and cached.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/bench_dedupe.py [--n 10000]
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

from rageval_desktop.core.golden.dedupe import golden_duplicates  # noqa: E402
from rageval_desktop.core.importers import import_golden  # noqa: E402
from rageval_desktop.core.store.project import Project  # noqa: E402

SUBJECTS = "python list dict set tuple generator decorator class module package exception thread socket file".split()
VERBS = "create sort reverse copy merge split iterate close open raise catch import serialize test".split()
TAILS = ["in Python?", "without a loop?", "efficiently?", "in one line?", "safely?", "for large inputs?"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=10_000)
    args = parser.parse_args()
    rng = random.Random(3)
    seen, rows = set(), []
    while len(rows) < args.n:
        q = f"How do I {rng.choice(VERBS)} a {rng.choice(SUBJECTS)} {rng.choice(TAILS)} (case {rng.randrange(10**6)})"
        if q not in seen:
            seen.add(q)
            rows.append({"id": f"q{len(rows)}", "question": q, "gold_answer": "a", "slice_tag": "easy"})
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "g.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        with Project.create(Path(tmp) / "d.rageval") as p:
            import_golden(p, path)
            t0 = time.perf_counter()
            cold = golden_duplicates(p, 0.9)
            t1 = time.perf_counter()
            warm = golden_duplicates(p, 0.9)
            t2 = time.perf_counter()
    print(f"{args.n:,} questions: cold {t1 - t0:.1f} s (embedding + FAISS), cached {t2 - t1:.2f} s; "
          f"{len(cold)} pairs at cosine >= 0.9 (same both times: {cold == warm})")


if __name__ == "__main__":
    main()
