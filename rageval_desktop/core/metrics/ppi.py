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
biased judge can never buy a narrow interval. The estimate is PPI++'s (Angelopoulos, Duchi and Zrnic 2023):
lambda * the judge's mean + the mean of (human - lambda * judge), lambda the rated questions' slope of human on
judge clipped to [0, 1] (`tuning`; for ratings drawn from the judged questions it is survey sampling's regression
estimator). A judge that tracks people keeps lambda near 1, plain PPI; one that tracks them loosely is leaned on
less, so its noise no longer widens the interval beyond the humans' own. The lambda used is the one of 0, 0.05, ...,
1 and that slope whose variance is least (`Rated.choose`): 0 is people alone, so the floor for unseen errors never
makes the corrected interval wider than the ratings alone give. Its variance is the larger of the linearised one
(floored as above, the unseen errors `lambda` of the scale wide and added to the seen spread) and the delete-one
jackknife of the whole choice (`Rated.spread`). `tune=False` is plain PPI. Measured in bench/bench_ppi_grid.py and
bench/bench_ppi.py (docs/agreement.md). Ratings from a non-uniform sample (core.review.sampling's
`disagreement` and `uncertain` modes) are weighted by their inverse inclusion probability (a Hajek mean) and
`effective_n` is Kish's effective sample size; for a uniform sample it equals `n_rated`.

Pure functions on arrays: `core.metrics.dashboard` calls them per slice and judge metric, `core.metrics.compare`
for the difference of two runs. Values are on the dashboard's 0-100 scale, at full precision.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rageval_desktop.core.base.stats import t_quantile, unseen_change_se
from rageval_desktop.core.base.vocab import METRICS
from rageval_desktop.core.review.targets import unit

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Floats = NDArray[np.float64]

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


def _finite(values: Any) -> Floats:
    import numpy as np

    data = np.asarray(values, dtype=float)
    return np.asarray(data[np.isfinite(data)], dtype=np.float64)


def _clip(value: float, bounds: tuple[float, float]) -> float:
    return min(bounds[1], max(bounds[0], value))


SPAN = 100.0             # the widest a difference (human - judge) can be on the 0-100 scale
PSEUDO = 1.959964 ** 2 / 2   # Agresti-Coull's z^2 / 2 pseudo-observations


def rectifier(diffs: Any, weights: Any | None, span: float = SPAN, reach: float = 1.0,
              added: bool = False) -> tuple[float, float, float, int, bool]:
    """(mean of the differences, the variance of that mean, Kish's effective n, n, weighted) over the rated
    questions (finite differences). Weights of 1 everywhere (a representative sample) are no weighting.

    The variance is never below Agresti-Coull's for the rows the judge gets wrong by half the scale or more: (the
    rated differences' spread, less that of the small ones about the median difference, + z^2/2 pseudo-differences
    of `span`) / (n + z^2)^2. With 10-20 ratings that all agree with the judge the plain variance is 0 — and a judge
    wrong on 5-10% of rows, by a whole pass/fail or by 3-4 points, read 95% intervals that covered 65-88% of the
    time. Pass/fail differences (0 or the whole scale from the median) keep Agresti-Coull's floor as it was. Small
    errors, however frequent, are left to the plain variance, which the CLT serves: counting them in the floor (as
    the first floor did) doubled the variance of a judge 0.8 points high at 40 ratings and halved the gate's power
    there. Measured in bench/bench_ppi.py (rare errors: >= 94% at 10-100 ratings). `reach` is the share of the
    judge's scores the estimate leans on (`tuning`'s lambda): an unseen judge error moves it by that share, so the
    unseen pseudo-differences are `reach * span` wide (the whole scale for plain PPI). With `added` (the corrected
    means') the unseen ones' share is added to the seen spread, not hidden under it: leaning on a judge by half
    (`reach` 0.5) leaves half the human spread in the differences, and a maximum let that spread stand in for the
    judge's unseen errors (1-5 judges wrong on 10-20% of rows were covered 90.5-93.7% of the time at 10-20
    ratings)."""
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
    unseen = PSEUDO * (reach * span) ** 2 / (eff + 2 * PSEUDO) ** 2
    floor = wide * eff ** 2 / (eff + 2 * PSEUDO) ** 2 + unseen
    return mean, max(var, floor) + (min(var, unseen) if added else 0.0), eff, n, weighted


def _rated(judge_all: Any, diffs: Any, weights: Any | None) -> tuple[Floats, Floats, Floats]:
    """(judge, human, weight) of the rated questions: a finite difference and judge score, a positive weight (1
    where none is given)."""
    import numpy as np

    f = np.asarray(judge_all, dtype=float)
    d = np.asarray(diffs, dtype=float)
    w = np.ones_like(d) if weights is None else np.nan_to_num(np.asarray(weights, dtype=float), nan=1.0)
    rated = np.isfinite(d) & np.isfinite(f) & (w > 0)
    return f[rated], d[rated] + f[rated], w[rated]


def tuning(judge_all: Any, diffs: Any, weights: Any | None = None) -> float:
    """PPI++'s power tuning (Angelopoulos, Duchi and Zrnic 2023), for rated questions drawn from the judged ones:
    the lambda in [0, 1] that minimises the variance of lambda * mean(judge) + mean(human - lambda * judge). With
    the rated questions among the N judged (not a second set, as in ppi_py), that variance is lambda^2 var(f)/N +
    var(y - lambda f)/n + 2 lambda cov(f, y - lambda f)/N, least at cov(f, y) / var(f): the regression estimator of
    survey sampling, the judge the auxiliary variable known on every question, its slope the rated questions'
    (weighted as drawn: the population's slope, however the sample spread the judge's scores); clipped to [0, 1]
    as PPI++ does. A judge that tracks people (slope 1) keeps lambda near 1, plain PPI; a noisy one is leaned on
    less, and the estimate nears the human mean instead of paying for the judge's noise. 1 when nothing says
    otherwise (fewer than 3 rated, a judge that gave the rated questions one score)."""
    x, y, v = _rated(judge_all, diffs, weights)
    if x.size < 3:
        return 1.0
    mx, my = float((v * x).sum() / v.sum()), float((v * y).sum() / v.sum())
    spread = float((v * (x - mx) ** 2).sum())
    if spread <= 0:
        return 1.0
    return min(1.0, max(0.0, float((v * (x - mx) * (y - my)).sum()) / spread))


LAMBDAS = tuple(i / 20 for i in range(21))   # the judge's weights the choice tries (with PPI++'s slope)
JACKKNIFE_MOST = 40     # rated questions up to which the whole choice is jackknifed (beyond, `tuned_spread`: the
#                         choice settles as ratings grow, and the jackknife costs a choice a rating)


class Rated:
    """The rated questions of one run's slice (judge score x, human score y, weight w) and what every weight on
    the judge needs of the judged ones (their count, mean and variance): the choice of that weight."""

    def __init__(self, judge_all: object, diffs: object, weights: object | None) -> None:
        known = _finite(judge_all)
        self.x, self.y, self.w = _rated(judge_all, diffs, weights)
        self.n_all = int(known.size)
        self.judge_mean = float(known.mean()) if known.size else math.nan
        self.judge_var = float(known.var(ddof=1)) if known.size > 1 else 0.0
        self.source: tuple[object, object, object] = (judge_all, diffs, weights)

    def without(self, i: int) -> Rated:
        import numpy as np

        out = object.__new__(Rated)
        out.x, out.y, out.w = (np.delete(a, i) for a in (self.x, self.y, self.w))
        out.n_all, out.judge_mean, out.judge_var = self.n_all, self.judge_mean, self.judge_var
        out.source = self.source
        return out

    def variances(self, lams: Sequence[float]) -> Floats:
        """The variance of the corrected mean leaning `lam` on the judge, for each of `lams` at once: the judged
        mean's share, the correction's (`rectifier`'s, its unseen errors `lam` of the scale wide and added), and
        their covariance (the rated questions are among the judged)."""
        import numpy as np

        x, y, w = self.x, self.y, self.w
        n = x.size
        lam = np.asarray(lams, dtype=float)
        if n < 2 or self.n_all == 0:
            return np.full(lam.size, np.nan)
        r = y[None, :] - lam[:, None] * x[None, :]
        total = float(w.sum())
        eff = total ** 2 / float((w ** 2).sum())
        mean = (r * w).sum(axis=1) / total
        scale = w ** 2 / total ** 2 * n / (n - 1)
        var = (scale * (r - mean[:, None]) ** 2).sum(axis=1)
        typical = np.median(r, axis=1)
        small = np.abs(r - typical[:, None]) < SPAN / 2
        wide = np.maximum(0.0, var - (scale * small * (r - typical[:, None]) ** 2).sum(axis=1))
        unseen = PSEUDO * (lam * SPAN) ** 2 / (eff + 2 * PSEUDO) ** 2
        floored = np.maximum(var, wide * eff ** 2 / (eff + 2 * PSEUDO) ** 2 + unseen) + np.minimum(var, unseen)
        cxy, vx = float(np.cov(x, y)[0, 1]), float(x.var(ddof=1))
        cov = lam * (cxy - lam * vx) / self.n_all            # cov(x, y - lam x) / N: the judged and rated means
        out: Floats = lam ** 2 * self.judge_var / self.n_all + floored + 2 * cov
        return out

    def choose(self, slope: float) -> float:
        """The weight on the judge whose variance (`variances`) is least, of LAMBDAS and PPI++'s `slope`: 0 is
        people alone, so the corrected mean never leans on a judge where that costs more than it gives."""
        import numpy as np

        lams = (*LAMBDAS, slope)
        found = self.variances(lams)
        if not np.isfinite(found).any():
            return slope
        return lams[int(np.nanargmin(found))]

    def jackknife(self, slope: float) -> float:
        """The delete-one jackknife variance of the whole rule: the weight chosen again without each rating."""
        import numpy as np

        n = self.x.size
        thetas = np.empty(n)
        for i in range(n):
            rest = self.without(i)
            lam = rest.choose(slope)
            thetas[i] = lam * self.judge_mean + float(((rest.y - lam * rest.x) * rest.w).sum() / rest.w.sum())
        return float((n - 1) / n * ((thetas - thetas.mean()) ** 2).sum())

    def spread(self, slope: float) -> float:
        """The variance the choice adds, jackknifed: the whole choice up to JACKKNIFE_MOST ratings, PPI++'s slope
        re-tuned beyond (`tuned_spread`)."""
        if self.x.size <= JACKKNIFE_MOST:
            return self.jackknife(slope)
        return tuned_spread(*self.source)


def tuned_spread(judge_all: Any, diffs: Any, weights: Any | None = None) -> float:
    """The delete-one jackknife variance of PPI++'s estimate over the rated questions, lambda re-tuned without each
    one in turn (the judged questions' mean held, as their own variance is counted apart): a lambda tuned on the
    ratings it then corrects with shrinks their spread as a fitted slope shrinks its residuals, and the plain
    variance of (human - lambda * judge) under-covered by 1-3 points at 20-40 ratings (bench/bench_ppi.py). 0
    with fewer than 4 rated questions (nothing to add to the linearised variance)."""
    import numpy as np

    x, y, v = _rated(judge_all, diffs, weights)
    n = int(x.size)
    if n < 4:
        return 0.0
    known = _finite(judge_all)
    # each question's leave-one-out sums, then the slope (`tuning`'s) and the estimate they give
    total, sx, sy = v.sum() - v, (v * x).sum() - v * x, (v * y).sum() - v * y
    sxy, sxx = (v * x * y).sum() - v * x * y, (v * x * x).sum() - v * x * x
    cov, spread = sxy - sx * sy / total, sxx - sx * sx / total
    flat = spread <= 1e-12 * np.maximum(1.0, sxx)
    lam = np.where(flat, 1.0, np.clip(cov / np.where(flat, 1.0, spread), 0.0, 1.0))
    theta = lam * float(known.mean()) + (sy - lam * sx) / total
    return float((n - 1) / n * ((theta - theta.mean()) ** 2).sum())


def ppi_mean(judge_all: Any, diffs: Any, weights: Any | None = None, *, minimum: int = MIN_RATED,
             bounds: tuple[float, float] = (0.0, 100.0), tune: bool = True) -> dict[str, Any]:
    """The PPI estimate of a mean from the judge's scores on every question (`judge_all`) and, per rated
    question, human - judge (`diffs`, aligned with `judge_all`; NaN where not rated), optionally weighted. Without
    `minimum` rated questions it gives no number, only why (`too_few`). The estimate and its CI are kept within
    `bounds` (the scale: a mean of 0-100 scores is never negative). With `tune`, PPI++: lambda * the judge's mean +
    the mean of (human - lambda * judge), lambda from `tuning` (`lambda` in the result; 1 is plain PPI)."""
    import numpy as np

    scores = np.asarray(judge_all, dtype=float)
    judge = _finite(scores)
    d = np.asarray(diffs, dtype=float)
    rated = Rated(scores, d, weights)
    slope = tuning(scores, d, weights)
    lam = rated.choose(slope) if tune else 1.0
    rectified = d + (1.0 - lam) * scores          # human - lambda * judge on the rated questions, NaN elsewhere
    rect, var_rect, eff, n, weighted = rectifier(rectified, weights, reach=lam, added=True)
    if tune and n >= 4:        # what choosing the weight on these ratings adds (the choice jackknifed whole)
        var_rect = max(var_rect, rated.spread(slope))
    out: dict[str, Any] = {"n_all": int(judge.size), "n_rated": n, "effective_n": eff,
                           "judge_mean": float(judge.mean()) if judge.size else None, "weighted": weighted,
                           "lambda": lam}
    if n < max(minimum, 2) or judge.size == 0:
        return {**out, "estimate": None, "ci": None, "correction": None,
                "why": too_few(n, max(minimum, 2)) if judge.size else "the judge scored no question here"}
    var_judge = lam ** 2 * float(judge.var(ddof=1)) / judge.size if judge.size > 1 else 0.0
    # the rated questions are among the N: the two means covary by cov(lambda judge, human - lambda judge) / N
    cov = lam * covariance(scores, rectified) / judge.size
    half = critical(eff) * _floored(math.sqrt(max(0.0, var_judge + var_rect + 2 * cov)), n)
    estimate = lam * out["judge_mean"] + rect
    return {**out, "estimate": _clip(estimate, bounds),
            "ci": [_clip(estimate - half, bounds), _clip(estimate + half, bounds)],
            "correction": estimate - out["judge_mean"], "why": None}


def describe(p: dict[str, Any]) -> str:
    """One `ppi_mean` result for people (display rounding): 'corrected 39.6 [95% CI 27.0, 52.2] from 12 rated
    question(s), judge weighed 0.50', or why there is no number. The judge's weight (PPI++'s lambda) is said when
    it is under 1: the ratings showed the judge tracks people loosely there, and the estimate leans on them."""
    if p["estimate"] is None:
        return f"corrected: {p['why']}"
    eff = f", effective {p['effective_n']:.1f} (weighted)" if p["weighted"] else ""
    lam = p.get("lambda", 1.0)
    weighed = ", judge not leaned on (people alone)" if lam < 0.005 else \
        f", judge weighed {lam:.2f}" if lam < 0.995 else ""
    return (f"corrected {p['estimate']:.1f} [95% CI {p['ci'][0]:.1f}, {p['ci'][1]:.1f}] from {p['n_rated']} rated "
            f"question(s){eff}{weighed}")


def ppi_delta(judge_a: Any, judge_b: Any, diffs_a: Any, diffs_b: Any, weights_a: Any | None = None,
              weights_b: Any | None = None, *, minimum: int = MIN_RATED, tune: bool = True) -> dict[str, Any]:
    """candidate (b) - baseline (a), each corrected by its own ratings. `judge_a`, `judge_b` are paired (the
    same questions, NaN where a run's judge did not score one): the judge part of the difference is a paired
    mean; the two corrections come from separate ratings and add their variances. With `tune`, each run's
    estimate is PPI++'s with its own lambda (`ppi_mean`)."""
    import numpy as np

    ja, jb = np.asarray(judge_a, dtype=float), np.asarray(judge_b, dtype=float)
    both = np.isfinite(ja) & np.isfinite(jb)
    da, db = np.asarray(diffs_a, dtype=float), np.asarray(diffs_b, dtype=float)
    paired_a, paired_b = np.where(both, ja, np.nan), np.where(both, jb, np.nan)
    # each run leans on its judge as far as its own variance says is worth it (`Rated.choose`)
    rated_a, rated_b = Rated(paired_a, da, weights_a), Rated(paired_b, db, weights_b)
    slope_a, slope_b = tuning(paired_a, da, weights_a), tuning(paired_b, db, weights_b)
    la = rated_a.choose(slope_a) if tune else 1.0
    lb = rated_b.choose(slope_b) if tune else 1.0
    diffs_a, diffs_b = da + (1.0 - la) * ja, db + (1.0 - lb) * jb      # human - lambda * judge, NaN where unrated
    ra, var_a, eff_a, na, _ = rectifier(diffs_a, weights_a, reach=la, added=True)
    rb, var_b, eff_b, nb, _ = rectifier(diffs_b, weights_b, reach=lb, added=True)
    if tune and na >= 4 and nb >= 4:
        var_a = max(var_a, rated_a.spread(slope_a))
        var_b = max(var_b, rated_b.spread(slope_b))
    out: dict[str, Any] = {"n": int(both.sum()), "n_rated": [na, nb], "effective_n": [eff_a, eff_b],
                           "lambda": [la, lb]}
    need = max(minimum, 2)
    if na < need or nb < need or not both.any():
        short = [f"baseline {na}", f"candidate {nb}"]
        return {**out, "delta": None, "ci": None,
                "why": f"too few ratings: {', '.join(short)} rated question(s), {need} needed in each run"}
    paired = lb * jb[both] - la * ja[both]
    var_paired = float(paired.var(ddof=1)) / paired.size if paired.size > 1 else 0.0
    baseline = _clip(la * float(ja[both].mean()) + ra, (0.0, 100.0))     # on the 0-100 scale, as the dashboard's
    candidate = _clip(lb * float(jb[both].mean()) + rb, (0.0, 100.0))
    delta = candidate - baseline
    # delta = mean(lb judge b - la judge a) + correction b - correction a: each correction's rated questions are
    # among the paired ones, so it covaries with the paired mean by cov(paired, human - lambda judge) / N (as in
    # ppi_mean); the two runs' ratings are separate draws and do not covary
    full = lb * jb - la * ja
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
             bias: float = 0.8, noise: float = 0.7, tune: bool = True) -> dict[str, Any]:
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
        result = ppi_mean((judge - 1) * to100, diffs, tune=tune)
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
