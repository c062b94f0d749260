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

from rageval_desktop.core.review.transport import decide, plan  # noqa: E402


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
    planned(args, rng)
    print(f"({time.perf_counter() - start:.0f} s)")


def planned(args: argparse.Namespace, rng: np.random.Generator) -> None:
    """What `transport --plan` promises, delivered through `decide` on the user's path (issue 75): a check sized by
    `plan` catches its drift at least 80% of the time, and a run whose errors did not move is suspended at most 5%
    of the time. Where the audit can show the drift, each simulated audit is rated first and the run's check is
    planned against the rate that audit showed (as the command plans it); else as many ratings on each side."""
    runs = max(100, args.runs // 5)
    print(f"\nPlanned checks (`transport --plan`): {args.runs} checks a line on each side, {runs} a line planned "
          f"against each simulated audit of {args.audit}")
    for e0 in (0.10, 0.25):
        for drift in (0.05, 0.10, 0.15, 0.25):
            p = plan(args.audit, e0, drift)
            if p.ratings is None:
                n = p.audit_needed
                rates = []
                for shift in (0.0, drift):
                    hits = sum(decide(float(n), rng.binomial(n, e0 + shift) / n, float(n),
                                      rng.binomial(n, e0) / n)[0] == "suspended" for _ in range(args.runs))
                    rates.append(hits / args.runs)
                print(f"  errors {e0:.0%}, +{100 * drift:.0f} pts: the audit of {args.audit} cannot show it; plan {n} "
                      f"on each side: caught {rates[1]:.1%}, false suspension {rates[0]:.1%}")
                continue
            caught = false = planned_n = too_small = 0
            sizes = []
            for _ in range(runs):
                rate_audit = rng.binomial(args.audit, e0) / args.audit
                mine = plan(args.audit, rate_audit, drift).ratings
                if mine is None:
                    too_small += 1
                    continue
                planned_n += 1
                sizes.append(mine)
                caught += decide(float(mine), rng.binomial(mine, e0 + drift) / mine, float(args.audit),
                                 rate_audit)[0] == "suspended"
                false += decide(float(mine), rng.binomial(mine, e0) / mine, float(args.audit),
                                rate_audit)[0] == "suspended"
            print(f"  errors {e0:.0%}, +{100 * drift:.0f} pts: planned on the run against each audit (median "
                  f"{np.median(sizes):.0f} ratings): caught {caught / max(1, planned_n):.1%}, false suspension "
                  f"{false / max(1, planned_n):.1%}; the audit too small to plan in {too_small / runs:.1%}")

if __name__ == "__main__":
    main()
