"""The desktop bundle against the virtual environment it was built from, the same commands side by side in fresh
processes, interleaved: `rageval --version`, start to a rendered first window and exit (`rageval-desktop P
--screenshot`), and a PDF report (charts drawn by matplotlib). One warm-up run of each first (caches made where each
keeps them), then min/median/max wall seconds of --runs, and the ratio of the medians (the goal: frozen ≤ 1.1×).

    QT_QPA_PLATFORM=offscreen HF_HUB_OFFLINE=1 .venv/bin/python bench/bench_bundle.py [--runs 7]
        [--bundle dist/bundle/rageval-desktop]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    return took


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bundle", type=Path, default=ROOT / "dist" / "bundle" / "rageval-desktop")
    ap.add_argument("--venv-bin", type=Path, default=Path(sys.executable).parent)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    frozen = args.bundle.resolve()
    if not (frozen / "rageval-desktop").is_file():
        raise SystemExit(f"no bundle in {frozen}: make package first")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HF_HUB_OFFLINE": "1"}
    work = Path(tempfile.mkdtemp(prefix="bench-bundle-"))
    sides = {"venv": args.venv_bin, "frozen": frozen}
    for side, where in sides.items():        # each side's own demo (a bundle of an earlier release reads its own)
        subprocess.run([str(where / "rageval"), "demo", f"d-{side}.rageval"], cwd=work, env=env, check=True,
                       capture_output=True)
    cases = {
        "--version": lambda b, side: [str(b / "rageval"), "--version"],
        "first window": lambda b, side: [str(b / "rageval-desktop"), f"d-{side}.rageval", "--screenshot", "shot.png"],
        "report .pdf": lambda b, side: [str(b / "rageval"), "report", f"d-{side}.rageval", "--run", "v2",
                                        "--baseline", "v1", "--out", "r.pdf"],
    }
    times: dict[str, dict[str, list[float]]] = {c: {s: [] for s in sides} for c in cases}
    for case, argv in cases.items():
        for side, where in sides.items():
            timed(argv(where, side), work, env)               # warm-up: caches where each side keeps them
        for _ in range(args.runs):
            for side, where in sides.items():
                times[case][side].append(timed(argv(where, side), work, env))
    result = {}
    for case, by_side in times.items():
        row = {side: {"min": min(t), "median": statistics.median(t), "max": max(t)} for side, t in by_side.items()}
        row["ratio"] = row["frozen"]["median"] / row["venv"]["median"]
        result[case] = row
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"{'case':<14} {'venv min/med/max s':>24} {'frozen min/med/max s':>24} {'frozen/venv':>12}")
        for case, row in result.items():
            v, f = row["venv"], row["frozen"]
            print(f"{case:<14} {v['min']:>8.3f}{v['median']:>8.3f}{v['max']:>8.3f} "
                  f"{f['min']:>8.3f}{f['median']:>8.3f}{f['max']:>8.3f} {row['ratio']:>12.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
