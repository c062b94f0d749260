"""The gate's error rates, measured: simulated pull requests whose truth is known, judged by the gate's own code.

A simulated project has six slices of 20-100 golden questions (350 in all). Each question has a latent rank of its
gold chunk — not retrieved in the top 50 with probability 0.15, else geometric (P(rank 1) = 0.45) — giving hit@5,
hit@10, MRR and nDCG@10 as the app computes them for one gold chunk, and a judge score on a 1-5 scale that is
higher when retrieval hit (0-100 on the dashboard). A baseline is drawn; the candidate answers each question as the
baseline did, except that with probability `churn` the question is redrawn from the same distribution (a new
version changes some answers and keeps most). Under the null the candidate is no worse; under the alternative one
slice regresses by `drop` points of hit@5 in expectation: that share of its questions loses the gold chunk from
the top 10 and one point of judge score. Each pull request is a comparison built by `compare.paired_cell` and
`compare.cell_correlation` (the code `rageval compare` runs) and judged by `gate.evaluate_gate` (the code `rageval
gate` runs). `holm=True` drops the correlation, so the gate falls back to Holm's adjustment, for comparison.

bench/bench_gate.py prints the table the docs quote; tests/core/test_gate_rule.py runs a small seeded version.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from numpy import ndarray
    from numpy.random import Generator

from rageval_desktop.core.base.verdicts import Decision
from rageval_desktop.core.metrics.attempts import Attempt
from rageval_desktop.core.metrics.compare import COVERAGE, FLOOR, cell_correlation, paired_cell, pairwise_moments
from rageval_desktop.core.metrics.dashboard import ALL
from rageval_desktop.core.metrics.gate import evaluate_gate
from rageval_desktop.core.metrics.gate_config import GateConfig
from rageval_desktop.core.metrics.gate_plan import ALLOWED, POWER_PLANNED, plan_cells
from rageval_desktop.core.metrics.ppi import ppi_mean
from rageval_desktop.core.review.simulate import draw

SLICES = {"easy": 20, "edge": 35, "adversarial": 50, "time-sensitive": 65, "multi-hop": 80, "keyword-heavy": 100}
SCORED = ("hit@5", "hit@10", "mrr", "ndcg@10", "correctness")
METRICS = (*SCORED, COVERAGE)
Scores = dict[str, "ndarray"]   # metric -> each question's score, on 0-100
MISS = 51                      # not in the top 50


def _ranks(rng: Generator, n: int) -> ndarray:
    import numpy as np

    ranks = rng.geometric(0.45, n)
    ranks[rng.random(n) < 0.15] = MISS
    return np.minimum(ranks, MISS)


def _scores(rng: Generator, ranks: ndarray) -> Scores:
    import numpy as np

    hit5 = (ranks <= 5).astype(float)
    judge = np.clip(np.round(rng.normal(3.0 + 1.0 * hit5, 1.0)), 1, 5)
    return {"hit@5": 100 * hit5, "hit@10": 100 * (ranks <= 10), "mrr": np.where(ranks < MISS, 100 / ranks, 0.0),
            "ndcg@10": np.where(ranks <= 10, 100 / np.log2(ranks + 1), 0.0), "correctness": 25 * (judge - 1)}


def _unanswered(rng: Generator, ranks: ndarray, share: float, which: str) -> ndarray:
    """Which of a slice's questions the candidate leaves unanswered: a share of them, its hardest or at random."""
    import numpy as np

    n = len(ranks)
    if share <= 0:
        return np.zeros(n, bool)
    if which == "random":
        return rng.random(n) < share
    order = np.lexsort((rng.random(n), -ranks))          # the lowest-ranked gold chunks first, ties at random
    lost = np.zeros(n, bool)
    lost[order[:round(share * n)]] = True
    return lost


def _effects(metric: str) -> float:
    """The expected drop of `metric` (points) when every question is hurt (the regression's mechanism below), by a
    large draw: a regression of D points on `metric` hurts a share D / this of a slice's questions."""
    import numpy as np

    if metric not in _EFFECT:
        rng = np.random.default_rng(99)
        ranks = _ranks(rng, 200_000)
        before = _scores(rng, ranks)
        after = _hurt(before, ranks, np.ones(len(ranks), bool))
        _EFFECT[metric] = float(np.mean(before[metric] - after[metric]))
    return _EFFECT[metric]


_EFFECT: dict[str, float] = {}


def _hurt(scores: Scores, ranks: ndarray, hurt: ndarray) -> Scores:
    """A hurt question loses its gold chunk from the top 10 and one point of judge score."""
    import numpy as np

    out = dict(scores)
    for m in ("hit@5", "hit@10", "mrr", "ndcg@10"):
        out[m] = np.where(hurt & (ranks <= 10), 0.0 if m != "mrr" else 100 / 11, scores[m])
    out["correctness"] = np.where(hurt, np.maximum(0.0, scores["correctness"] - 25), scores["correctness"])
    return out


def pull_request(rng: Generator, *, churn: float = 0.3, drop: float = 0.0, regressed: str = "keyword-heavy",
                 slices: dict[str, int] | None = None, metric: str = "hit@5",
                 groups: dict[str, tuple[str, ...]] | None = None, unanswered: float = 0.0,
                 which: str = "random") -> dict[str, Any]:
    """One simulated comparison (the dict `compare` returns, reduced to what the gate reads). `regressed` — a slice,
    a group of `groups`, or 'all' — loses `drop` points of `metric` in expectation, in each of its slices. The
    candidate leaves a share `unanswered` of each slice's questions unanswered — its hardest (`which="hardest"`: the
    baseline's gold chunk ranked lowest, a pipeline timing out on the hard ones) or at random (a provider failing a
    request now and then) — and they count as compare counts them: the floor on every metric, coverage 0."""
    import numpy as np

    sizes = slices or SLICES
    groups = dict(groups or {})
    hit_slices = set(sizes) if regressed == ALL else set(groups.get(regressed, (regressed,)))
    base: dict[str, list[ndarray]] = {m: [] for m in METRICS}
    cand: dict[str, list[ndarray]] = {m: [] for m in METRICS}
    tags: list[str] = []
    missed = 0
    for name, n in sizes.items():
        a, b = _slice_pair(rng, n, churn, drop if name in hit_slices else 0.0, metric, unanswered, which)
        missed += int((b[COVERAGE] == 0).sum())
        for m in METRICS:
            base[m].append(a[m])
            cand[m].append(b[m])
        tags += [name] * n
    labels = np.array(tags)
    out: dict[str, Any] = {"baseline": "a", "candidate": "b", "metrics": list(METRICS), "slices": {},
                           "shared_questions": len(labels) - missed, "groups": {k: list(v) for k, v in groups.items()},
                           "perimeter": {"baseline_questions": len(labels), "unanswered": missed, "new_slices": [],
                                         "extra_by_slice": {}}, "missing_rule": "fail"}
    joined_a = {m: np.concatenate(v) for m, v in base.items()}
    joined_b = {m: np.concatenate(v) for m, v in cand.items()}
    moments = {}
    masks = {name: labels == name for name in sizes}
    masks |= {g: np.isin(labels, list(v)) for g, v in groups.items()}
    masks[ALL] = np.ones(len(labels), bool)
    members = {s: {s} for s in sizes} | {g: set(v) for g, v in groups.items()} | {ALL: set(sizes)}
    for name, mask in masks.items():
        out["slices"][name] = {"n": int(mask.sum()),
                               **{m: paired_cell(joined_a[m][mask], joined_b[m][mask]) for m in METRICS}}
        columns = {m: joined_b[m][mask] - joined_a[m][mask] for m in METRICS}
        moments[name] = (list(columns), *pairwise_moments(columns))
    out["cell_correlation"] = cell_correlation(out, moments, members)
    return out


def _slice_pair(rng: Generator, n: int, churn: float, drop: float, metric: str, unanswered: float,
                which: str) -> tuple[Scores, Scores]:
    """One slice's baseline and candidate scores (see `pull_request`)."""
    import numpy as np

    ranks = _ranks(rng, n)
    a = _scores(rng, ranks)
    changed = rng.random(n) < churn
    new_ranks = np.where(changed, _ranks(rng, n), ranks)
    b = _scores(rng, new_ranks)
    for m in SCORED:                       # unchanged questions keep their scores, the judge's too
        b[m] = np.where(changed, b[m], a[m])
    if drop > 0:
        b = _hurt(b, new_ranks, rng.random(n) < min(1.0, drop / _effects(metric)))
    lost = _unanswered(rng, ranks, unanswered, which)
    a[COVERAGE], b[COVERAGE] = np.full(n, 100.0), np.where(lost, 0.0, 100.0)
    return a, {m: np.where(lost, FLOOR, v) for m, v in b.items()}


def gate_error_rates(prs: int = 500, *, seed: int = 0, churn: float = 0.3, drop: float = 0.0,
                     regressed: str = "keyword-heavy", holm: bool = False, metric: str = "hit@5",
                     config: GateConfig | None = None, unanswered: float = 0.0, which: str = "random",
                     **rule: Any) -> dict[str, Any]:
    """Over `prs` simulated pull requests: how often the gate fails (a regression anywhere), fails on the regressed
    cell, is not decision-grade, and passes; `rule` goes to `evaluate_gate` (max_slice_drop, rule, alpha, ...);
    `unanswered` and `which` go to `pull_request`."""
    import numpy as np

    rng = np.random.default_rng(seed)
    failed = caught = undecided = passed = 0
    detectable: list[float] = []
    per_cell: dict[str, dict[str, int]] = {}
    groups = dict(config.groups) if config else None
    for _ in range(prs):
        comparison = pull_request(rng, churn=churn, drop=drop, regressed=regressed, metric=metric, groups=groups,
                                  unanswered=unanswered, which=which)
        if holm:
            comparison.pop("cell_correlation")
        result = evaluate_gate(comparison, config=config, **rule)
        failed += result.decision is Decision.REGRESSION
        caught += any(r["slice"] == regressed and r["metric"] == metric for r in result.regressions)
        undecided += result.decision is Decision.NOT_DECISION_GRADE
        passed += result.decision is Decision.PASS
        detectable += [r["detectable_drop"] for r in [*result.undecided, *result.regressions, *result.safe]
                       if r["slice"] == regressed and r["metric"] == metric and r.get("detectable_drop")]
        for status, found in (("regression", result.regressions), ("undecided", result.undecided),
                              ("safe", result.safe)):
            for r in found:
                counts = per_cell.setdefault(f"{r['slice']}|{r['metric']}", {"regression": 0, "undecided": 0,
                                                                            "safe": 0})
                counts[status] += 1
    return {"prs": prs, "churn": churn, "drop": drop, "fail_rate": failed / prs, "caught_rate": caught / prs,
            "undecided_rate": undecided / prs, "pass_rate": passed / prs,
            "detectable_drop": float(np.median(detectable)) if detectable else None,
            "cells": per_cell}


def retry_rates(prs: int = 200, *, attempts: int = 20, seed: int = 0, churn: float = 0.3, drop: float = 0.0,
                regressed: str = "all", metric: str = "hit@5", config: GateConfig | None = None,
                spent: bool = True) -> dict[str, Any]:
    """Pull requests retried until green: each attempt's answers drawn anew (the same regression, or none), up to
    `attempts` tries, the gate told which attempt it is (`spent=False`: not told, every attempt the first). Returns
    how many ship (pass at some attempt), are blocked (never pass), or were shown a regression on the way."""
    import numpy as np

    rng = np.random.default_rng(seed)
    groups = dict(config.groups) if config else None
    shipped = failed_once = tries = 0
    for pr in range(prs):
        shown = False
        for k in range(1, attempts + 1):
            comparison = pull_request(rng, churn=churn, drop=drop, regressed=regressed, metric=metric, groups=groups)
            attempt = Attempt(f"sim#{pr}", k if spent else 1)
            decision = evaluate_gate(comparison, config=config, attempt=attempt).decision
            tries += 1
            shown |= decision is Decision.REGRESSION
            if decision is Decision.PASS:
                shipped += 1
                break
        failed_once += shown
    return {"prs": prs, "attempts": attempts, "ship_rate": shipped / prs, "block_rate": 1 - shipped / prs,
            "shown_regression_rate": failed_once / prs, "mean_tries": tries / prs}


def simulated_plan(*, churn: float = 0.3, seed: int = 0, like: bool = True, slices: dict[str, int] | None = None,
                   **limits: Any) -> dict[str, Any]:
    """`rageval gate plan` on a simulated project: the spread from one simulated past pull request at `churn`
    (`like`) or from the baseline alone at that churn; returns the plan (its `config` for `gate_error_rates`)."""
    import numpy as np

    def spread(groups: dict[str, list[str]]) -> tuple[dict[tuple[str, str], tuple[int, float]], list[str], Any]:
        rng = np.random.default_rng(seed)
        reference = pull_request(rng, churn=churn if like else 1.0, groups={k: tuple(v) for k, v in groups.items()},
                                 slices=slices)
        stats = {}
        for name, entry in reference["slices"].items():
            for m in METRICS:
                cell = entry[m]
                if like:
                    stats[(name, m)] = (cell["n"], float(cell["se"]) * float(np.sqrt(cell["n"])))
                else:                      # the baseline's own spread, as the plan reads it without a past PR
                    stats[(name, m)] = (cell["n"], float(cell["se"]) * float(np.sqrt(cell["n"])) * np.sqrt(churn))
        return stats, list(METRICS), reference["cell_correlation"] if like else None

    defaults = {"tolerance": 5.0, "max_tolerance": 20.0, "allowed": ALLOWED, "power": POWER_PLANNED, "alpha": 0.05}
    return plan_cells(spread, **{**defaults, **limits})


def ppi_population(*, size: int = 400, seed: int = 0) -> dict[str, Any]:
    """One slice of questions on a 1-5 scale (0-100 on the dashboard): true scores a rounded normal, a judge one
    point generous on the weak answers (true score 1-2) and noisy elsewhere. Strata are judge-score bands, as the
    app's stratified sample uses; `score` is the judge score on 0..1 (nearness to the pass mark for `uncertain`)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    truth = np.clip(np.round(rng.normal(3.4, 1.0, size)), 1, 5)
    judge = np.clip(truth + np.where(truth <= 2, 1.0, 0.0) + rng.normal(0, 0.5, size), 1, 5)
    score = (judge - 1) / 4
    return {"truth": (truth - 1) * 25, "judge": (judge - 1) * 25, "score": score,
            "strata": np.minimum(2, (score * 3).astype(int))}


def ppi_under_modes(mode: str, *, rated: int = 40, runs: int = 500, seed: int = 0,
                    weighted: bool = True, drawn: int | None = None) -> dict[str, Any]:
    """The PPI estimate of the slice's mean human score from the judge's scores on every question and `rated`
    ratings drawn as `mode` draws them: its bias and its 95% CI's coverage over `runs` samples. With `drawn`, a
    sample of that size is drawn and only its first `rated` targets, in the order the desk shows them, are rated
    (weighted as the app weighs a partly rated sample)."""
    import numpy as np

    pop = ppi_population(seed=seed)
    target = float(pop["truth"].mean())
    rng = np.random.default_rng(seed + 3)
    covered, errors = 0, []
    for _ in range(runs):
        idx, weights = draw(pop, drawn or rated, mode, rng)
        idx = idx[:rated]
        diffs = np.full(len(pop["truth"]), np.nan)
        diffs[idx] = pop["truth"][idx] - pop["judge"][idx]
        w = np.ones(len(diffs))
        found = weights(rated)
        if weighted and found is not None:
            w[idx] = found
        result = ppi_mean(pop["judge"], diffs, w)
        low, high = result["ci"]
        covered += low <= target <= high
        errors.append(result["estimate"] - target)
    return {"mode": mode, "rated": rated, "drawn": drawn or rated, "weighted": weighted, "bias": float(np.mean(errors)),
            "coverage": covered / runs, "raw_judge_error": float(pop["judge"].mean() - target)}
