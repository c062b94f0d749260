"""The gate's selective estimator, by simulation (issue 47): two runs' pass rates read from a selective judge's
verdicts on the rows it decides (corrected by its net error on each run's own rated decided rows) and the reviewers'
on a sample of the rows it leaves (core.metrics.selective_cells.cell, the app's own function), compared as the gate
compares a cell (core.base.stats.drop_p_value and lower_bound, one cell at α 0.05).

Populations are drawn here, independently of the code under test: each run has N rows; the reviewers pass exactly
π·N of them, in a random order (π_baseline 0.6, π_candidate 0.6 − Δ: the runs differ by exactly Δ points); the
judge's confidence is Beta(2, 1.2) and its pass/fail is wrong with probability e0·(1 − c)^k (steep: 0.6, 3; gentle:
0.35, 1), in both runs alike — or, in the "drifts" line, 1.5 times as often on the candidate. The audit rates n_cal
rows of each run uniformly; the judge's level is chosen by core.review.selective.select on them all; each run's
decided rows are corrected by its own rated ones; the desk rates m of each run's abstentions (all when m ≥ their
number).

Reported per line (1,000 simulated gates): the 95% interval's coverage of the true difference of the reviewers'
pass rates (in points); at Δ = the allowed drop (2 points) the rate of a regression shown (a false alarm: goal ≤ 5%);
at Δ = 2 the rate of "shown within 2" (a false pass: goal ≤ 5%); at Δ = 0 the rate shown within 2 and within 5
(power); at Δ = 8 the rate a regression is shown (power); and the mean share of rows the judge decides.

    .venv/bin/python bench/bench_selective_gate.py               # 1,000 gates a line (about 2 minutes)
    .venv/bin/python bench/bench_selective_gate.py --runs 300
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rageval_desktop.core.base.stats import drop_p_value, lower_bound  # noqa: E402
from rageval_desktop.core.metrics.selective_cells import cell  # noqa: E402
from rageval_desktop.core.review.selective import select  # noqa: E402

ALLOWED = 2.0
ALPHA = 0.05


def run_rows(n: int, pi: float, e0: float, k: float, drift: float, rng: np.random.Generator) -> dict[str, np.ndarray]:
    human = rng.permutation(np.arange(n) < round(pi * n))      # exactly π·N pass: the runs differ by exactly Δ
    conf = rng.beta(2.0, 1.2, n)
    wrong = rng.random(n) < np.minimum(1.0, drift * e0 * (1.0 - conf) ** k)
    return {"human": human, "conf": conf, "judge": np.where(wrong, ~human, human)}


def parts(r: dict[str, np.ndarray], cal: np.ndarray, level: float, m: int, rng: np.random.Generator) -> dict:
    decided = r["conf"] >= level
    left = np.flatnonzero(~decided)
    rated = rng.choice(left, min(m, left.size), replace=False) if left.size else left
    sure = cal[decided[cal]]
    return {"N": int(r["human"].size), "D": int(decided.sum()), "JP": int(r["judge"][decided].sum()),
            "A": int(left.size), "rated": list(100.0 * r["human"][rated]),
            "cal": [(bool(r["human"][i]), bool(r["judge"][i]), 1.0) for i in sure]}


def one_gate(n: int, n_cal: int, m: int, delta: float, e0: float, k: float, drift: float,
             rng: np.random.Generator) -> dict | None:
    a = run_rows(n, 0.6, e0, k, 1.0, rng)
    b = run_rows(n, 0.6 - delta / 100.0, e0, k, drift, rng)
    cal_a, cal_b = rng.choice(n, n_cal, replace=False), rng.choice(n, n_cal, replace=False)   # each run's audit
    conf = np.r_[a["conf"][cal_a], b["conf"][cal_b]]
    agree = np.r_[a["judge"][cal_a] == a["human"][cal_a], b["judge"][cal_b] == b["human"][cal_b]]
    found = select(conf, agree, pool=np.r_[a["conf"], b["conf"]])
    if found.level is None:
        return None
    pa, pb = parts(a, cal_a, found.level, m, rng), parts(b, cal_b, found.level, m, rng)
    if (pa["A"] and not pa["rated"]) or (pb["A"] and not pb["rated"]):
        return None
    c = cell(pa, pb)
    truth = 100.0 * (b["human"].mean() - a["human"].mean())
    p = drop_p_value(c["delta"], c["se"], c["df"], ALLOWED)
    upper = -lower_bound(c["delta"], c["se"], c["df"], ALPHA)
    return {"covered": c["ci"][0] <= truth <= c["ci"][1], "regression": p <= ALPHA, "within2": upper <= ALLOWED,
            "within5": upper <= 5.0, "coverage": (pa["D"] / pa["N"] + pb["D"] / pb["N"]) / 2}


def line(args: argparse.Namespace, n: int, n_cal: int, m: int, delta: float, relation: tuple[float, float],
         drift: float, rng: np.random.Generator) -> dict:
    found = [g for _ in range(args.runs) if (g := one_gate(n, n_cal, m, delta, *relation, drift, rng)) is not None]
    share = lambda key: float(np.mean([g[key] for g in found])) if found else float("nan")  # noqa: E731
    return {"decides": len(found) / args.runs, "covered": share("covered"), "regression": share("regression"),
            "within2": share("within2"), "within5": share("within5"), "coverage": share("coverage")}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=1000)
    args = parser.parse_args()
    rng = np.random.default_rng(4747)
    started = time.perf_counter()
    print(f"{args.runs} simulated gates a line; one cell at α {ALPHA:g}, allowed drop {ALLOWED:g} points. 'judged': "
          "gates where the judge decides some rows (the rest are left out of the shares).")
    head = (f"{'relation':<8} {'N':>5} {'cal':>4} {'desk m':>6} {'Δ':>3} {'judged':>7} {'decided':>8} "
            f"{'covered':>8} {'regr.':>6} {'≤2':>6} {'≤5':>6}")
    print(head)
    relations = {"steep": (0.6, 3.0), "gentle": (0.35, 1.0)}
    for name, relation in relations.items():
        for n, n_cal, m in ((500, 60, 100), (500, 150, 100), (2000, 200, 300), (2000, 400, 10_000)):
            for delta in (0.0, ALLOWED, 8.0):
                r = line(args, n, n_cal, m, delta, relation, 1.0, rng)
                desk = "all" if m >= n else str(m)
                print(f"{name:<8} {n:>5} {n_cal:>4} {desk:>6} {delta:>3g} {r['decides']:>7.1%} {r['coverage']:>8.1%} "
                      f"{r['covered']:>8.1%} {r['regression']:>6.1%} {r['within2']:>6.1%} {r['within5']:>6.1%}",
                      flush=True)
    print("\nThe judge errs 1.5 times as often on the candidate's rows (its calibration does not travel):")
    print(head)
    for delta in (0.0, ALLOWED):
        r = line(args, 2000, 400, 10_000, delta, relations["steep"], 1.5, rng)
        print(f"{'drifts':<8} {2000:>5} {400:>4} {'all':>6} {delta:>3g} {r['decides']:>7.1%} {r['coverage']:>8.1%} "
              f"{r['covered']:>8.1%} {r['regression']:>6.1%} {r['within2']:>6.1%} {r['within5']:>6.1%}", flush=True)
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
