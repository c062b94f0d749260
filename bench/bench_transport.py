"""The transport check's two error rates, by simulation (issue 47 §5): how often does it suspend a judge on a run
where its errors did not move (false suspension), and how often does it miss a run where they did (missed shift)?

Populations are drawn here, independently of the code under test: the audited rows' errors are Bernoulli(e0) over
`--audit` ratings; the new run's over n ratings are Bernoulli(e0) (no shift) or Bernoulli(e0 + shift). A yes/no
judge's errors and a 1-5 judge's (an error: more than a point away) are the same Bernoulli draws to the check, so the
scale enters only through e0: 10% is a typical yes/no judge at κ about 0.8, 25% a 1-5 judge at quadratic κ about 0.7.
Uniform samples on both sides, and a weighted audit (Kish n_eff at 60% of the ratings, as the desk's uncertain mode
gives). The project's own `transport.decide` decides.

    .venv/bin/python bench/bench_transport.py               # 1,000 checks a cell (about a minute)
    .venv/bin/python bench/bench_transport.py --runs 300
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rageval_desktop.core.review.transport import decide  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--audit", type=int, default=150, help="ratings in the audit (default 150)")
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    print(f"audit of {args.audit} ratings; {args.runs} checks a cell; suspended when Fisher's one-sided p ≤ 0.05")
    for e0 in (0.10, 0.25):
        for design, deff in (("uniform", 1.0), ("weighted audit (n_eff 60%)", 0.6)):
            for n in (10, 20, 40):
                cells = []
                for shift in (0.0, 0.15, 0.25):
                    suspended = 0
                    for _ in range(args.runs):
                        n_audit = round(args.audit * deff)    # a weighted audit is as noisy as its n_eff
                        rate_audit = rng.binomial(n_audit, e0) / n_audit
                        rate_run = rng.binomial(n, e0 + shift) / n
                        suspended += decide(float(n), rate_run, float(n_audit), rate_audit)[0] == "suspended"
                    cells.append(suspended / args.runs)
                print(f"  errors {e0:.0%}, {design:<27} n {n:>3} on the run: false suspension {cells[0]:.1%}; "
                      f"caught +15 pts {cells[1]:.1%} (missed {1 - cells[1]:.1%}), +25 pts {cells[2]:.1%} "
                      f"(missed {1 - cells[2]:.1%})")
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
