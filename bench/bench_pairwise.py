"""Pairwise review's two rules, by simulation (issue 77.7), read after every rating as the Pairwise page reads them:

1. **Which run reviewers prefer** (core.review.pairwise.win_rate): a verdict from the decisive pairs' confidence
   sequence's running intersection (a verdict reached stays). False alarm: a verdict at any look when neither run is
   better (B wins half the decisive pairs); power:
   the share of sequences that name B by the last look when B wins 65% (and 75%) of them.
2. **The pairwise judge's licence** (core.review.pairwise.agreement_of): Cohen's kappa over a/b/tie against the
   retirement threshold 0.7 with the anytime-valid interval. False alarm: "kept" at any look when the judge's true
   kappa is 0.6 (below the bar); power: "kept" by the last look at kappa 0.9, and "retired" at kappa 0.4.

Populations are drawn here, independently of the code under test: each pair's true preference a / b / tie with stated
probabilities; a reviewer reports it; the judge copies it with probability q, else answers at random (uniform over
the three) — its true kappa follows from q and the preference mix (computed here in closed form). Ratings arrive in
the desk's order (the sample's random order) and the rule is read after each one, from the first rating (win rate)
or from the audit's minimum of 30 (licence) to the last.

    .venv/bin/python bench/bench_pairwise.py              # 400 sequences a line (about 4 minutes)
    .venv/bin/python bench/bench_pairwise.py --runs 100   # quicker, coarser
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rageval_desktop.core.review.pairwise import (  # noqa: E402
    LICENCE_ALPHA,
    PREFERENCES,
    agreement_of,
    running_sequence,
    verdict_of,
)

MIX = np.array([0.4, 0.3, 0.3])        # the true preferences: a, b, tie (the licence's populations)
THRESHOLD, MIN_N = 0.7, 30


def kappa_of(q: float, mix: np.ndarray) -> float:
    """The true kappa of a judge that copies the truth with probability q, else answers uniformly at random."""
    p_o = q + (1 - q) / 3
    judge = q * mix + (1 - q) / 3
    p_e = float((mix * judge).sum())
    return (p_o - p_e) / (1 - p_e)


def q_for(kappa: float, mix: np.ndarray) -> float:
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if kappa_of(mid, mix) < kappa else (lo, mid)
    return (lo + hi) / 2


def win_rate_line(share_b: float, ties: float, n: int, runs: int, rng: np.random.Generator) -> tuple[float, float]:
    """(share of sequences with a verdict for A or B at some look, share naming B by the last look)."""
    decisive = 1 - ties
    probs = [decisive * (1 - share_b), decisive * share_b, ties]
    any_call = named_b = 0
    for _ in range(runs):
        prefs = [PREFERENCES[k] for k in rng.choice(3, size=n, p=probs)]
        # the verdict after each rating, as the page reads it (core.review.pairwise.win_rate's running sequence)
        verdicts = [verdict_of(bounds) for bounds in running_sequence(prefs)] or ["cannot tell"]
        any_call += any(v != "cannot tell" for v in verdicts)
        named_b += verdicts[-1] == "b"
    return any_call / runs, named_b / runs


def licence_line(kappa: float, n: int, runs: int, rng: np.random.Generator, step: int,
                 alpha: float) -> dict[str, float]:
    """Shares of sequences: 'kept' at some look, 'retired' at some look, and each at the last look."""
    q = q_for(kappa, MIX)
    counts = {"kept ever": 0, "retired ever": 0, "kept at the end": 0, "retired at the end": 0}
    for _ in range(runs):
        human = rng.choice(3, size=n, p=MIX)
        judge = np.where(rng.random(n) < q, human, rng.integers(0, 3, size=n))
        seen = [agreement_of(list(human[:m]), list(judge[:m]), THRESHOLD, MIN_N, alpha).status
                for m in [*range(MIN_N, n, step), n]]
        counts["kept ever"] += "kept" in seen
        counts["retired ever"] += "retired" in seen
        counts["kept at the end"] += seen[-1] == "kept"
        counts["retired at the end"] += seen[-1] == "retired"
    return {k: v / runs for k, v in counts.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--pairs", type=int, default=200, help="ratings a sequence reaches")
    parser.add_argument("--look-step", type=int, default=1, help="read the licence every K ratings (1: every one)")
    parser.add_argument("--alpha", type=float, default=LICENCE_ALPHA, help="the licence's anytime level")
    parser.add_argument("--kappas", type=float, nargs="+", default=[0.4, 0.6, 0.7, 0.8, 0.9])
    parser.add_argument("--licence-only", action="store_true")
    args = parser.parse_args()
    rng = np.random.default_rng(20261207)
    start = time.perf_counter()
    print(f"Which run reviewers prefer: {args.runs} sequences a line, read after every rating 1..{args.pairs}")
    print("| B's share of decisive pairs | ties | a verdict at some look | names B at the last look |")
    print("|---|---|---|---|")
    for share, ties in () if args.licence_only else ((0.5, 0.3), (0.5, 0.0), (0.65, 0.3), (0.75, 0.3)):
        called, named = win_rate_line(share, ties, args.pairs, args.runs, rng)
        print(f"| {share:.0%} | {ties:.0%} | {called:.1%} | {named:.1%} |")
    print(f"\nThe pairwise judge's licence (threshold {THRESHOLD}, at least {MIN_N}): {args.runs} sequences a line, "
          f"read every {args.look_step} rating(s) from {MIN_N} to {args.pairs}; preferences a/b/tie {MIX.tolist()}; "
          f"anytime level {args.alpha}")
    print("| true kappa | kept at some look | retired at some look | kept at the last | retired at the last |")
    print("|---|---|---|---|---|")
    for kappa in args.kappas:
        found = licence_line(kappa, args.pairs, args.runs, rng, args.look_step, args.alpha)
        print(f"| {kappa:.1f} | {found['kept ever']:.1%} | {found['retired ever']:.1%} | "
              f"{found['kept at the end']:.1%} | {found['retired at the end']:.1%} |")
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
