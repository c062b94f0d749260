"""How sure an audit can be: the interval of an agreement statistic, the interval that stays valid however often
the audit is looked at, and how many more ratings would settle a verdict (pure functions on label indices).

Why these methods (each measured by simulation: bench/bench_agreement_rules.py, tests/core/test_evidence.py):
- **Interval.** The percentile bootstrap of kappa covered the truth 73-93% of the time at n = 30 and gave [1, 1]
  whenever every sampled pair agreed. The interval here is Bayesian: the population's confusion matrix is drawn
  from its Dirichlet posterior — the observed (weighted) counts plus a weak prior of two pseudo-ratings shaped as
  the observed margins would be under independence (Basu, Banerjee & Sen 2000 do kappa this way) — and the
  statistic is computed on each draw. It covers 92-97% at n = 30 and 100 for kappa 0.6-0.9, and is never a point.
- **Weights.** Ratings from a sample drawn with unequal probabilities weigh 1/probability (core.review.weights).
  The weighted counts are scaled to Kish's effective sample size before the posterior (less the strata's degrees
  of freedom for a stratified sample: `stratified_n`), so an unequal design buys the width it costs; the audit's
  minimum n applies to that effective n.
- **Repeated looks.** Rating 30, looking, rating 10 more and looking again until the 95% CI clears the threshold
  decides wrongly about five times as often as one look. A verdict therefore uses an *anytime-valid* interval:
  the time-uniform normal-mixture boundary of Robbins, in the asymptotic form of Waudby-Smith et al. (2024,
  "Time-uniform central limit theory and asymptotic confidence sequences"): the estimate plus or minus about 3.1
  standard errors (the posterior's spread), tuned to be tightest near `2 * min_n` ratings, where a single look's
  95% interval is 1.96. The 95% interval is still shown for reading.
- **Ratings needed.** Sized for 80% power against the anytime interval, not for a coin flip.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any

from rageval_desktop.core.base.stats import normal_quantile, t_quantile
from rageval_desktop.core.review.agreement_stats import confusion, from_confusion

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import ArrayLike, NDArray

PRIOR_MASS = 2.0          # pseudo-ratings in the prior, shaped as independence of the observed margins
# a planned audit (a sample drawn since 0.4 records its plan) spends α in two parts: the anytime interval at
# ALPHA_INTERIM, valid however often anyone looks; and ALPHA_FINAL over the plan's own looks — the sample's first
# quarter, half, three quarters and all of it, each on exactly those targets (every prefix of the desk's order is a
# valid sample), with Lan–DeMets O'Brien–Fleming-type spending (`look_boundaries`). Together they are the α of an
# unplanned audit (a union bound: valid whatever is looked at when). The plan's last look needs about 2.1 standard
# errors where the anytime interval needs 3.1-3.5, and a clear judge is decided at half or three quarters.
ALPHA_INTERIM = 0.01
ALPHA_FINAL = 0.04
LOOKS = 4                 # a plan's looks: at a quarter, half, three quarters and all of its targets
DRAWS = 2000              # posterior draws: the 95% interval and the spread the anytime interval uses
ALPHA = 0.05
POWER = 0.8
MAX_ESTIMATE = 10_000


def effective_n(weights: Any | None, n: int) -> float:
    """Kish's effective sample size of `weights` (n when unweighted)."""
    import numpy as np

    if weights is None:
        return float(n)
    w = np.asarray(weights, dtype=float)
    return float(w.sum() ** 2 / (w ** 2).sum()) if w.size else 0.0


def stratified_n(n_eff: float, n: int, strata: int) -> float:
    """The effective n of a stratified sample, less the degrees of freedom its strata's means take (n - H of n, as a
    stratified variance estimate has): without it, intervals from samples spread over many small strata covered
    91-94%; with it, 93-97% (bench/bench_agreement_rules.py)."""
    if strata <= 1 or n <= 0:
        return n_eff
    return max(1.0, n_eff * max(1, n - strata) / n)


def posterior(name: str, human: Any, judge: Any, k: int, weights: Any | None = None, *, draws: int = DRAWS,
              seed: int = 11, n_eff: float | None = None) -> Any:
    """Draws of the statistic `name` over the Dirichlet posterior of the population's confusion matrix (NaN draws
    left out: a draw where one side uses a single label has no kappa). `n_eff` overrides the information the
    counts carry (a target rated by two reviewers is two pairs but one target)."""
    import numpy as np

    human = np.asarray(human, dtype=np.int64)
    n = len(human)
    if n == 0:
        return np.array([])
    counts = confusion(human, judge, k, weights)                     # sums to n
    counts = counts * ((effective_n(weights, n) if n_eff is None else n_eff) / n)
    margin = np.outer(counts.sum(axis=1) + 0.5, counts.sum(axis=0) + 0.5)
    prior = PRIOR_MASS * margin / margin.sum()
    rng = np.random.default_rng(seed)
    tables = rng.dirichlet((counts + prior).ravel(), draws).reshape(draws, k, k) * counts.sum()
    values = np.asarray(from_confusion(name, tables), dtype=float)
    return values[np.isfinite(values)]


def jackknife_se(name: str, human: Any, judge: Any, k: int, weights: Any) -> float:
    """The delete-one jackknife standard error of the weighted statistic (every leave-one-out confusion matrix at
    once: the statistics are invariant to the matrix's scale, so each is the full weighted matrix less one pair)."""
    import numpy as np

    h = np.asarray(human, dtype=np.int64)
    j = np.asarray(judge, dtype=np.int64)
    w = np.asarray(weights, dtype=float)
    n = h.size
    if n < 3:
        return math.nan
    full = confusion(h, j, k, w) * (w.sum() / n)                 # the unnormalised weighted counts
    stack = np.repeat(full[None, :, :], n, axis=0)
    stack[np.arange(n), h, j] -= w
    values = np.asarray(from_confusion(name, stack), dtype=float)
    values = values[np.isfinite(values)]
    if values.size < n // 2:
        return math.nan
    return float(math.sqrt((values.size - 1) / values.size * ((values - values.mean()) ** 2).sum()))


def t_allowance(n: int, level: float = 0.95) -> float:
    """(z / t)^2 at `level`, Student's t on n - 1 degrees of freedom: a posterior drawn on this share of its effective
    n is as much wider as t's interval is than the normal's (an error estimated from n values; 1 for large n)."""
    if n < 2:
        return 1.0
    return (normal_quantile(0.5 + level / 2) / t_quantile(0.5 + level / 2, n - 1)) ** 2


def shown_interval(name: str, human: ArrayLike, judge: ArrayLike, k: int, weights: ArrayLike | None, n_eff: float,
                   n: int, *, draws: int = DRAWS,
                   drawn: NDArray[np.float64] | None = None) -> tuple[float | None, float | None]:
    """The 95% interval shown for reading: the posterior's central 95% — for a weighted sample drawn on (z / t)^2 of
    its effective n, t on the effective n's degrees of freedom (`t_allowance`: its error is estimated from targets
    that weigh like n_eff of them; 1-5, uncertain, 30 ratings: without it the interval covered 93.4%, and on the
    count's degrees of freedom a partly rated sample of 40 covered 94.3% at κ 0.55). `drawn`: the posterior already
    drawn on `n_eff`, used as it is when unweighted."""
    if weights is None:
        found = drawn if drawn is not None else posterior(name, human, judge, k, None, draws=draws, n_eff=n_eff)
    else:
        found = posterior(name, human, judge, k, weights, draws=draws, n_eff=n_eff * t_allowance(max(2, int(n_eff))))
    return interval(found, minimum=draws // 4)


def interval(values: Any, level: float = 0.95, *, minimum: int = DRAWS // 4) -> tuple[float | None, float | None]:
    """The central `level` interval of posterior draws; None with fewer than `minimum` defined draws (most were
    undefined)."""
    import numpy as np

    v = np.asarray(values, dtype=float)
    if v.size < minimum:
        return None, None
    tail = 100 * (1 - level) / 2
    return float(np.percentile(v, tail)), float(np.percentile(v, 100 - tail))


def boundary(n: float, *, alpha: float = ALPHA, tuned_for: float = 60.0) -> float:
    """The anytime-valid interval's half-width in standard errors at n ratings (Robbins' normal mixture, two-sided
    level 1 - alpha, its mixing scale chosen to be tightest at `tuned_for` ratings)."""
    if n < 1:
        return math.inf
    rho2 = (-2 * math.log(alpha) + math.log(-2 * math.log(alpha) + 1)) / tuned_for
    width = 2 * (n * rho2 + 1) / (n * n * rho2) * math.log(math.sqrt(n * rho2 + 1) / alpha)
    return math.sqrt(n) * math.sqrt(width)


def anytime_interval(value: float | None, se: float, n_eff: float, *, min_n: int, alpha: float = ALPHA,
                     bounds: tuple[float, float] = (-1.0, 1.0)) -> tuple[float | None, float | None]:
    """The anytime-valid interval at n_eff ratings: the estimate plus or minus the boundary times its standard
    error (the posterior's spread), the boundary tuned to be tightest at 2 * min_n ratings; within `bounds`."""
    if value is None or not (math.isfinite(se) and n_eff >= 1):
        return None, None
    half = boundary(n_eff, alpha=alpha, tuned_for=2.0 * min_n) * se
    return max(bounds[0], value - half), min(bounds[1], value + half)


def proportion_sequence(successes: float, n: float, *, alpha: float = ALPHA) -> tuple[float, float]:
    """A confidence sequence for a proportion (a reviewer's accuracy on gold items): every p whose likelihood ratio
    against Robbins' uniform beta-binomial mixture stays below 1/alpha. By Ville's inequality it holds at every n
    at once with probability 1 - alpha (Robbins 1970; Howard et al. 2021, "Time-uniform, nonparametric,
    nonasymptotic confidence sequences", the beta-binomial boundary), so a Team page looked at after every check
    keeps its error rate. (0, 1) with no observations."""
    from scipy.optimize import brentq
    from scipy.special import betaln

    if n <= 0:
        return 0.0, 1.0
    s, f = float(successes), float(n) - float(successes)     # effective (weighted) counts need not be whole
    limit = math.log(1 / alpha)
    mixture = float(betaln(1 + s, 1 + f))          # log of the mixture's marginal likelihood (Beta(1, 1))

    def excess(p: float) -> float:
        return mixture - (s * math.log(p) if s else 0.0) - (f * math.log1p(-p) if f else 0.0) - limit

    centre = s / n
    low = 0.0 if s == 0 or excess(1e-12) <= 0 else float(brentq(excess, 1e-12, centre))
    high = 1.0 if f == 0 or excess(1 - 1e-12) <= 0 else float(brentq(excess, centre, 1 - 1e-12))
    return low, high


def above_ratio(successes: float, n: float, floor: float) -> float:
    """The log of the mixture likelihood ratio of proportions above `floor` (uniform on [floor, 1]) against p =
    floor, after `successes` of `n` (continuous in both, for effective counts): `beyond_floor`'s "above" side."""
    from scipy.special import betainc, betaln

    if n <= 0 or not 0 < floor < 1:
        return 0.0
    s, f = float(successes), float(n) - float(successes)
    at_floor = s * math.log(floor) + f * math.log1p(-floor)
    below = float(betainc(s + 1, f + 1, floor))
    if below >= 1:
        return -math.inf
    return float(betaln(s + 1, f + 1)) + math.log1p(-below) - math.log1p(-floor) - at_floor


def beyond_floor(successes: int, n: int, floor: float, *, alpha: float = ALPHA) -> str | None:
    """A one-sided sequential test of a proportion against `floor`, valid however often it is looked at: "below" when
    the mixture likelihood ratio of alternatives under the floor (uniform on [0, floor]) against p = floor reaches
    1/alpha, "above" likewise for alternatives over it, else None. Under any p at or above the floor the first
    ratio is a nonnegative supermartingale (Robbins' mixture; Ville's inequality bounds its crossing by alpha), and
    it crosses sooner than the two-sided sequence's bound, since it spends nothing on the other side."""
    from scipy.special import betainc, betaln

    if n <= 0 or not 0 < floor < 1:
        return None
    s, f = int(successes), int(n) - int(successes)
    at_floor = s * math.log(floor) + f * math.log1p(-floor)
    whole = float(betaln(s + 1, f + 1))
    below = float(betainc(s + 1, f + 1, floor))
    limit = math.log(1 / alpha)
    if below > 0 and whole + math.log(below) - math.log(floor) - at_floor >= limit:
        return "below"
    if below < 1 and whole + math.log1p(-below) - math.log1p(-floor) - at_floor >= limit:
        return "above"
    return None


def final_interval(value: float | None, se: float, *, alpha: float = ALPHA_FINAL, z: float | None = None,
                   bounds: tuple[float, float] = (-1.0, 1.0)) -> tuple[float | None, float | None]:
    """A planned look: the estimate plus or minus `z` standard errors (its group-sequential boundary), or
    z(1 - alpha/2) for a single look; within `bounds`."""
    if value is None or not math.isfinite(se):
        return None, None
    half = (normal_quantile(1 - alpha / 2) if z is None else z) * se
    return max(bounds[0], value - half), min(bounds[1], value + half)


def look_sizes(size: int, looks: int = LOOKS) -> list[int]:
    """The planned looks of a sample of `size` targets: at 1/looks, 2/looks, … of it (fewer when it is small)."""
    return sorted({max(1, math.ceil(k * size / looks)) for k in range(1, looks + 1)})


def look_boundaries(fractions: tuple[float, ...], alpha: float = ALPHA_FINAL) -> list[float]:
    """Group-sequential boundaries, in standard errors, for looks at these information fractions (the last is 1):
    Lan and DeMets' O'Brien–Fleming-type spending, α/2 per side (keep and retire are each one-sided), each look's
    boundary set so that crossing it first spends what the function allots, under the canonical joint normal
    (corr √(tᵢ/tⱼ)). Matches gsDesign's sfLDOF: 4.333, 2.963, 2.359, 2.014 at one-sided 0.025 and equal quarters."""
    key = tuple(round(min(1.0, max(1e-3, f)), 4) for f in fractions)
    return list(_boundaries(key, round(alpha, 6)))


@functools.lru_cache(maxsize=64)
def _boundaries(fractions: tuple[float, ...], alpha: float) -> tuple[float, ...]:
    import numpy as np
    from scipy.optimize import brentq
    from scipy.stats import multivariate_normal, norm

    side = alpha / 2
    z = float(norm.ppf(1 - side / 2))

    def spent(t: float) -> float:
        return float(2 - 2 * norm.cdf(z / math.sqrt(t)))

    def stays_under(bounds: list[float], k: int) -> float:
        if k == 1:
            return float(norm.cdf(bounds[0]))
        t = np.asarray(fractions[:k])
        cov = np.sqrt(np.minimum.outer(t, t) / np.maximum.outer(t, t))
        return float(multivariate_normal(np.zeros(k), cov, seed=0).cdf(np.asarray(bounds)))

    out: list[float] = []
    before, used = 1.0, 0.0
    for k, t in enumerate(fractions, start=1):
        allot = spent(t) - used
        if allot <= 1e-12:
            out.append(math.inf)
            continue
        c = brentq(lambda c, b=before, k=k, a=allot: b - stays_under([*out, c], k) - a, 0.0, 40.0, xtol=1e-7)
        out.append(float(c))
        before, used = stays_under(out, k), spent(t)
    return tuple(out)


def ratings_needed(value: float, se: float, n_eff: float, threshold: float, *, min_n: int,
                   alpha: float = ALPHA, power: float = POWER) -> int:
    """More ratings that would settle the verdict with `power` if the estimate stayed where it is: the smallest n'
    at which the distance to the threshold is (anytime boundary + z_power) standard errors, the error shrinking
    as 1/sqrt(n). At least what `min_n` still asks; MAX_ESTIMATE when the estimate sits on the threshold."""
    distance = abs(value - threshold)
    short = max(0, math.ceil(min_n - n_eff))
    if not (math.isfinite(se) and se > 0) or n_eff <= 0:
        return max(short, 1)
    if distance <= 1e-12:
        return MAX_ESTIMATE
    sigma = se * math.sqrt(n_eff)
    z = normal_quantile(power)
    tuned = 2.0 * min_n

    def enough(m: float) -> bool:
        return (boundary(m, alpha=alpha, tuned_for=tuned) + z) * sigma / math.sqrt(m) <= distance

    high = max(n_eff, 2.0)
    while not enough(high):
        high *= 2
        if high > 4 * (n_eff + MAX_ESTIMATE):
            return MAX_ESTIMATE
    low = max(n_eff, 1.0)
    while high - low > 0.5:
        mid = (low + high) / 2
        low, high = (low, mid) if enough(mid) else (mid, high)
    return max(short, min(MAX_ESTIMATE, math.ceil(high - n_eff)), 0)


def bias(gaps: Any, weights: Any | None, n_eff: float, *, margin: float, level: float = 0.95) -> dict[str, Any]:
    """The judge's mean bias against the humans (judge - human, in points of the 0-100 scale), with Student's t
    interval on the effective n (its degrees of freedom rounded down to a whole number — a weighted sample's n_eff is
    fractional, and scipy.special's t for a fractional df cost every audit 0.2 s of import; the interval is as wide
    or a little wider, never narrower), Bland and Altman's 95% limits of agreement (mean +/- 1.96 sd), and whether the
    interval lies wholly outside +/- `margin` (`flagged`): a judge can agree well by kappa and still push every
    mean it feeds up or down by points."""
    import numpy as np

    d = np.asarray(gaps, dtype=float)
    w = np.ones_like(d) if weights is None else np.asarray(weights, dtype=float)
    keep = np.isfinite(d) & (w > 0)
    d, w = d[keep], w[keep]
    if d.size == 0:
        return {"mean": None, "ci": [None, None], "limits": [None, None], "margin": margin, "flagged": False}
    mean = float((w * d).sum() / w.sum())
    sd = float(np.sqrt((w * (d - mean) ** 2).sum() / w.sum() * d.size / max(1, d.size - 1)))
    if n_eff < 2:
        return {"mean": mean, "ci": [None, None], "limits": [None, None], "margin": margin, "flagged": False}
    half = t_quantile(0.5 + level / 2, math.floor(n_eff - 1)) * sd / math.sqrt(n_eff)
    low, high = mean - half, mean + half
    return {"mean": mean, "ci": [low, high], "limits": [mean - 1.96 * sd, mean + 1.96 * sd], "margin": margin,
            "flagged": bool(low > margin or high < -margin)}


def bias_text(found: dict[str, Any]) -> str | None:
    """One bias result in words, the same in the CLI, the app and `describe` (display rounding): 'mean bias +15.0
    points [95% CI +11.5, +18.5], limits of agreement [-26.7, +56.8]', with ', beyond ±5 points: the means it feeds
    are off' when flagged; None without an interval. What to do about it is each caller's to say."""
    if found.get("mean") is None or found["ci"][0] is None:
        return None
    text = (f"mean bias {found['mean']:+.1f} points [95% CI {found['ci'][0]:+.1f}, {found['ci'][1]:+.1f}], limits "
            f"of agreement [{found['limits'][0]:+.1f}, {found['limits'][1]:+.1f}]")
    return text + (f", beyond ±{found['margin']:g} points: the means it feeds are off" if found["flagged"] else "")
