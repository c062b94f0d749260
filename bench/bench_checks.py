"""Error rates of the judge checks (issue 30), by simulation with the app's own decision functions:

- probes (core.jobs.checks.kind_verdict): how often a judge exactly at the boundary on every kind — it moves the
  score down on half of the damaging perturbations, raises it on 1 in 5 under pad and inject — fails its probe
  (a false alarm: it fails its gate licence), and how often judges that are clearly bad or clearly good are caught
  or passed, for samples of 30, 50 and 100 rows;
- stability (the flip rate's Wilson interval, core.base.stats.wilson): how often it covers the true row flip rate of
  a judge that flips each verdict with probability q, at 5 repeats.

    .venv/bin/python bench/bench_checks.py               # 2,000 simulated checks per line (under a minute)
    .venv/bin/python bench/bench_checks.py --runs 500
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from rageval_desktop.core.base.perturb import BIAS, DAMAGING, KINDS
from rageval_desktop.core.base.stats import wilson
from rageval_desktop.core.jobs.checks import kind_verdict


def probe_outcomes(right_damaging: float, up_not_up: float, n: int, runs: int, rng: np.random.Generator) -> dict:
    """Share of simulated probes (all seven kinds, n counted rows each) that fail, pass, or need more data."""
    out = {"fail": 0, "pass": 0, "needs more data": 0}
    for _ in range(runs):
        verdicts = []
        for kind in KINDS:
            damaging = kind in DAMAGING
            right = int(rng.binomial(n, right_damaging)) if damaging else n - int(rng.binomial(n, up_not_up))
            verdicts.append(kind_verdict(right, n, damaging, len(KINDS))[0])
        outcome = "fail" if "fail" in verdicts else "pass" if all(v == "pass" for v in verdicts) else \
            "needs more data"
        out[outcome] += 1
    return {k: v / runs for k, v in out.items()}


def battery_outcomes(moved: list[float], n: int, runs: int, rng: np.random.Generator) -> dict:
    """Share of simulated bias batteries (its four kinds, n counted rows each; kind k moves the verdict the wrong
    way — any move for passage_order, up for the rest — on a share moved[k] of rows) that fail, pass, or need more."""
    out = {"fail": 0, "pass": 0, "needs more data": 0}
    for _ in range(runs):
        verdicts = [kind_verdict(n - int(rng.binomial(n, share)), n, False, len(BIAS))[0] for share in moved]
        outcome = "fail" if "fail" in verdicts else "pass" if all(v == "pass" for v in verdicts) else \
            "needs more data"
        out[outcome] += 1
    return {k: v / runs for k, v in out.items()}


def flip_coverage(q: float, repeats: int, rows: int, runs: int, rng: np.random.Generator) -> tuple[float, float]:
    """(coverage of the true flip rate by the 95% Wilson interval, the true rate)."""
    truth = 1 - (1 - q) ** repeats - q ** repeats
    covered = 0
    for _ in range(runs):
        flips = rng.random((rows, repeats)) < q
        flipped = int(np.sum(flips.any(axis=1) & ~flips.all(axis=1)))
        low, high = wilson(flipped, rows)
        covered += low <= truth <= high
    return covered / runs, truth


def flip_with_failures(q: float, fail: float, repeats: int, rows: int, runs: int,
                       rng: np.random.Generator) -> tuple[float, float, float]:
    """The app's own stability summary (core.jobs.checks.stability_summary) on simulated verdicts where each call
    fails with probability `fail` (the row keeps its other answers): (coverage, mean bias of the flip rate, truth).
    Verdicts are drawn here, independently of the app: a pass/fail that flips with probability q per call."""
    import pandas as pd

    from rageval_desktop.core.jobs import checks
    from rageval_desktop.core.judges.judge import Judge

    judge = Judge(1, "j", "correctness", "llm", 1, "m", None, None, {})
    variants = [f"repeat {i}" for i in range(1, repeats + 1)]
    truth = 1 - (1 - q) ** repeats - q ** repeats
    covered, bias = 0, 0.0
    real = checks._verdicts, checks._slices
    try:
        checks._slices = lambda p, r: dict.fromkeys(r, "s")
        for _ in range(runs):
            flips = rng.random((rows, repeats)) < q
            answered = rng.random((rows, repeats)) >= fail
            found = [(r, variants[i], 2.0 if flips[r, i] else 4.0, 0.0)
                     for r in range(rows) for i in range(repeats) if answered[r, i]]
            frame = pd.DataFrame(found, columns=["source_row", "variant", "score", "cost"])
            checks._verdicts = lambda p, c, f=frame: f
            out = checks.stability_summary(None, checks.Check("stability", judge, "v", "c", list(range(rows)),
                                                              variants))
            low, high = out["flip_rate_ci"]
            covered += low is not None and low <= truth <= high
            bias += (out["flip_rate"] if out["flip_rate"] is not None else truth) - truth
    finally:
        checks._verdicts, checks._slices = real
    return covered / runs, bias / runs, truth


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=2000)
    args = parser.parse_args()
    rng = np.random.default_rng(30)
    started = time.perf_counter()
    print("Probes: seven kinds, n counted rows each; a kind fails when its Bonferroni Wilson interval lies wholly on")
    print("the wrong side (damaging: moved down in under 50%; pad, inject: moved up in over 20%).\n")
    print(f"{'judge':<46} {'n':>4} {'fail':>7} {'pass':>7} {'needs more':>11}")
    judges = [("at the boundary on every kind (false alarm)", 0.5, 0.2),
              ("misses 80% of damaging, never moves up", 0.2, 0.0),
              ("catches every damaging, follows inject 50%", 1.0, 0.5),
              ("good: catches 90%, moves up 2%", 0.9, 0.02),
              ("perfect: catches all, never moves up", 1.0, 0.0)]
    for name, right, up in judges:
        for n in (30, 50, 100):
            r = probe_outcomes(right, up, n, args.runs, rng)
            print(f"{name:<46} {n:>4} {r['fail']:>7.1%} {r['pass']:>7.1%} {r['needs more data']:>11.1%}")
    print("\nBias battery: four kinds (passage_order: the verdict moved either way; fake_citation, lengthen,")
    print("self_author: moved up), n counted rows each; a kind fails when shown over 20% (Bonferroni over 4).\n")
    print(f"{'judge':<46} {'n':>4} {'fail':>7} {'pass':>7} {'needs more':>11}")
    for name, moved in (("at the boundary on every kind (false alarm)", [0.2] * 4),
                        ("swayed by length alone, on 40% of rows", [0.02, 0.02, 0.4, 0.02]),
                        ("position bias on 35%, the rest at 5%", [0.35, 0.05, 0.05, 0.05]),
                        ("good: 2% on every kind", [0.02] * 4)):
        for n in (30, 50, 100):
            r = battery_outcomes(moved, n, args.runs, rng)
            print(f"{name:<46} {n:>4} {r['fail']:>7.1%} {r['pass']:>7.1%} {r['needs more data']:>11.1%}")
    print("\nStability: the flip rate's 95% Wilson interval against the true row flip rate (5 repeats).")
    print(f"{'q per call':>10} {'true rate':>10} {'rows':>5} {'coverage':>9}")
    for q in (0.02, 0.05, 0.2):
        for rows in (20, 50, 200):
            coverage, truth = flip_coverage(q, 5, rows, args.runs, rng)
            print(f"{q:>10.2f} {truth:>10.3f} {rows:>5} {coverage:>9.1%}")
    print("\nStability with failed calls (each call fails with the given probability; the app's own summary, which")
    print("leaves rows with a failed repeat out of the flip rate): coverage and bias of the flip rate.")
    print(f"{'q per call':>10} {'failed':>7} {'rows':>5} {'coverage':>9} {'bias':>8}")
    for q in (0.05, 0.08):
        for fail in (0.1, 0.2):
            for rows in (50, 200):
                coverage, bias, truth = flip_with_failures(q, fail, 5, rows, max(200, args.runs // 4), rng)
                print(f"{q:>10.2f} {fail:>7.0%} {rows:>5} {coverage:>9.1%} {bias / truth:>+8.1%}")
    print(f"\n{args.runs} simulated checks per line ({max(200, args.runs // 4)} with failed calls); "
          f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
