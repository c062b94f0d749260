"""PPI coverage: over simulated projects, how often the corrected estimate's 95% CI covers the true mean of a slice
whose judge is 0.8 points high (1-5 scale), and how far the raw judge mean is off (core.metrics.ppi.simulate).

    .venv/bin/python bench/bench_ppi.py [--projects 1000] [--seeds 3]

The bar: coverage of at least 94% over >= 200 projects, and for judges with rare, large errors the rated rows may
miss, at 10, 20 and 40 ratings (issue 46); tests/core/test_ppi.py checks one seed of each.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from rageval_desktop.core.metrics.ppi import ppi_mean, simulate  # noqa: E402


def rare_errors(scale: str, err: float, rated: int, runs: int, seed: int, rows: int = 400) -> tuple[float, float]:
    """Coverage and mean width of the PPI 95% CI for a judge right on most rows and wrong on a share `err` of them
    by a whole verdict: on a yes/no scale it passes rows humans fail; on 1-5 it gives 5 where humans give 1 or 2.
    The populations are drawn here, independently of the app; only ppi_mean is the app's."""
    rng = np.random.default_rng(seed)
    covered, widths = 0, []
    for _ in range(runs):
        if scale == "yes/no":
            truth = (rng.random(rows) < 0.7).astype(float)
            judge = np.where((truth == 0) & (rng.random(rows) < err / 0.3), 1.0, truth)
            human, machine, true_mean = truth * 100, judge * 100, 70.0
        else:
            probs = [0.15, 0.15, 0.2, 0.25, 0.25]
            truth = rng.choice([1, 2, 3, 4, 5], rows, p=probs).astype(float)
            judge = np.where((truth <= 2) & (rng.random(rows) < err / 0.3), 5.0, truth)
            human, machine = (truth - 1) * 25, (judge - 1) * 25
            true_mean = (float(np.dot([1, 2, 3, 4, 5], probs)) - 1) * 25
        picked = rng.choice(rows, rated, replace=False)
        diffs = np.full(rows, np.nan)
        diffs[picked] = human[picked] - machine[picked]
        low, high = ppi_mean(machine, diffs, minimum=2)["ci"]
        covered += low <= true_mean <= high
        widths.append(high - low)
    return covered / runs, float(np.mean(widths))


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
    runs = max(500, args.projects * 2)
    print(f"\nRare, large judge errors ({runs} simulated slices of 400 rows a line; Monte Carlo error of a 95% "
          f"coverage about {100 * (0.05 * 0.95 / runs) ** 0.5:.1f} points):")
    print(f"{'scale':>6} {'wrong':>6} {'rated':>6} {'coverage':>8} {'CI width':>8}")
    for scale in ("yes/no", "1-5"):
        for err in (0.05, 0.10):
            for rated in (10, 20, 40):
                coverage, width = rare_errors(scale, err, rated, runs, seed=rated)
                print(f"{scale:>6} {err:>6.0%} {rated:>6} {coverage:>8.3f} {width:>8.1f}")


if __name__ == "__main__":
    main()
