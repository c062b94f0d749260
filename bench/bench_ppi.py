"""PPI coverage: over simulated projects, how often the corrected estimate's 95% CI covers the true mean of a slice
whose judge is 0.8 points high (1-5 scale), and how far the raw judge mean is off (core.metrics.ppi.simulate).

    .venv/bin/python bench/bench_ppi.py [--projects 1000] [--seeds 3]

The bar: coverage of at least 94% over >= 200 projects, and for judges with rare, large errors the rated rows may
miss, at 10, 20, 40 and 100 ratings (issue 46), and the gate's PPI cell both ways; tests/core/test_ppi.py checks one
seed of the first and the floor's parts.
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
from rageval_desktop.core.metrics.simulate import ppi_under_modes  # noqa: E402

TUNE = True     # PPI++'s lambda (the app's default); --plain: lambda 1


def delta_outcomes(drop: float, rated: int, runs: int, seed: int, rows: int = 400,
                   design: str = "uniform", scale: str = "1-5") -> dict[str, float]:
    """The gate's PPI cell (ppi_delta): two runs of a slice, the candidate's true mean `drop` points (0-100) lower;
    on "1-5" the judge is 0.8 points high with noise 0.7 on both runs, on "yes/no" (60% of answers pass) it passes
    12% of failing answers and fails 5% of passing ones. `rated` ratings per run, drawn by `design` (`drawn`; on
    yes/no the judge's verdict is its score band, 1 or 5) and weighted as drawn. How often the 95% interval of the
    difference lies wholly below 0 (a drop shown), wholly above -2 points (shown within a 2-point tolerance), and
    covers the true difference. Populations and samples drawn here; only ppi_delta is the app's."""
    from rageval_desktop.core.metrics.ppi import ppi_delta

    rng = np.random.default_rng(seed)
    shown = within = covered = 0
    for _ in range(runs):
        if scale == "yes/no":
            base = (rng.random(rows) < 0.6).astype(float)
            cand = np.where((base == 1) & (rng.random(rows) < drop / 60), 0.0, base)   # drop/100 of rows fail now
            ja, jb = (np.where(h == 1, rng.random(rows) >= 0.05, rng.random(rows) < 0.12).astype(float)
                      for h in (base, cand))
            base, cand, ja, jb = 1 + 4 * base, 1 + 4 * cand, 1 + 4 * ja, 1 + 4 * jb      # 1 or 5: 0 or 100 below
        else:
            base = np.clip(np.round(rng.normal(3.2, 1.0, rows)), 1, 5)
            cand = np.clip(np.round(base - drop / 25 + rng.normal(0, 0.3, rows)), 1, 5)
            ja = np.clip(base + 0.8 + rng.normal(0, 0.7, rows), 1, 5)
            jb = np.clip(cand + 0.8 + rng.normal(0, 0.7, rows), 1, 5)
        truth = float((cand - base).mean()) * 25
        da, db = np.full(rows, np.nan), np.full(rows, np.nan)
        wa, wb = np.ones(rows), np.ones(rows)
        (ia, pa), (ib, pb) = drawn(design, ja, rated, rng), drawn(design, jb, rated, rng)
        da[ia], db[ib] = (base[ia] - ja[ia]) * 25, (cand[ib] - jb[ib]) * 25
        wa[ia], wb[ib] = pa, pb
        weights = (None, None) if design == "uniform" else (wa, wb)
        found = ppi_delta((ja - 1) * 25, (jb - 1) * 25, da, db, *weights, minimum=2, tune=TUNE)["ci"]
        if found is None:
            continue                                  # too few drawn to decide: neither shown nor within
        low, high = found
        shown += high < 0
        within += low > -2
        covered += low <= truth <= high
    return {"shown": shown / runs, "within": within / runs, "covered": covered / runs}


def drawn(design: str, judge: np.ndarray, rated: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The rows a run's reviewers rate and their weights 1/p, under one of the desk's designs, drawn here:
    "uniform" (a simple random sample), "stratified" (three bands of the judge's score, below 2.5, 2.5-4 and above 4,
    an equal share of the ratings each: the bands the app stratifies by, allocated as it does) or "uncertain"
    (Poisson sampling, each row's probability growing as the judge's score nears the pass mark, 3.5 between fail and
    pass: p proportional to 1 / (0.25 + |score - 3.5|), capped at 1, summing to `rated`)."""
    rows = judge.size
    if design == "uniform":
        return rng.choice(rows, rated, replace=False), np.ones(rated)
    if design == "stratified":
        band = np.digitize(judge, [2.5, 4.0])
        picked, weights = [], []
        bands = [h for h in range(3) if (band == h).any()]     # (a yes/no judge fills two of the three)
        share = {h: rated // len(bands) + (1 if k < rated % len(bands) else 0) for k, h in enumerate(bands)}
        for h in bands:
            members = np.flatnonzero(band == h)
            take = min(share[h], members.size)
            if take:
                picked.append(rng.choice(members, take, replace=False))
                weights.append(np.full(take, members.size / take))
        return np.concatenate(picked), np.concatenate(weights)
    priority = 1.0 / (0.25 + np.abs(judge - 3.5))
    p = np.zeros(rows)
    capped = np.zeros(rows, bool)
    while True:                                   # inclusion probabilities at size `rated`, the largest capped at 1
        room = rated - capped.sum()
        p[~capped] = room * priority[~capped] / priority[~capped].sum()
        over = ~capped & (p >= 1.0)
        if not over.any():
            break
        capped |= over
    p[capped] = 1.0
    picked = np.flatnonzero(rng.random(rows) < p)
    return picked, 1.0 / p[picked]


def rare_errors(scale: str, err: float, rated: int, runs: int, seed: int, rows: int = 400) -> tuple[float, float]:
    """Coverage and mean width of the PPI 95% CI for a judge right on most rows and wrong on a share `err` of them
    by a whole verdict: on a yes/no scale it passes rows humans fail; on 1-5 it gives 5 where humans give 1 or 2
    (scale "1-5 high": and on every other row it is 0.8 points high, give or take 0.7: small errors everywhere).
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
            close = truth if scale == "1-5" else np.clip(truth + 0.8 + rng.normal(0, 0.7, rows), 1, 5)
            judge = np.where((truth <= 2) & (rng.random(rows) < err / 0.3), 5.0, close)
            human, machine = (truth - 1) * 25, (judge - 1) * 25
            true_mean = (float(np.dot([1, 2, 3, 4, 5], probs)) - 1) * 25
        picked = rng.choice(rows, rated, replace=False)
        diffs = np.full(rows, np.nan)
        diffs[picked] = human[picked] - machine[picked]
        low, high = ppi_mean(machine, diffs, minimum=2, tune=TUNE)["ci"]
        covered += low <= true_mean <= high
        widths.append(high - low)
    return covered / runs, float(np.mean(widths))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--projects", type=int, default=1000)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--plain", action="store_true", help="plain PPI (lambda 1), not PPI++'s tuned lambda")
    args = parser.parse_args()
    global TUNE
    TUNE = not args.plain
    print(f"{'rated/slice':>11} {'rows/slice':>10} {'seed':>4} {'coverage':>8} {'raw err':>8} {'ppi err':>8} "
          f"{'CI width':>8} {'seconds':>7}")
    for rated, rows in ((10, 400), (20, 400), (40, 400), (100, 1000)):
        for seed in range(args.seeds):
            started = time.perf_counter()
            r = simulate(args.projects, seed=seed, rows_per_slice=rows, rated_per_slice=rated, tune=TUNE)
            print(f"{rated:>11} {rows:>10} {seed:>4} {r['coverage']:>8.3f} {r['raw_mean_error']:>+8.2f} "
                  f"{r['ppi_mean_error']:>+8.2f} {r['mean_ci_width']:>8.2f} {time.perf_counter() - started:>7.2f}")
    runs = max(500, args.projects * 2)
    print(f"\nRare, large judge errors ({runs} simulated slices of 400 rows a line; Monte Carlo error of a 95% "
          f"coverage about {100 * (0.05 * 0.95 / runs) ** 0.5:.1f} points):")
    print(f"{'scale':>8} {'wrong':>6} {'rated':>6} {'coverage':>8} {'CI width':>8}")
    for scale in ("yes/no", "1-5", "1-5 high"):
        for err in (0.05, 0.10, 0.20):
            for rated in (10, 20, 40, 100):
                coverage, width = rare_errors(scale, err, rated, runs, seed=rated)
                print(f"{scale:>8} {err:>6.0%} {rated:>6} {coverage:>8.3f} {width:>8.1f}")
    print(f"\nThe gate's PPI cell (ppi_delta): a drop of 0 or 10 points between two runs, the judge 0.8 points high; "
          f"{runs // 2} simulated pairs a line. 'drop shown' at 0 is the false alarm, at 10 the power; 'within 2' at 0 "
          f"is the chance of a pass on a 2-point tolerance.")
    print(f"{'drop':>5} {'rated':>6} {'drop shown':>10} {'within 2':>9} {'coverage':>9}")
    for drop in (0.0, 10.0):
        for rated in (20, 40, 100):
            r = delta_outcomes(drop, rated, runs // 2, seed=rated + int(drop))
            print(f"{drop:>5.0f} {rated:>6} {r['shown']:>10.1%} {r['within']:>9.1%} {r['covered']:>9.1%}")
    print(f"\nThe same cell with the ratings drawn as the desk's weighted designs draw them (drawn: stratified by "
          f"the judge's score, or uncertain first) and weighted as drawn; {runs // 2} pairs a line:")
    print(f"{'design':>10} {'drop':>5} {'rated':>6} {'drop shown':>10} {'within 2':>9} {'coverage':>9}")
    for design in ("stratified", "uncertain"):
        for drop in (0.0, 10.0):
            for rated in (40, 100):
                r = delta_outcomes(drop, rated, runs // 2, seed=rated + int(drop), design=design)
                print(f"{design:>10} {drop:>5.0f} {rated:>6} {r['shown']:>10.1%} {r['within']:>9.1%} "
                      f"{r['covered']:>9.1%}")
    print("\nThe corrected mean when a sample is rated part-way, in the order the desk shows its targets, and "
          "weighted as the app weighs the rated prefix (core.metrics.simulate's slice and sampler, 1,000 samples a "
          "line; a slice of 400, the judge one point generous on weak answers):")
    print(f"{'mode':>10} {'rated':>9} {'bias (points)':>14} {'coverage':>9}")
    for mode in ("uniform", "stratified", "uncertain"):
        for rated, size in ((30, 40), (40, 40), (75, 100)):
            r = ppi_under_modes(mode, rated=rated, drawn=size, runs=1000)
            print(f"{mode:>10} {f'{rated} of {size}':>9} {r['bias']:>+14.2f} {r['coverage']:>9.1%}")
    print(f"\nThe same cell on a yes/no scale (60% of answers pass; the judge passes 12% of failing answers and fails "
          f"5% of passing ones), each design; {runs // 2} pairs a line:")
    print(f"{'design':>10} {'drop':>5} {'rated':>6} {'drop shown':>10} {'within 2':>9} {'coverage':>9}")
    for design in ("uniform", "stratified", "uncertain"):
        for drop in (0.0, 10.0):
            for rated in (40, 100):
                r = delta_outcomes(drop, rated, runs // 2, seed=rated + int(drop), design=design, scale="yes/no")
                print(f"{design:>10} {drop:>5.0f} {rated:>6} {r['shown']:>10.1%} {r['within']:>9.1%} "
                      f"{r['covered']:>9.1%}")


if __name__ == "__main__":
    main()
