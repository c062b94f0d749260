"""Judge means corrected by the human sample: prediction-powered inference (Angelopoulos et al., Science 2023).

A judge's mean over a slice is biased when the judge is: an LLM that scores one point high on adversarial
questions moves the slice's mean, and the CI gate with it, by that point. The human ratings of a few of those
questions measure the bias; PPI adds it back:

    estimate = mean of the judge's scores over all N questions  +  mean of (human - judge) over the n rated ones

with the 95% CI  estimate ± t sqrt(var(judge)/N + var(human - judge)/n + 2 cov(judge, human - judge)/N) (the
last term because the rated questions are among the N; t is Student's on the rated questions; the correction's
variance is never below Agresti-Coull's for the rows the judge gets wrong by half the scale or more, `rectifier`, so
a judge's rare, large errors that the few rated questions happen to miss still widen the interval). The first term
carries the judge's coverage of the whole slice, the second the humans' correction; the interval is narrow when the
judge tracks the humans (the differences vary little) and as wide as a human-only estimate when it does not, so a
biased judge can never buy a narrow interval. Ratings from a non-uniform sample (core.review.sampling's
`disagreement` and `uncertain` modes) are weighted by their inverse inclusion probability (a Hajek mean) and
`effective_n` is Kish's effective sample size; for a uniform sample it equals `n_rated`.

Pure functions on arrays: `core.metrics.dashboard` calls them per slice and judge metric, `core.metrics.compare`
for the difference of two runs. Values are on the dashboard's 0-100 scale, at full precision.
"""

from __future__ import annotations

import math
from typing import Any

from rageval_desktop.core.base.stats import t_quantile, unseen_change_se
from rageval_desktop.core.base.vocab import METRICS
from rageval_desktop.core.review.targets import unit

MIN_RATED = 10          # rated questions a slice needs before a corrected estimate is shown
ESTIMATORS = ("mean", "ppi")


def applies(metric: str) -> bool:
    """Whether a judge metric gets a corrected estimate: one humans rate per row (correctness, faithfulness…).
    Retrieval metrics need none; the gold-free scores derived from per-item judgments (umbrela_*, nugget_*,
    citation_*) stay judge means."""

    return metric in METRICS and unit(metric) == "row"


def critical(effective_n: float) -> float:
    """The two-sided 95% critical value: Student's t on the rated questions' degrees of freedom (the correction
    dominates the variance when ratings are few), which tends to 1.96."""
    return t_quantile(0.975, max(1.0, effective_n - 1.0))


def too_few(n_rated: int, minimum: int = MIN_RATED) -> str:
    return f"too few ratings: {n_rated} rated question(s), {minimum} needed for a corrected estimate"


def _finite(values: Any) -> Any:
    import numpy as np

    data = np.asarray(values, dtype=float)
    return data[np.isfinite(data)]


def _clip(value: float, bounds: tuple[float, float]) -> float:
    return min(bounds[1], max(bounds[0], value))


SPAN = 100.0             # the widest a difference (human - judge) can be on the 0-100 scale
PSEUDO = 1.959964 ** 2 / 2   # Agresti-Coull's z^2 / 2 pseudo-observations


def rectifier(diffs: Any, weights: Any | None, span: float = SPAN) -> tuple[float, float, float, int, bool]:
    """(mean of the differences, the variance of that mean, Kish's effective n, n, weighted) over the rated
    questions (finite differences). Weights of 1 everywhere (a representative sample) are no weighting.

    The variance is never below Agresti-Coull's for the rows the judge gets wrong by half the scale or more: (the
    rated differences' spread, less that of the small ones about the median difference, + z^2/2 pseudo-differences
    of `span`) / (n + z^2)^2. With 10-20 ratings that all agree with the judge the plain variance is 0 — and a judge
    wrong on 5-10% of rows, by a whole pass/fail or by 3-4 points, read 95% intervals that covered 65-88% of the
    time. Pass/fail differences (0 or the whole scale from the median) keep Agresti-Coull's floor as it was. Small
    errors, however frequent, are left to the plain variance, which the CLT serves: counting them in the floor (as
    the first floor did) doubled the variance of a judge 0.8 points high at 40 ratings and halved the gate's power
    there. Measured in bench/bench_ppi.py (rare errors: >= 94% at 10-100 ratings)."""
    import numpy as np

    d = np.asarray(diffs, dtype=float)
    w = np.ones_like(d) if weights is None else np.nan_to_num(np.asarray(weights, dtype=float), nan=1.0)
    keep = np.isfinite(d) & (w > 0)
    d, w = d[keep], w[keep]
    n = int(d.size)
    weighted = bool(n) and not np.allclose(w, 1.0)
    if n == 0:
        return math.nan, math.nan, 0.0, 0, False
    total = float(w.sum())
    mean = float((w * d).sum() / total)
    eff = total ** 2 / float((w ** 2).sum())
    if n < 2:
        return mean, math.nan, eff, n, weighted
    # the linearised variance of a Hajek mean, with the n / (n - 1) small-sample factor (= var/n when unweighted)
    scale = w ** 2 / total ** 2 * n / (n - 1)
    var = float((scale * (d - mean) ** 2).sum())
    # Agresti-Coull's floor, less the spread of the small differences (under half the scale from the median one)
    # about the median: what is left is the rows the judge got wrong by a whole verdict. Pass/fail differences have no
    # small ones but those at the median (nothing to take away); small ones alone leave the z^2/2 unseen ones.
    typical = float(np.median(d))
    small = np.abs(d - typical) < span / 2
    wide = max(0.0, var - float((scale[small] * (d[small] - typical) ** 2).sum()))
    floor = (wide * eff ** 2 + PSEUDO * span ** 2) / (eff + 2 * PSEUDO) ** 2
    return mean, max(var, floor), eff, n, weighted


def ppi_mean(judge_all: Any, diffs: Any, weights: Any | None = None, *, minimum: int = MIN_RATED,
             bounds: tuple[float, float] = (0.0, 100.0)) -> dict[str, Any]:
    """The PPI estimate of a mean from the judge's scores on every question (`judge_all`) and, per rated
    question, human - judge (`diffs`, aligned with `judge_all`; NaN where not rated), optionally weighted. Without
    `minimum` rated questions it gives no number, only why (`too_few`). The estimate and its CI are kept within
    `bounds` (the scale: a mean of 0-100 scores is never negative)."""
    import numpy as np

    scores = np.asarray(judge_all, dtype=float)
    judge = _finite(scores)
    rect, var_rect, eff, n, weighted = rectifier(diffs, weights)
    out: dict[str, Any] = {"n_all": int(judge.size), "n_rated": n, "effective_n": eff,
                           "judge_mean": float(judge.mean()) if judge.size else None, "weighted": weighted}
    if n < max(minimum, 2) or judge.size == 0:
        return {**out, "estimate": None, "ci": None, "correction": None,
                "why": too_few(n, max(minimum, 2)) if judge.size else "the judge scored no question here"}
    var_judge = float(judge.var(ddof=1)) / judge.size if judge.size > 1 else 0.0
    # the rated questions are among the N: the two means covary by cov(judge, human - judge) / N
    d = np.asarray(diffs, dtype=float)
    rated = np.isfinite(d) & np.isfinite(scores)
    cov = float(np.cov(scores[rated], d[rated])[0, 1]) / judge.size if rated.sum() > 1 else 0.0
    half = critical(eff) * _floored(math.sqrt(max(0.0, var_judge + var_rect + 2 * cov)), n)
    estimate = out["judge_mean"] + rect
    return {**out, "estimate": _clip(estimate, bounds),
            "ci": [_clip(estimate - half, bounds), _clip(estimate + half, bounds)], "correction": rect, "why": None}


def describe(p: dict[str, Any]) -> str:
    """One `ppi_mean` result for people (display rounding): 'corrected 39.6 [95% CI 27.0, 52.2] from 12 rated
    question(s)', or why there is no number."""
    if p["estimate"] is None:
        return f"corrected: {p['why']}"
    eff = f", effective {p['effective_n']:.1f} (weighted)" if p["weighted"] else ""
    return (f"corrected {p['estimate']:.1f} [95% CI {p['ci'][0]:.1f}, {p['ci'][1]:.1f}] from {p['n_rated']} rated "
            f"question(s){eff}")


def ppi_delta(judge_a: Any, judge_b: Any, diffs_a: Any, diffs_b: Any, weights_a: Any | None = None,
              weights_b: Any | None = None, *, minimum: int = MIN_RATED) -> dict[str, Any]:
    """candidate (b) - baseline (a), each corrected by its own ratings. `judge_a`, `judge_b` are paired (the
    same questions, NaN where a run's judge did not score one): the judge part of the difference is a paired
    mean; the two corrections come from separate ratings and add their variances."""
    import numpy as np

    ja, jb = np.asarray(judge_a, dtype=float), np.asarray(judge_b, dtype=float)
    both = np.isfinite(ja) & np.isfinite(jb)
    ra, var_a, eff_a, na, _ = rectifier(diffs_a, weights_a)
    rb, var_b, eff_b, nb, _ = rectifier(diffs_b, weights_b)
    out: dict[str, Any] = {"n": int(both.sum()), "n_rated": [na, nb], "effective_n": [eff_a, eff_b]}
    need = max(minimum, 2)
    if na < need or nb < need or not both.any():
        short = [f"baseline {na}", f"candidate {nb}"]
        return {**out, "delta": None, "ci": None,
                "why": f"too few ratings: {', '.join(short)} rated question(s), {need} needed in each run"}
    paired = jb[both] - ja[both]
    var_paired = float(paired.var(ddof=1)) / paired.size if paired.size > 1 else 0.0
    baseline = _clip(float(ja[both].mean()) + ra, (0.0, 100.0))     # on the 0-100 scale, as the dashboard's
    candidate = _clip(float(jb[both].mean()) + rb, (0.0, 100.0))
    delta = candidate - baseline
    # delta = mean(judge b - judge a) + correction b - correction a: each correction's rated questions are among
    # the paired ones, so it covaries with the paired mean by cov(paired, human - judge) / N (as in ppi_mean);
    # the two runs' ratings are separate draws and do not covary
    full = jb - ja
    cov = (covariance(full, diffs_b) - covariance(full, diffs_a)) / paired.size
    se = _floored(math.sqrt(max(0.0, var_paired + var_a + var_b + 2 * cov)), min(na, nb))
    df = min(eff_a, eff_b) - 1.0
    half = critical(min(eff_a, eff_b)) * se
    return {**out, "baseline": baseline, "candidate": candidate, "delta": delta,
            "ci": [delta - half, delta + half], "se": se, "df": df, "why": None}


def _floored(se: float, n_rated: int) -> float:
    """A standard error of 0 (every rated difference the same, the judge constant) says nothing is uncertain,
    which n ratings cannot show: it gets the error of a share of changed questions when none of n was seen to
    change, as unrated metrics do (core.metrics.stats.unseen_change_se)."""
    return se if se > 0 else unseen_change_se(n_rated)


def covariance(values: Any, diffs: Any) -> float:
    """The sample covariance of `values` and `diffs` over the questions where both are known (0 with fewer than
    two)."""
    import numpy as np

    v, d = np.asarray(values, dtype=float), np.asarray(diffs, dtype=float)
    known = np.isfinite(v) & np.isfinite(d)
    return float(np.cov(v[known], d[known])[0, 1]) if known.sum() > 1 else 0.0


def simulate(projects: int = 200, *, seed: int = 0, rows_per_slice: int = 400, rated_per_slice: int = 40,
             bias: float = 0.8, noise: float = 0.7) -> dict[str, Any]:
    """The check behind "a biased judge cannot move the gate": `projects` simulated projects, each with a slice
    of `rows_per_slice` questions drawn from one distribution of true (human) scores on a 1-5 scale, a judge that
    is noisy and `bias` points high on that slice, humans who give the true score, and a uniform sample of
    `rated_per_slice` rated questions. Returns how far the raw judge mean and the PPI estimate are from the true
    mean, and how often the PPI 95% CI covers it (on the 0-100 scale, as the dashboard shows it)."""
    import numpy as np
    from scipy.stats import norm

    rng = np.random.default_rng(seed)
    to100 = 100.0 / 4.0
    # the questions are a sample of the questions such a slice could hold: the truth is the expected human score
    # (a rounded, clipped normal), not the mean of the questions drawn
    cuts = norm.cdf([1.5, 2.5, 3.5, 4.5], loc=3.2, scale=1.0)
    probs = np.diff(np.concatenate([[0.0], cuts, [1.0]]))
    true_mean = (float((probs * np.arange(1, 6)).sum()) - 1) * to100
    covered = covered_raw = 0
    raw_err, ppi_err, widths = [], [], []
    for _ in range(projects):
        truth = np.clip(np.round(rng.normal(3.2, 1.0, rows_per_slice)), 1, 5)
        judge = np.clip(truth + bias + rng.normal(0.0, noise, rows_per_slice), 1, 5)
        rated = rng.choice(rows_per_slice, rated_per_slice, replace=False)
        diffs = np.full(rows_per_slice, np.nan)
        diffs[rated] = (truth[rated] - judge[rated]) * to100
        result = ppi_mean((judge - 1) * to100, diffs)
        low, high = result["ci"]
        covered += low <= true_mean <= high
        raw = result["judge_mean"]
        covered_raw += abs(raw - true_mean) <= (high - low) / 2
        raw_err.append(raw - true_mean)
        ppi_err.append(result["estimate"] - true_mean)
        widths.append(high - low)
    return {"projects": projects, "rows_per_slice": rows_per_slice, "rated_per_slice": rated_per_slice,
            "bias_points_on_1_5": bias, "coverage": covered / projects,
            "raw_mean_error": float(np.mean(raw_err)), "ppi_mean_error": float(np.mean(ppi_err)),
            "ppi_abs_error_p95": float(np.percentile(np.abs(ppi_err), 95)), "mean_ci_width": float(np.mean(widths)),
            "raw_within_half_width": covered_raw / projects}
