"""Calibrations that travel (issue 47 §5): before a judge's audit is trusted on a new run, the ratings made on that
run test whether the judge's errors there still look like the audited ones (as Causal Judge Evaluation's transport
test refuses a calibration that no longer fits). A run whose rows the judge gets wrong more often than on the audited
rows suspends the judge's gate licence *for that run*: its metrics there do not gate until an audit of that run
alone clears the bar (the planner says how many ratings that takes).

An error is what the decisions the judge feeds count as one (core.review.team.misses): a different verdict at the
metric's pass mark (a failing 3 read as a passing 4), or, on a metric without a mark, a miss beyond the team's
tolerance. (It counted only misses of more than one point: failing 3s drifting to passing 4s "held".) Both sides are
weighed as their samples were drawn (Kish's effective n and the weighted error rate), and compared by Fisher's exact
test, one-sided (scipy): suspended when the run's error rate is shown higher at `alpha`. (Boschloo's test, more
powerful in theory, suspended 6-7% of unshifted runs against a weighted audit in the bench — scipy's version
approximates its supremum — so the exact, conservative test decides.) Few ratings rarely suspend (the test says so:
"cannot tell"), so a transport check is a floor, not a proof that nothing moved; bench/bench_transport.py measures
its false-suspension and missed-shift rates.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from rageval_desktop.core.judges.judge import Judge
from rageval_desktop.core.review import evidence, sampling
from rageval_desktop.core.review.agreement import rated_pairs, scale
from rageval_desktop.core.review.selective import confidences
from rageval_desktop.core.review.team import misses
from rageval_desktop.core.review.weights import weighted_pairs
from rageval_desktop.core.store.project import Project
from rageval_desktop.core.store.queries import run_id as find_run

if TYPE_CHECKING:
    from numpy import ndarray

ALPHA = 0.05
MIN_RUN = 8          # ratings on the run before the check says anything
CHECK_SIZE = 40      # a transport check drawn before anyone rates: 40 catch a 25-point shift in 83-95% of checks


@dataclass(frozen=True)
class Transport:
    judge: str
    run: str
    status: str                  # holds | suspended | cannot tell | not checked | audited here
    n_run: float                 # effective ratings on the run (Kish)
    errors_run: float | None     # the run's weighted error rate
    n_audit: float               # effective ratings elsewhere
    errors_audit: float | None
    p_value: float | None
    alpha: float = ALPHA
    level: float | None = None   # a selective licence's level: only the rated rows it decides (confidence ≥ level)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def suspended(self) -> bool:
        return self.status == "suspended"


def _side(errors: ndarray, weights: ndarray | None) -> tuple[float, float | None]:
    """(Kish's effective n, the weighted error rate) of one side."""
    import numpy as np

    if len(errors) == 0:
        return 0.0, None
    w = np.ones(len(errors)) if weights is None else np.asarray(weights, dtype=float)
    n_eff = evidence.effective_n(None if weights is None else w, len(errors))
    return float(n_eff), float(np.average(errors, weights=w))


def transport(project: Project, judge: Judge, run: str, *, alpha: float = ALPHA, level: float | None = None
              ) -> Transport:
    """Do the judge's errors on `run` look like those on the other rated runs? With `level`, on the rated rows a
    selective licence at that level lets it decide (confidence ≥ level; core.review.selective) only: the errors its
    decisions carry."""
    import numpy as np

    find_run(project, run)           # a run that does not exist is an error, not "not checked"
    labels = np.asarray(scale(judge.metric), dtype=float)
    merged, _ = rated_pairs(project, judge)
    merged, design, _ = weighted_pairs(project, judge.metric, merged)
    if level is not None and not merged.empty:
        decided = np.asarray(confidences(project, judge, merged["run_row_id"].tolist(),
                                         merged["judge_score"].tolist()) >= level, dtype=bool)
        merged, design = merged.take(np.flatnonzero(decided)), None if design is None else np.asarray(design)[decided]
    if merged.empty:
        return Transport(judge.name, run, "not checked", 0.0, None, 0.0, None, None, alpha, level)
    human = labels[np.asarray(merged["human"], dtype=int)]      # label indices, back on the metric's scale
    errors = misses(judge.metric, labels[np.asarray(merged["judge"], dtype=int)], human).astype(float)
    here = np.asarray(merged["run"] == run, dtype=bool)
    w = None if design is None else np.asarray(design, dtype=float)
    n_run, rate_run = _side(errors[here], None if w is None else w[here])
    n_audit, rate_audit = _side(errors[~here], None if w is None else w[~here])
    if not here.any():
        return Transport(judge.name, run, "not checked", 0.0, None, n_audit, rate_audit, None, alpha, level)
    if not (~here).any():
        return Transport(judge.name, run, "audited here", n_run, rate_run, 0.0, None, None, alpha, level)
    assert rate_run is not None and rate_audit is not None
    status, p = decide(n_run, rate_run, n_audit, rate_audit, alpha)
    return Transport(judge.name, run, status, n_run, rate_run, n_audit, rate_audit, p, alpha, level)


def draw(project: Project, judge: Judge, run: str, *, size: int = CHECK_SIZE, seed: int = 0) -> sampling.Sample:
    """A transport check before anyone rates: the desk's representative sample of `size` targets of `run` for the
    judge's metric (stratified, each rating weighed as drawn). Rated, it is what `transport` reads (and the audit,
    like any sample). bench/bench_transport.py: 40 ratings catch a 25-point rise in the judge's errors 83-95% of the
    time, a 15-point one 43-68%."""
    return sampling.create_sample(project, run, judge.metric, size=size, seed=seed)


def decide(n_run: float, rate_run: float, n_audit: float, rate_audit: float, alpha: float = ALPHA
           ) -> tuple[str, float | None]:
    """(status, p): the run's errors against the audit's, on effective counts — Fisher's exact test, one-sided."""
    from scipy.stats import fisher_exact

    if n_run < MIN_RUN:
        return "cannot tell", None
    m_run, m_audit = max(1, round(n_run)), max(1, round(n_audit))
    e_run, e_audit = round(rate_run * m_run), round(rate_audit * m_audit)
    table = [[e_run, e_audit], [m_run - e_run, m_audit - e_audit]]      # columns are the two samples
    p = float(fisher_exact(table, alternative="greater").pvalue) if e_run else 1.0
    return ("suspended" if p <= alpha else "holds" if rate_run <= rate_audit else "cannot tell"), p


POWER = 0.8
MOST_PLANNED = 5000   # ratings on the run a plan looks up to


def power(n_run: int, n_audit: int, errors_audit: int, rate_run: float, alpha: float = ALPHA) -> float:
    """The chance `decide` suspends with `n_run` ratings on the run when the judge's error rate there is `rate_run`,
    given the audit's `errors_audit` of `n_audit` (exact: the binomial over the run's errors, Fisher's one-sided p
    for each, hypergeometric; scipy)."""
    import numpy as np
    from scipy.stats import binom, hypergeom

    if n_run < MIN_RUN:
        return 0.0
    e = np.arange(1, n_run + 1)
    total = e + errors_audit
    # Fisher's one-sided p with the run's errors in the first cell: P(X >= e), X the run's share of all the errors
    p = hypergeom.sf(e - 1, n_run + n_audit, total, n_run)
    return float(binom.pmf(e, n_run, rate_run)[p <= alpha].sum())


def fresh_size(rate_audit: float, rate_run: float, target: float = POWER, alpha: float = ALPHA) -> int:
    """Ratings on each side (the audit too, not yet rated) for a one-sided test of two error rates to catch
    `rate_run` against `rate_audit` with probability `target`: the normal formula with Fleiss' continuity correction
    (Fleiss, Levin & Paik, Statistical Methods for Rates and Proportions, 4.14), the usual plan for Fisher's exact
    test; bench/bench_transport.py measures what it delivers through `decide`."""
    from scipy.stats import norm

    p1, p2 = rate_audit, rate_run
    mean = (p1 + p2) / 2
    gap = abs(p2 - p1)
    n = ((norm.ppf(1 - alpha) * math.sqrt(2 * mean * (1 - mean)) + norm.ppf(target) *
          math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))) / gap) ** 2
    return int(math.ceil(n / 4 * (1 + math.sqrt(1 + 4 / (n * gap))) ** 2))


@dataclass(frozen=True)
class Plan:
    """A check sized to a drift (`plan`): `ratings` on the run reach `target` power against the audit (None: no
    number does, and `audit_needed` on each side would)."""
    drift: float
    rate_audit: float
    n_audit: int
    rate_run: float
    target: float
    alpha: float
    ratings: int | None
    audit_needed: int | None
    power_at: float | None

    def as_dict(self) -> dict[str, float | int | None]:
        return asdict(self)


def plan(n_audit: float, rate_audit: float, drift: float, *, target: float = POWER, alpha: float = ALPHA
         ) -> Plan:
    """How many ratings on a run catch a rise of `drift` (a share: 0.05 is 5 points) in the judge's error rate with
    probability `target`, against the audit it has (`n_audit` effective ratings at `rate_audit`): the smallest n
    whose exact power (`power`) reaches it, or None up to MOST_PLANNED — then the audit itself is too small to show
    that drift, and `audit_needed` says how many audit ratings (as many on the run) would."""
    m, e_audit = max(1, round(n_audit)), round(rate_audit * max(1, round(n_audit)))
    rate_run = min(1.0, rate_audit + drift)
    found = _smallest(lambda n: power(n, m, e_audit, rate_run, alpha) >= target, MIN_RUN, MOST_PLANNED)
    both = None
    if found is None:       # the audit's own error hides the drift: as many new ratings on each side
        both = fresh_size(rate_audit, rate_run, target, alpha)
    return Plan(drift, rate_audit, m, rate_run, target, alpha, found, both,
                None if found is None else power(found, m, e_audit, rate_run, alpha))


def _smallest(enough: Callable[[int], bool], low: int, high: int) -> int | None:
    """The smallest n in [low, high] for which `enough(n)` holds, stepping up 5% at a time and then back to the
    first that holds (power is not monotone to the unit with discrete counts; this finds a planned n that holds)."""
    if not enough(high):
        return None
    n, last = low, None
    while n <= high:
        if enough(n):
            last = n
            break
        n = max(n + 1, int(n * 1.05))
    if last is None:
        return None
    for k in range(max(low, int(last / 1.05) - 1), last):
        if enough(k):
            return k
    return last


def describe_plan(p: Plan, judge: str, run: str) -> str:
    """A plan in words: what a check of that size sees, or that the audit is too small to see it."""
    what = (f"a rise of {100 * p.drift:.0f} points in {judge}'s errors on {run} (from {p.rate_audit:.0%} where "
            f"audited, {p.n_audit} ratings, to {p.rate_run:.0%})")
    if p.ratings is not None and p.power_at is not None:
        return (f"{what}: {p.ratings} ratings on {run} catch it {p.power_at:.0%} of the time (Fisher one-sided "
                f"{p.alpha:g}; rageval transport --run {run} --draw {p.ratings})")
    both = (f"about {p.audit_needed} ratings on each side would" if p.audit_needed is not None else
            f"not even {MOST_PLANNED} ratings on each side would")
    return (f"{what}: no number of ratings on {run} alone catches it {p.target:.0%} of the time — the audit's own "
            f"{p.n_audit} ratings leave its rate too uncertain; {both}")


def describe(t: Transport) -> str:
    """The check in words (display rounding), the same in the CLI, the gate and the app."""
    if t.status == "not checked":
        return (f"{t.judge} on {t.run}: no ratings on {t.run} yet — its audit elsewhere is reused unchecked (rageval "
                f"transport --run {t.run} --draw puts {CHECK_SIZE} of its rows on the desk to check it)")
    if t.status == "audited here":
        return f"{t.judge} on {t.run}: every rating is on {t.run} (the audit is this run's own)"
    said = (f"errors {t.errors_run:.0%} of {t.n_run:.0f} rated on {t.run}, {t.errors_audit:.0%} of "
            f"{t.n_audit:.0f} elsewhere" + ("" if t.level is None else
                                            f" (the rows its selective licence decides: confidence ≥ {t.level:.2f})"))
    if t.status == "suspended":
        return (f"{t.judge} on {t.run}: SUSPENDED — {said} (Fisher p = {t.p_value:.3f} ≤ {t.alpha:g}); its metrics "
                f"on {t.run} do not gate until an audit of {t.run} alone clears the bar")
    if t.n_run < MIN_RUN:
        return f"{t.judge} on {t.run}: {said}; {MIN_RUN} ratings on {t.run} are the least a check reads"
    if t.status == "cannot tell":
        p = f" (p = {t.p_value:.2f})" if t.p_value is not None else ""
        return f"{t.judge} on {t.run}: cannot tell yet — {said}{p}; more ratings there would show whether they moved"
    return f"{t.judge} on {t.run}: holds — {said}" + (f" (p = {t.p_value:.2f})" if t.p_value is not None else "")


__all__ = ["ALPHA", "CHECK_SIZE", "MIN_RUN", "Plan", "Transport", "decide", "describe", "describe_plan", "draw", "plan",
           "power", "transport"]
