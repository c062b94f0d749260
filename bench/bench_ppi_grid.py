"""Issue 73, part 5 (measured, not yet mended): is the corrected (PPI) estimate ever worse than people alone?

On a grid of 20 cells — five populations (a strong or weak judge; continuous, 1-5 or yes/no scores; rare or
common judge errors) times 10, 20, 40 and 100 ratings, drawn uniformly from a slice of 400 judged questions — it
measures, over `--runs` draws per cell, the coverage and mean width of the app's corrected interval
(core.metrics.ppi.ppi_mean) beside a valid interval from the same ratings alone: Clopper-Pearson for yes/no, and for
scales Student's t with the standard error never below that of a share of changed questions when none of n was seen
to change (core.base.stats.paired_se: the plain t interval collapses when ten ratings agree). The target is the
slice's true mean (the mean over its 400 questions of the human score). The populations are drawn here, from the
descriptions below, not by the code under test.

    .venv/bin/python bench/bench_ppi_grid.py [--runs 500]

Goal (issue 73): the corrected interval covers >= 94% in every cell, is at most 1.05x as wide as people alone, and
at most 0.7x at 20 ratings where the judge is strong.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from rageval_desktop.core.base.stats import paired_se, t_quantile  # noqa: E402
from rageval_desktop.core.metrics.ppi import ppi_mean  # noqa: E402

SIZE = 400
RATINGS = (10, 20, 40, 100)


def population(kind: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, str]:
    """(human scores, judge scores) on 0-100 for one slice, and its scale."""
    if kind == "strong, continuous":            # the judge tracks people closely
        truth = np.clip(rng.normal(60, 20, SIZE), 0, 100)
        return truth, np.clip(truth + rng.normal(0, 5, SIZE), 0, 100), "scale"
    if kind == "weak, continuous":              # loosely, and 5 points high
        truth = np.clip(rng.normal(60, 20, SIZE), 0, 100)
        return truth, np.clip(truth + 5 + rng.normal(0, 25, SIZE), 0, 100), "scale"
    if kind == "strong 1-5, rare large errors":  # agrees, but wrong by 2-3 points on 5% of answers
        truth = np.clip(np.round(rng.normal(3.4, 1.0, SIZE)), 1, 5)
        wrong = rng.random(SIZE) < 0.05
        judge = np.where(wrong, np.clip(truth + rng.choice([-3, -2, 2, 3], SIZE), 1, 5), truth)
        return (truth - 1) * 25, (judge - 1) * 25, "scale"
    if kind == "weak 1-5, common errors":        # 0.8 points high, noisy everywhere
        truth = np.clip(np.round(rng.normal(3.2, 1.0, SIZE)), 1, 5)
        judge = np.clip(np.round(truth + 0.8 + rng.normal(0, 0.9, SIZE)), 1, 5)
        return (truth - 1) * 25, (judge - 1) * 25, "scale"
    if kind == "yes/no, rare errors":           # 60% pass; the judge flips 4% of verdicts
        truth = (rng.random(SIZE) < 0.6).astype(float)
        judge = np.where(rng.random(SIZE) < 0.04, 1 - truth, truth)
        return truth * 100, judge * 100, "yes/no"
    raise ValueError(kind)


KINDS = ("strong, continuous", "weak, continuous", "strong 1-5, rare large errors", "weak 1-5, common errors",
         "yes/no, rare errors")


def human_only(human: np.ndarray, scale: str) -> tuple[float, float]:
    """A valid 95% interval for the slice's mean from the ratings alone."""
    n = human.size
    if scale == "yes/no":
        from scipy.stats import beta

        k = int(round(float(human.sum()) / 100))
        low = 0.0 if k == 0 else float(beta.ppf(0.025, k, n - k + 1))
        high = 1.0 if k == n else float(beta.ppf(0.975, k + 1, n - k))
        return low * 100, high * 100
    mean, se, _ = paired_se(human)
    half = t_quantile(0.975, n - 1) * se
    return max(0.0, mean - half), min(100.0, mean + half)


def cell(kind: str, rated: int, runs: int, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    covered = {"ppi": 0, "human": 0}
    widths: dict[str, list[float]] = {"ppi": [], "human": []}
    for _ in range(runs):
        human, judge, scale = population(kind, rng)
        target = float(human.mean())
        chosen = rng.choice(SIZE, rated, replace=False)
        diffs = np.full(SIZE, np.nan)
        diffs[chosen] = human[chosen] - judge[chosen]
        found = ppi_mean(judge, diffs, minimum=2)
        for name, (low, high) in (("ppi", found["ci"]), ("human", human_only(human[chosen], scale))):
            covered[name] += low <= target <= high
            widths[name].append(high - low)
    ppi_w, human_w = float(np.mean(widths["ppi"])), float(np.mean(widths["human"]))
    return {"ppi_coverage": covered["ppi"] / runs, "human_coverage": covered["human"] / runs, "ppi_width": ppi_w,
            "human_width": human_w, "ratio": ppi_w / human_w}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=500)
    args = parser.parse_args()
    started = time.perf_counter()
    print(f"{args.runs} draws a cell; slices of {SIZE} judged questions, a uniform sample rated")
    print(f"{'population':<32} {'rated':>5} {'PPI covers':>10} {'people cover':>12} {'PPI width':>9} "
          f"{'people width':>12} {'ratio':>6}")
    for i, kind in enumerate(KINDS):
        for rated in RATINGS:
            r = cell(kind, rated, args.runs, seed=100 * i + rated)
            print(f"{kind:<32} {rated:>5} {r['ppi_coverage']:>10.1%} {r['human_coverage']:>12.1%} "
                  f"{r['ppi_width']:>9.1f} {r['human_width']:>12.1f} {r['ratio']:>6.2f}")
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
