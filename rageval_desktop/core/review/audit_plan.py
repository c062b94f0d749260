"""Plan an audit before anyone rates (issue 46): how many ratings, drawn how, reach a verdict with 80% probability
for a judge at a plausible agreement — and what a requested size can decide.

A sample drawn since 0.4 records its plan: looks at a quarter, half, three quarters and all of it, each deciding on
its group-sequential boundary (core.review.evidence: ALPHA_FINAL spent Lan–DeMets O'Brien–Fleming-style, about 2.1
standard errors at the last look), while any other look uses the anytime interval (ALPHA_INTERIM). With a
plausible agreement κ (the judge's last audit, else 0.85) and the judges' own score
distribution on the run, the expected confusion matrix is κ·diag(p) + (1 − κ)·p pᵀ (the humans share the judges'
margins; Cohen's and the quadratic κ of this matrix are both κ), and its posterior spread gives the standard error
per rating, σ. The plan keeps a judge at κ with 80% probability at m effective ratings when one of its looks'
z, θ·√t with θ = (κ − threshold)·√m/σ, crosses its boundary with that probability (the design's exact power under
the canonical joint normal). The sampling mode's design effect — Kish's, of the inclusion probabilities
the draw would give, computed without drawing — turns effective ratings into ratings, and reviewers' median seconds
per rating (60 s when none are recorded) into time.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.base.vocab import METRICS
from rageval_desktop.core.review import evidence as ev
from rageval_desktop.core.review import sampling
from rageval_desktop.core.review.agreement import scale, to_points
from rageval_desktop.core.review.settings import policy
from rageval_desktop.core.store import reads
from rageval_desktop.core.store.project import Project
from rageval_desktop.core.store.queries import run_id as find_run

PLAUSIBLE = 0.85          # the agreement a judge is planned for when it has no audit yet
SECONDS = 60.0            # a rating's time when none is recorded
POWER = 0.8
MAX_RATINGS = 2000


def margins_of(project: Project, rid: int, metric: str) -> list[float]:
    """The judges' score distribution on the run, on the human scale (uniform when nothing is judged)."""
    import numpy as np

    labels = scale(metric)
    scores = [s for (s,) in project.reader().execute(
        "SELECT x.score FROM judgments x JOIN judges j ON j.id = x.judge_id JOIN run_rows rr ON rr.id = x.run_row_id "
        "WHERE rr.run_id = ? AND j.metric = ? AND j.status = 'active' AND x.status = 'ok' AND x.passage_rank = 0",
        (rid, metric)) if s is not None]
    if not scores:
        return [1.0 / len(labels)] * len(labels)
    counts = np.bincount(to_points(np.asarray(scores, dtype=float), labels, judge=True), minlength=len(labels))
    p = (counts + 0.5) / (counts.sum() + 0.5 * len(labels))
    return [float(x) for x in p]


def sigma(kappa: float, margins: list[float], statistic: str) -> float:
    """The standard error of the statistic for one rating (its posterior spread at n, times √n), for the expected
    confusion matrix of a judge at `kappa` with these margins."""
    import numpy as np

    p = np.asarray(margins, dtype=float)
    k = len(p)
    table = kappa * np.diag(p) + (1 - kappa) * np.outer(p, p)
    n = 400
    counts = np.rint(table * n).astype(int)
    human = np.repeat(np.arange(k), counts.sum(axis=1))
    judge = np.concatenate([np.repeat(np.arange(k), counts[i]) for i in range(k)])
    draws = ev.posterior(statistic, human, judge, k, draws=1000, n_eff=float(len(human)))
    if draws.size < 10:
        return math.nan
    return float(np.std(draws)) * math.sqrt(len(human))


def design_effect(project: Project, rid: int, metric: str, mode: str, size: int, seed: int = 0, *,
                  kappa: float | None = None, margins: list[float] | None = None, statistic: str = "") -> float:
    """The design effect of a draw of `size` in `mode` (nothing drawn): Kish's, of its inclusion probabilities; for
    a weighted mode, given `kappa` and `margins`, times what the audit's jackknife widening will add on top of it
    (the audit widens a weighted sample's interval to the jackknife's error where Kish's n overstates it: a planned
    1-5 `uncertain` sample sized on Kish's alone kept a judge at 0.81 in 70% of audits, not 80%)."""
    import numpy as np

    picked, inclusion = sampling.preview_draw(project, rid, metric, mode, size, seed)
    found = [(c, 1.0 / inclusion[(c.row_id, c.item)]) for c, _ in picked if inclusion.get((c.row_id, c.item))]
    w = np.array([x for _, x in found])
    if w.size < 2:
        return 1.0
    kish = float(w.size * (w ** 2).sum() / w.sum() ** 2)
    if mode not in sampling.WEIGHTED or kappa is None or margins is None or not statistic:
        return kish
    labels = scale(metric)
    judged = np.array([float(np.mean(c.scores)) if c.scores else math.nan for c, _ in found])
    keep = np.isfinite(judged)
    if keep.sum() < 3:
        return kish
    return kish * widening(to_points(judged[keep], labels, judge=True), w[keep], kappa, margins, statistic)


def widening(judge: Any, weights: Any, kappa: float, margins: list[float], statistic: str, runs: int = 20) -> float:
    """How much more variance the audit will read than Kish's n gives: the mean of (jackknife / posterior error)²,
    where larger, over human labels simulated from the expected confusion matrix given each target's judge label."""
    import numpy as np

    p = np.asarray(margins, dtype=float)
    k = len(p)
    table = kappa * np.diag(p) + (1 - kappa) * np.outer(p, p)
    given = table / table.sum(axis=0, keepdims=True)                 # P(human | judge), one column per judge label
    rng = np.random.default_rng(46)
    j = np.asarray(judge, dtype=np.int64)
    w = np.asarray(weights, dtype=float)
    n_eff = ev.effective_n(w, w.size)
    ratios = []
    for _ in range(runs):
        u = rng.random(j.size)
        h = (u[:, None] > np.cumsum(given[:, j].T, axis=1)).sum(axis=1).clip(0, k - 1)
        draws = ev.posterior(statistic, h, j, k, w, draws=400, n_eff=n_eff)
        jack = ev.jackknife_se(statistic, h, j, k, w)
        if draws.size >= 100 and math.isfinite(jack):
            ratios.append(max(1.0, (jack / float(np.std(draws))) ** 2))
    return float(np.mean(ratios)) if ratios else 1.0


QUARTERS = tuple(m / ev.LOOKS for m in range(1, ev.LOOKS + 1))   # the plan's looks, as fractions of its size


def crossing(drift: float, fractions: tuple[float, ...] = QUARTERS) -> float:
    """The probability that a planned audit keeps a judge whose standardised distance above the threshold at the
    plan's full size is `drift` (θ = (κ − threshold)·√m / σ): one minus the chance that every look's z, θ·√t at
    look t, stays under its group-sequential boundary (core.review.evidence.look_boundaries)."""
    import numpy as np
    from scipy.stats import multivariate_normal

    bounds = ev.look_boundaries(fractions)
    t = np.asarray(fractions)
    cov = np.sqrt(np.minimum.outer(t, t) / np.maximum.outer(t, t))
    upper = np.asarray(bounds) - drift * np.sqrt(t)
    return float(1.0 - multivariate_normal(np.zeros(len(t)), cov, seed=0).cdf(upper))


def effective_needed(kappa: float, sig: float, threshold: float, min_n: int, power: float = POWER) -> float | None:
    """Effective ratings at which a judge at `kappa` is kept with `power` by one of the plan's looks (None: it
    cannot be: κ at or under the threshold, or more than MAX_RATINGS)."""
    from scipy.optimize import brentq

    distance = kappa - threshold
    if not (math.isfinite(sig) and sig > 0) or distance <= 0:
        return None
    drift = brentq(lambda d: crossing(d) - power, 0.0, 20.0, xtol=1e-4)
    m = (drift * sig / distance) ** 2
    return float(max(min_n, math.ceil(m))) if m <= MAX_RATINGS else None


def power_at(kappa: float, sig: float, threshold: float, min_n: int, m: float) -> float:
    """The probability that a planned sample of m effective ratings keeps a judge at `kappa` at one of its looks,
    by the normal approximation the planner uses."""
    if m < min_n or not (math.isfinite(sig) and sig > 0):
        return 0.0
    return crossing((kappa - threshold) * math.sqrt(m) / sig)


def plan_audit(project: Project, run: str, metric: str, *, mode: str = "stratified", kappa: float | None = None,
               judge: str | None = None, size: int | None = None, power: float = POWER) -> dict[str, Any]:
    """The audit's plan: the ratings (and reviewer time) that reach a verdict with `power` for a judge at a
    plausible κ in this sampling mode; with `size`, what that size can decide, and a warning when it cannot. The
    run's targets are read once for every draw the plan previews (each read them again: 1.3 s a draw at 200k rows,
    up to fourteen draws)."""
    with reads.shared(project):
        return _plan_audit(project, run, metric, mode=mode, kappa=kappa, judge=judge, size=size, power=power)


def _plan_audit(project: Project, run: str, metric: str, *, mode: str, kappa: float | None, judge: str | None,
                size: int | None, power: float) -> dict[str, Any]:
    if metric not in METRICS:
        raise RagevalError(f"unknown metric '{metric}'; choose one of {', '.join(METRICS)}")
    if mode not in sampling.MODES:
        raise RagevalError(f"unknown sampling mode '{mode}'; choose one of {', '.join(sampling.MODES)}")
    pol = policy(project)
    rid = find_run(project, run)
    statistic = pol.deciding(len(scale(metric)))
    source = "given"
    if kappa is None:
        kappa, source = _last_audit(project, metric, judge)
    margins = margins_of(project, rid, metric)
    sig = sigma(kappa, margins, statistic)
    needed = effective_needed(kappa, sig, pol.threshold, pol.min_n, power)
    out: dict[str, Any] = {"run": run, "metric": metric, "mode": mode, "statistic": statistic, "kappa": kappa,
                           "kappa_source": source, "threshold": pol.threshold, "power": power,
                           "sigma_per_rating": sig, "effective_needed": needed}
    seconds = _seconds_per_rating(project, metric)

    def deff_at(n: int) -> float:
        return design_effect(project, rid, metric, mode, n, kappa=kappa, margins=margins, statistic=statistic)

    if needed is None:
        out.update({"ratings": None, "design_effect": None, "minutes": None,
                    "why": (f"a judge at {statistic} {kappa:.2f} cannot be kept against the threshold "
                            f"{pol.threshold:g}" if kappa <= pol.threshold else
                            f"more than {MAX_RATINGS} ratings would be needed")})
    elif needed > (available := len(sampling.strata_of(project, rid, metric))):
        chance = power_at(kappa, sig, pol.threshold, pol.min_n, float(available))
        out.update({"ratings": None, "design_effect": None, "minutes": None,
                    "why": (f"the run has {available} targets to rate and {needed:.0f} effective ratings are needed: "
                            f"rating all of them decides about {chance:.0%} of the time (rate a larger run, or "
                            "audit on several runs)")})
    else:
        ratings, deff = _grown(deff_at, lambda n: power_at(kappa, sig, pol.threshold, pol.min_n, n), needed,
                               max(int(needed), pol.min_n), available, power)
        out.update({"ratings": ratings, "design_effect": deff, "minutes": ratings * seconds / 60.0, "why": None})
    if size is not None:
        deff = deff_at(size)
        chance = power_at(kappa, sig, pol.threshold, pol.min_n, size / deff)
        out["requested"] = {"size": size, "design_effect": deff, "effective_n": size / deff, "power": chance}
        if chance < 0.5:
            out["warning"] = (f"a sample of {size} keeps a judge at {statistic} {kappa:.2f} only {chance:.0%} of the "
                              f"time (effective n {size / deff:.1f}): most audits of it will end 'needs more "
                              "ratings'" + (f"; plan {out['ratings']} for {power:.0%}" if out.get("ratings") else ""))
    return out


def _grown(deff_at: Callable[[int], float], power_of: Callable[[float], float], needed: float, start: int,
           available: int, power: float) -> tuple[int, float]:
    """The ratings that reach `power`: the effective n needed times the design effect at the size it asks for,
    grown until that size has the power (or every target is asked); and that design effect."""
    deff = deff_at(start)
    ratings = int(math.ceil(needed * deff))
    for _ in range(12):
        deff = deff_at(ratings)
        if ratings >= available or power_of(ratings / deff) >= power:
            break
        ratings = min(available, max(ratings + 1, int(math.ceil(needed * deff)), int(ratings * 1.03)))
    return ratings, deff


def _last_audit(project: Project, metric: str, judge: str | None) -> tuple[float, str]:
    sql = ("SELECT a.value, j.name FROM agreement_reports a JOIN judges j ON j.id = a.judge_id WHERE a.metric = ? "
           "AND a.value IS NOT NULL" + (" AND j.name = ?" if judge else "") + " ORDER BY a.id DESC LIMIT 1")
    row = project.reader().execute(sql, (metric, judge) if judge else (metric,)).fetchone()
    if row is None:
        return PLAUSIBLE, "assumed (no audit yet)"
    return float(min(0.99, max(0.0, row[0]))), f"the last audit of {row[1]}"


def _seconds_per_rating(project: Project, metric: str) -> float:
    import statistics

    found = [s for (s,) in project.reader().execute(
        "SELECT seconds_taken FROM human_ratings WHERE metric = ? AND seconds_taken > 0 ORDER BY id DESC LIMIT 500",
        (metric,))]
    return float(statistics.median(found)) if found else SECONDS


def describe(plan: dict[str, Any]) -> str:
    """The plan in words (the CLI and the sample dialog)."""
    lines = [f"plan: {plan['statistic']} of a judge at {plan['kappa']:.2f} ({plan['kappa_source']}) against the "
             f"threshold {plan['threshold']:g}, {plan['mode']} sample"]
    if plan["ratings"] is None:
        lines.append(f"no size reaches a verdict: {plan['why']}")
    else:
        lines.append(f"{plan['ratings']} ratings reach a verdict {plan['power']:.0%} of the time (effective n "
                     f"{plan['effective_needed']:.0f}, design effect {plan['design_effect']:.2f}); about "
                     f"{plan['minutes']:.0f} reviewer-minutes, fewer when a look at a quarter, half or three quarters "
                     "of them decides")
    if "requested" in plan:
        r = plan["requested"]
        lines.append(f"the size asked for, {r['size']}: effective n {r['effective_n']:.1f}, a verdict about "
                     f"{r['power']:.0%} of the time")
    if plan.get("warning"):
        lines.append(f"warning: {plan['warning']}")
    return "\n".join(lines)
