"""The audit's error rates, by simulation (core.review.simulate: the audit's own functions on simulated judges
whose population agreement is known). Prints the tables docs/agreement.md quotes.

    .venv/bin/python bench/bench_agreement_rules.py              # 1,000 audits per line (about 10 minutes)
    .venv/bin/python bench/bench_agreement_rules.py --runs 200   # quicker, coarser
"""

from __future__ import annotations

import argparse
import time

from rageval_desktop.core.metrics.simulate import ppi_under_modes
from rageval_desktop.core.review.simulate import MODES, sequential, single_look


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=1000)
    args = parser.parse_args()
    started = time.perf_counter()
    print("One look: a judge audited once on n ratings (threshold 0.7, min n 30, Cohen's kappa on a yes/no scale).")
    print("keep when kappa < 0.7 and retire when kappa > 0.7 are errors; at 0.7 either is.\n")
    print(f"{'sample':<26} {'kappa':>5} {'n':>4} {'keep':>7} {'retire':>7} {'coverage':>9} {'bias':>7}")
    lines = [(mode, True) for mode in MODES] + [("stratified", False)]
    for mode, weighted in lines:
        for kappa in (0.6, 0.7, 0.8):
            for n in (30, 100):
                r = single_look(kappa, n, mode, runs=args.runs, seed=int(kappa * 100) + n, weighted=weighted)
                name = mode if weighted else "stratified, unweighted*"
                print(f"{name:<26} {kappa:>5.2f} {n:>4} {r['keep']:>7.1%} {r['retire']:>7.1%} "
                      f"{r['coverage']:>9.1%} {r['bias']:>+7.3f}")
    print("* how the app weighed stratified ratings before 0.3 (every rating 1)\n")
    print("Repeated looks: rate 30, look, rate 10 more and look again until decided, at most 300 ratings.")
    print(f"{'sample':<12} {'kappa':>5} {'keep':>7} {'retire':>7} {'undecided':>10} {'mean n when decided':>20}")
    for mode in ("uniform", "uncertain"):
        for kappa in (0.6, 0.7, 0.8, 0.9):
            r = sequential(kappa, mode, runs=max(100, args.runs // 3), seed=int(kappa * 100))
            mean_n = f"{r['mean_n_decided']:.0f}" if r["mean_n_decided"] else "—"
            print(f"{mode:<12} {kappa:>5.2f} {r['keep']:>7.1%} {r['retire']:>7.1%} {r['needs more ratings']:>10.1%} "
                  f"{mean_n:>20}")
    print("\nPPI: a slice of 400 questions, a judge one point generous on weak answers (raw judge mean "
          "off by the amount below), 40 ratings drawn as each mode draws them.")
    print(f"{'sample':<26} {'bias (points)':>14} {'coverage':>9} {'raw judge error':>16}")
    for mode, weighted in lines:
        r = ppi_under_modes(mode, runs=args.runs, weighted=weighted)
        name = mode if weighted else "stratified, unweighted*"
        print(f"{name:<26} {r['bias']:>+14.2f} {r['coverage']:>9.1%} {r['raw_judge_error']:>+16.2f}")
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
