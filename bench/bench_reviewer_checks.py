"""Reviewers checked: both error rates of the gold-check verdict, by simulation (issue 47 §6). Does the Team page
tell a lead to set aside a reviewer who is in fact good enough (false alarm, family-wise over a team, looked at after
every check)? And how soon does it catch a careless one (power)?

Reviewers are drawn here, independently of the code under test: gold scores uniform on the scale; a reviewer answers
each gold item with the gold score, or with probability `slip` a score drawn uniformly from the scale (slip 1:
clicking at random, the worst a careless reviewer does — about 50% on yes/no, 52% on 1–5 by the rule); their true
accuracy under the checks' rule (the same verdict at the pass mark: the same score on yes/no, both under or both at
or over 4 on 1–5 — issue 75) is computed here from that distribution, not by the project. The project's own
functions decide (core.review.quality: `agrees`, the sequential test in `verdict`, with α shared among the team's
reviewers as the Team page shares it), after every check, up to `--checks` checks.

    .venv/bin/python bench/bench_reviewer_checks.py --runs 1000 --checks 100   # about 10 s (a verdict per (n, agreed))
    .venv/bin/python bench/bench_reviewer_checks.py --runs 100                 # quicker, coarser
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rageval_desktop.core.review import quality  # noqa: E402

SCALES = {"yes/no": ("correctness_binary", [0.0, 1.0]), "1-5": ("correctness", [1.0, 2.0, 3.0, 4.0, 5.0])}


def answers(gold: np.ndarray, labels: list[float], slip: float, rng: np.random.Generator) -> np.ndarray:
    """The reviewer's answers: the gold score, or with probability `slip` a score drawn uniformly from the scale."""
    out = gold.copy()
    slipped = rng.random(len(gold)) < slip
    out[slipped] = rng.choice(labels, size=int(slipped.sum()))
    return out


PASS = {2: 1.0, 5: 4.0}      # the pass mark of a scale of that many points (yes/no 1; 1-5 4), stated here


def _close(labels: list[float]) -> float:
    """P(a uniform score gives the same verdict as a uniform gold score), computed here."""
    mark = PASS[len(labels)]
    return float(np.mean([[(a >= mark) == (b >= mark) for b in labels] for a in labels]))


def true_accuracy(labels: list[float], slip: float) -> float:
    """Accuracy under the rule for uniform gold, computed here: 1 - slip + slip * P(a uniform score is close)."""
    return float(1 - slip + slip * _close(labels))


def slip_for(labels: list[float], accuracy: float) -> float:
    close = _close(labels)
    slip = (1 - accuracy) / (1 - close)
    assert 0 <= slip <= 1, f"accuracy {accuracy:.0%} is below chance on this scale"
    return slip


@functools.cache
def _fails(n: int, agreed: int, floor: float, alpha: float) -> bool:
    """The project's verdict on (n, agreed), computed once per pair (the same answer every time it is asked)."""
    return quality.verdict(quality.Share(n, agreed, None, [0.0, 1.0]), floor, alpha) == "fails"


@functools.cache
def _agrees(score: float, expected: float, metric: str) -> bool:
    return quality.agrees(score, expected, metric)


def team_run(metric: str, labels: list[float], accuracies: list[float], checks: int, floor: float, alpha: float,
             rng: np.random.Generator) -> list[int | None]:
    """For each reviewer, the check at which the verdict first said 'fails' (None: never), looking after each."""
    each = alpha / len(accuracies)          # as quality_report shares α among the reviewers checked
    out: list[int | None] = []
    for acc in accuracies:
        gold = rng.choice(labels, size=checks)
        said = answers(gold, labels, slip_for(labels, acc), rng)
        agreed = np.cumsum([_agrees(float(s), float(g), metric) for s, g in zip(said, gold, strict=True)])
        failed = None
        for n in range(1, checks + 1):
            if _fails(n, int(agreed[n - 1]), floor, each):
                failed = n
                break
        out.append(failed)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--checks", type=int, default=60, help="gold checks per reviewer (looked at after each)")
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    conf = quality.CheckSettings()
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    print(f"floor {conf.floor:.0%}, α {conf.alpha} shared by a team of 3, looked at after every check up to "
          f"{args.checks}; {args.runs} teams a line")
    for scale, (metric, labels) in SCALES.items():
        for accuracy in (conf.floor, 0.8, 0.9):            # good enough: any 'fails' is a false alarm
            alarms = 0
            for _ in range(args.runs):
                found = team_run(metric, labels, [accuracy] * 3, args.checks, conf.floor, conf.alpha, rng)
                alarms += any(f is not None for f in found)
            print(f"  {scale:<6} three reviewers at {accuracy:.0%}: a team member set aside wrongly in "
                  f"{alarms / args.runs:.1%} of teams")
        for slip in (1.0, 0.9, 0.8):        # careless: 'fails' is the right call (slip 1: clicking at random)
            accuracy = true_accuracy(labels, slip)
            when = []
            for _ in range(args.runs):
                found = team_run(metric, labels, [accuracy, 0.9, 0.9], args.checks, conf.floor, conf.alpha, rng)
                when.append(found[0])
            caught = [w for w in when if w is not None]
            by = {n: sum(1 for w in caught if w <= n) / args.runs for n in (20, 40, args.checks)}
            median = f"{np.median(caught):.0f}" if caught else "—"
            print(f"  {scale:<6} one reviewer at {accuracy:.0%} ({slip:.0%} of answers at random; the rest at 90%): "
                  f"caught within 20 checks {by[20]:.1%}, 40 {by[40]:.1%}, {args.checks} {by[args.checks]:.1%} "
                  f"(median at check {median})")
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
