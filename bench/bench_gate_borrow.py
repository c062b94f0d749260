"""Borrowing strength across slices: would an empirical-Bayes gate detect smaller drops at the same error rate?
(issue 44, item 3 — an experiment, not a rule the app ships).

Per metric, the slices' paired mean differences d_s (standard errors se_s) are shrunk toward their precision-weighted
mean by the normal-normal model: delta_s ~ N(mu, tau^2), d_s | delta_s ~ N(delta_s, se_s^2), tau^2 by
DerSimonian-Laird (statsmodels' combine_effects, method "dl"). A slice's shrunk estimate is
mu + (1 - B_s)(d_s - mu), B_s = se_s^2 / (se_s^2 + tau^2), with variance (1 - B_s) se_s^2 + B_s^2 var(mu) (Morris
1983, tau^2 taken as known). Each slice cell is then tested as the gate tests it — one-sided against the allowed
drop (1 point), Holm across every slice cell and 'all' — beside the gate's own unshrunk test on the same
comparisons. Simulated pull requests as in bench/bench_gate.py (core.metrics.simulate).

    .venv/bin/python bench/bench_gate_borrow.py [--prs 400]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy.stats import norm
from statsmodels.stats.meta_analysis import combine_effects

from rageval_desktop.core.base.stats import drop_p_value, holm
from rageval_desktop.core.metrics.simulate import METRICS, SLICES, pull_request

ALLOWED = 1.0


def _shrunk(cells: list[dict]) -> list[tuple[float, float]]:
    d = np.array([c["delta"] for c in cells])
    var = np.array([c["se"] ** 2 for c in cells])
    res = combine_effects(d, var, method_re="dl")
    tau2 = max(0.0, float(np.asarray(res.tau2).ravel()[0]))
    w = 1 / (var + tau2)
    mu = float((w * d).sum() / w.sum())
    var_mu = 1 / float(w.sum())
    shrink = var / (var + tau2) if tau2 > 0 else np.ones_like(var)
    est = mu + (1 - shrink) * (d - mu)
    return [(float(e), math.sqrt(max((1 - b) * v + b * b * var_mu, 1e-12)))
            for e, b, v in zip(est, shrink, var, strict=True)]


def _decide(comparison: dict, borrow: bool) -> set[tuple[str, str]]:
    """The cells shown to regress beyond the allowed drop (Holm across the slices' and 'all''s cells)."""
    cells, p = [], []
    for m in METRICS:
        slices = [comparison["slices"][s][m] for s in SLICES]
        pairs = _shrunk(slices) if borrow else [(c["delta"], c["se"]) for c in slices]
        for s, (est, se) in zip(SLICES, pairs, strict=True):
            cells.append((s, m))
            p.append(float(norm.cdf((est + ALLOWED) / se)) if borrow else
                     drop_p_value(est, se, comparison["slices"][s][m]["df"], ALLOWED))
        whole = comparison["slices"]["all"][m]
        cells.append(("all", m))
        p.append(drop_p_value(whole["delta"], whole["se"], whole["df"], ALLOWED))
    rejected, _ = holm(p, 0.05)
    return {c for c, r in zip(cells, rejected, strict=True) if r}


def run(prs: int, churn: float, drop: float, regressed: str, metric: str, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    found = {"plain": [0, 0], "borrow": [0, 0]}
    for _ in range(prs):
        comparison = pull_request(rng, churn=churn, drop=drop, regressed=regressed, metric=metric)
        for name, borrow in (("plain", False), ("borrow", True)):
            failed = _decide(comparison, borrow)
            found[name][0] += bool(failed)
            if regressed == "all":        # a drop everywhere: caught in the slices (what borrowing could add)
                found[name][1] += sum((s, metric) in failed for s in SLICES) / len(SLICES)
            else:
                found[name][1] += (regressed, metric) in failed
    return {f"{k}_{w}": v[i] / prs for k, v in found.items() for i, w in enumerate(("fail", "caught"))}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--prs", type=int, default=400)
    args = parser.parse_args()
    started = time.perf_counter()
    print(f"{args.prs} simulated pull requests per line; Holm across 35 cells; allowed drop {ALLOWED:g}")
    print(f"{'case':<52} {'fails: plain':>12} {'borrow':>7} {'caught: plain':>13} {'borrow':>7}")
    cases = [("unchanged, churn 0.3", 0.3, 0.0, "keyword-heavy", "hit@5"),
             ("unchanged, churn 1.0", 1.0, 0.0, "keyword-heavy", "hit@5"),
             ("keyword-heavy (100) hit@5 -20, alone", 0.3, 20.0, "keyword-heavy", "hit@5"),
             ("keyword-heavy (100) hit@5 -30, alone", 0.3, 30.0, "keyword-heavy", "hit@5"),
             ("edge (35) correctness -25, alone", 0.3, 25.0, "edge", "correctness"),
             ("every slice hit@5 -15 (caught: share of slices)", 0.3, 15.0, "all", "hit@5"),
             ("every slice hit@5 -25 (caught: share of slices)", 0.3, 25.0, "all", "hit@5")]
    for i, (name, churn, drop, regressed, metric) in enumerate(cases):
        r = run(args.prs, churn, drop, regressed, metric, seed=100 + i)
        print(f"{name:<52} {r['plain_fail']:>12.1%} {r['borrow_fail']:>7.1%} {r['plain_caught']:>13.1%} "
              f"{r['borrow_caught']:>7.1%}")
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
