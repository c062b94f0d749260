"""The gate's false-alarm rate and power, by simulation (core.metrics.simulate: the gate's own code on simulated
pull requests whose truth is known). Prints the tables docs/ci.md quotes.

    .venv/bin/python bench/bench_gate.py            # 1,000 null pull requests per line, 500 per power cell
    .venv/bin/python bench/bench_gate.py --prs 200  # quicker, coarser (about 10 minutes at the default)
"""

from __future__ import annotations

import argparse
import time

from rageval_desktop.core.metrics.simulate import SLICES, gate_error_rates

RULES = {
    "point, limit 2 (old default)": {"rule": "point"},
    "point + --require-significant": {"rule": "point", "require_significant": True},
    "test, limit 2 (default, max-T)": {},
    "test, limit 2, Holm": {"holm": True},
    "test, limit 0 (max-T)": {"max_slice_drop": 0.0},
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--prs", type=int, default=1000)
    args = parser.parse_args()
    started = time.perf_counter()
    print(f"{len(SLICES)} slices of {', '.join(map(str, SLICES.values()))} questions, 5 metrics, 35 cells; "
          f"{args.prs} simulated null pull requests per line, {max(100, args.prs // 2)} per power cell; the "
          "regressed slice has 100 questions\n")
    print("null: the candidate is no worse (churn: share of questions a new version answers anew)")
    print(f"{'rule':<32} {'churn':>5} {'fails':>7} {'undecided':>9}")
    for churn in (0.1, 0.3, 1.0):
        for name, rule in RULES.items():
            r = gate_error_rates(args.prs, churn=churn, **rule)
            print(f"{name:<32} {churn:>5.1f} {r['fail_rate']:>7.1%} {r['undecided_rate']:>9.0%}")
    print("\npower: one slice of 100 questions drops by D points of hit@5 (caught = a regression in that slice)")
    print(f"{'rule':<32} {'churn':>5} " + " ".join(f"{'D=' + str(d):>7}" for d in (5, 10, 15, 20, 30))
          + f" {'detectable (80%)':>17}")
    for churn in (0.1, 0.3):
        for name, rule in RULES.items():
            cells, mde = [], None
            for d in (5, 10, 15, 20, 30):
                r = gate_error_rates(max(100, args.prs // 2), churn=churn, drop=d, seed=d, **rule)
                cells.append(f"{r['caught_rate']:>7.1%}")
                mde = mde or r["detectable_drop_hit5"]
            shown = f"{mde:.1f}" if mde else "—"
            print(f"{name:<32} {churn:>5.1f} " + " ".join(cells) + f" {shown:>17}")
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
