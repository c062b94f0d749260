"""`rageval info` at three file sizes (fresh processes, min/median/max of --repeats): it reads counts the triggers
keep (schema 16) instead of counting the rows, so its time should not grow with the file (goal: flat ±20%). The
projects are bench_table's (one golden row per run row, 5 passages, 2 judges), built once in --dir.

    .venv/bin/python bench/bench_info.py [--sizes 1000,200000,1000000] [--repeats 5] [--dir /tmp]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_table import big_project  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,200000,1000000")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--dir", default="/tmp")
    args = parser.parse_args()
    rageval = str(Path(sys.executable).parent / "rageval")
    paths = []
    for size in (int(s) for s in args.sizes.split(",")):
        path = Path(args.dir) / f"bench-info-{size}.rageval"
        if not path.exists():
            big_project(path, size)
        paths.append(path)
    times: dict[Path, list[float]] = {p: [] for p in paths}
    for _ in range(args.repeats):
        for path in paths:                      # interleaved
            t0 = time.perf_counter()
            subprocess.run([rageval, "info", str(path), "--json"], check=True, capture_output=True)
            times[path].append(time.perf_counter() - t0)
    for path, values in times.items():
        print(f"{path.stat().st_size / 1e6:>8,.0f} MB: rageval info {min(values):.3f}/{statistics.median(values):.3f}/"
              f"{max(values):.3f} s")


if __name__ == "__main__":
    main()
