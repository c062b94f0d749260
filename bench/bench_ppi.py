"""PPI coverage: over simulated projects, how often the corrected estimate's 95% CI covers the true mean of a slice
whose judge is 0.8 points high (1-5 scale), and how far the raw judge mean is off (core.metrics.ppi.simulate).

    .venv/bin/python bench/bench_ppi.py [--projects 1000] [--seeds 3]

The issue's bar: coverage 93-97% over >= 200 projects; tests/core/test_ppi.py checks one seed of 200.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rageval_desktop.core.metrics.ppi import simulate  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--projects", type=int, default=1000)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    print(f"{'rated/slice':>11} {'rows/slice':>10} {'seed':>4} {'coverage':>8} {'raw err':>8} {'ppi err':>8} "
          f"{'CI width':>8} {'seconds':>7}")
    for rated, rows in ((10, 400), (20, 400), (40, 400), (100, 1000)):
        for seed in range(args.seeds):
            started = time.perf_counter()
            r = simulate(args.projects, seed=seed, rows_per_slice=rows, rated_per_slice=rated)
            print(f"{rated:>11} {rows:>10} {seed:>4} {r['coverage']:>8.3f} {r['raw_mean_error']:>+8.2f} "
                  f"{r['ppi_mean_error']:>+8.2f} {r['mean_ci_width']:>8.2f} {time.perf_counter() - started:>7.2f}")


if __name__ == "__main__":
    main()
