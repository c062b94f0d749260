"""The audit's error rates, measured: simulated judges whose population agreement is known, sampled the ways the app
samples, judged by the audit's own functions (core.review.evidence, agreement.judge_evidence, sampling's allocation
and inclusion probabilities).

A population of 2,000 targets on a yes/no scale sits in three slices (60%, 30%, 10%). The judge's score s is uniform
on [0, 1] and its label is s >= 0.5; the human agrees with it less often near the pass mark and on the largest slice
(which equal allocation under-samples), with a disagreement level tuned (by bisection) so that the population's
Cohen's kappa is exactly the value asked for.
Samples are drawn as the app draws them:
- `uniform`: a simple random sample;
- `stratified`: the app's round robin over slice x judge-score band (equal allocation), each rating weighted by
  N_h / n_h (core.review.sampling records n_h / N_h);
- `uncertain`: sequential Poisson sampling with probabilities growing near the pass mark (sampling.priority's
  rule), each rating weighted by 1 / probability.

bench/bench_agreement_rules.py prints the tables docs/agreement.md quotes; tests/core/test_evidence.py runs small
seeded versions.
"""

from __future__ import annotations

import math
from typing import Any

from rageval_desktop.core.review import agreement_stats as st
from rageval_desktop.core.review import evidence as ev
from rageval_desktop.core.review.agreement import NEEDS_MORE, judge_evidence
from rageval_desktop.core.review.sampling import FLOOR, _allocate, inclusion_probabilities
from rageval_desktop.core.review.settings import RetirementPolicy

SIZE = 2000
SHARES = (0.6, 0.3, 0.1)
MODES = ("uniform", "stratified", "uncertain")


def population(kappa: float, *, seed: int = 0) -> dict[str, Any]:
    """Judge labels, human labels, judge scores and strata of SIZE targets whose Cohen's kappa is `kappa`."""
    import numpy as np

    rng = np.random.default_rng(seed)
    s = rng.random(SIZE)
    judge = (s >= 0.5).astype(np.int64)
    slices = rng.choice(len(SHARES), SIZE, p=SHARES)
    u = rng.random(SIZE)
    shape = 0.25 + 0.75 * np.exp(-(((s - 0.5) / 0.2) ** 2)) + 1.5 * (slices == 0)

    def labels(level: float) -> Any:
        flip = u < np.clip(level * shape, 0, 1)
        return np.where(flip, 1 - judge, judge)

    low, high = 0.0, 2.0
    for _ in range(50):                               # more disagreement, lower kappa: bisect the level
        mid = (low + high) / 2
        value = st.statistic("cohen_kappa", labels(mid), judge, 2)
        low, high = (mid, high) if value > kappa else (low, mid)
    human = labels((low + high) / 2)
    band = np.minimum(2, (s * 3).astype(int))
    strata = slices * 3 + band
    return {"judge": judge, "human": human, "score": s, "strata": strata,
            "kappa": st.statistic("cohen_kappa", human, judge, 2)}


def draw(pop: dict[str, Any], n: int, mode: str, rng: Any) -> tuple[Any, Any]:
    """A sample of n targets in the order the app would present them, and `weights(m)`: the weights of its first
    m ratings (None when unweighted) as the app would compute them after m ratings."""
    import numpy as np

    size = len(pop["score"])
    if mode == "uniform":
        return rng.choice(size, n, replace=False), lambda m: None
    if mode == "stratified":
        groups: dict[str, list[int]] = {}
        for i, h in enumerate(pop["strata"]):
            groups.setdefault(str(h), []).append(i)
        picked = _allocate(groups, n, rng)
        idx = np.array([i for i, _ in picked])
        keys = [key for _, key in picked]

        def stratified(m: int) -> Any:
            taken: dict[str, int] = {}
            for key in keys[:m]:
                taken[key] = taken.get(key, 0) + 1
            return np.array([len(groups[key]) / taken[key] for key in keys[:m]])
        return idx, stratified
    priority = list(FLOOR + np.maximum(0.0, 1.0 - 2.0 * np.abs(pop["score"] - 0.5)))
    u = rng.random(size)
    order = np.argsort(u / np.asarray(inclusion_probabilities(priority, n)))[:n]

    def uncertain(m: int) -> Any:
        return 1.0 / np.asarray(inclusion_probabilities(priority, m))[order[:m]]
    return order, uncertain


def audit(pop: dict[str, Any], idx: Any, weights: Any | None, pol: RetirementPolicy,
          strata: int = 0) -> dict[str, Any]:
    """The audit's numbers on one sample: the weighted kappa, its 95% interval, the verdict (`strata`: how many
    strata of a stratified sample the ratings come from, as core.review.weights.strata_used counts them)."""
    h, j = pop["human"][idx], pop["judge"][idx]
    raw = st.statistic("cohen_kappa", h, j, 2, weights)
    value = None if not math.isfinite(raw) else float(raw)
    n_eff = ev.effective_n(weights, len(idx))
    if weights is not None:
        n_eff = ev.stratified_n(n_eff, len(idx), strata)
    ci, _, verdict, _ = judge_evidence("cohen_kappa", h, j, 2, weights, value, len(idx), n_eff, pol, draws=1000)
    return {"value": value, "ci": ci, "verdict": verdict}


def strata_of(pop: dict[str, Any], idx: Any, mode: str) -> int:
    import numpy as np

    return int(np.unique(pop["strata"][idx]).size) if mode == "stratified" else 0


def single_look(kappa: float, n: int, mode: str, *, runs: int = 500, seed: int = 0,
                weighted: bool = True) -> dict[str, Any]:
    """Keep and retire rates, the 95% interval's coverage and the estimate's bias over `runs` audits of n.
    `weighted=False` treats every rating as weighing 1, as the app did before 0.3 for stratified samples."""
    import numpy as np

    pop = population(kappa, seed=seed)
    rng = np.random.default_rng(seed + 1)
    pol = RetirementPolicy()
    keep = retire = covered = 0
    errors = []
    for _ in range(runs):
        idx, weights = draw(pop, n, mode, rng)
        found = audit(pop, idx, weights(n) if weighted else None, pol, strata_of(pop, idx, mode))
        keep += found["verdict"] == "keep"
        retire += found["verdict"] == "retire"
        low, high = found["ci"]
        covered += low is not None and low <= pop["kappa"] <= high
        if found["value"] is not None:
            errors.append(found["value"] - pop["kappa"])
    return {"kappa": pop["kappa"], "n": n, "mode": mode, "keep": keep / runs, "retire": retire / runs,
            "coverage": covered / runs, "bias": float(np.mean(errors)) if errors else None}


def sequential(kappa: float, mode: str = "uniform", *, runs: int = 300, start: int = 30, step: int = 10,
               stop: int = 300, seed: int = 0) -> dict[str, Any]:
    """Rate `start`, look, rate `step` more and look again until the audit decides or `stop` ratings: how often
    each verdict is reached, and the mean number of ratings when it is."""
    import numpy as np

    pop = population(kappa, seed=seed)
    rng = np.random.default_rng(seed + 2)
    pol = RetirementPolicy()
    counts = {"keep": 0, "retire": 0, NEEDS_MORE: 0}
    used = []
    for _ in range(runs):
        order, weights = draw(pop, stop, mode, rng)
        verdict = NEEDS_MORE
        for n in range(start, stop + 1, step):
            verdict = audit(pop, order[:n], weights(n), pol, strata_of(pop, order[:n], mode))["verdict"]
            if verdict != NEEDS_MORE:
                used.append(n)
                break
        counts[verdict] += 1
    return {"kappa": pop["kappa"], "mode": mode, **{k: v / runs for k, v in counts.items()},
            "mean_n_decided": float(np.mean(used)) if used else None}
