"""Means and paired differences with 95% intervals, and the one-sided test the gate makes per cell.

Why these intervals (each was measured by simulation: tests/core/test_gate_rule.py, bench/bench_gate.py):
- A share of questions (hit@k: every value 0 or 100) gets Wilson's score interval: 12 of 12 hits is
  [75.8, 100], never the [100, 100] a bootstrap or a t interval gives.
- Any other mean (MRR, nDCG, judge scores) and every mean of paired differences gets Student's t interval. The
  percentile bootstrap used before undercovered on skewed metrics (MRR, nDCG: 91.7-93.1% for a 95% interval).
- A sample whose values are all equal has no spread to estimate; its interval is not a point. A mean on a bounded
  scale is at most as variable as a share with the same mean, so it gets that share's Wilson interval; a mean of
  paired differences that are all equal gets the half-width a share of changed questions would have, when none
  of n was seen to change (z^2 / (n + z^2) of the scale, the score interval at 0 of n).
Values are full precision; displays round.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from numpy import ndarray

from rageval_desktop.core.base.paths import resources_dir

SCALE = (0.0, 100.0)
CONFIDENCE = 0.95


def _finite(values: Any) -> Any:
    import numpy as np

    data = np.asarray(values, dtype=float)
    return data[np.isfinite(data)]


TABLE_Q = 0.975          # the quantile every default 95% interval asks for
TABLE_DF = 50_000        # Student's t at TABLE_Q for 1..TABLE_DF degrees of freedom, in resources/stats/t975.npy
LARGE_DF = 2_000_000     # ... and beyond it up to LARGE_DF, as an expansion and its ulps to scipy's (t975_large.npy)


def quantile_table() -> Any:
    """What resources/stats/t975.npy holds, computed by scipy: at 0 the normal quantile at TABLE_Q (`ndtri`), at df
    Student's t quantile at TABLE_Q on df degrees of freedom (`stdtrit`), df = 1..TABLE_DF. `rageval metrics` on a
    project of 10k rows took 0.09 s of its 0.6 s to import scipy.special for these numbers (its array-API layer loads
    numpy.f2py and numpy.testing); the table gives the same doubles (tests/core/test_metrics.py holds them equal), and
    any other quantile, level or a larger df is scipy's own. Written by `python -m rageval_desktop.core.base.stats`."""
    import numpy as np
    from scipy.special import ndtri, stdtrit

    return np.concatenate([[ndtri(TABLE_Q)], stdtrit(np.arange(1, TABLE_DF + 1, dtype=float), TABLE_Q)])


@lru_cache(maxsize=1)
def _table() -> Any:
    import numpy as np

    return np.load(resources_dir() / "stats" / "t975.npy", mmap_mode="r")


def t_expansion(df: ndarray, z: float) -> ndarray:
    """Student's t quantile on many degrees of freedom from the normal quantile `z` (Cornish-Fisher, four terms: the
    first left out is below 1e-20 past TABLE_DF); numpy float64 arithmetic, the same on every machine. Within 5 ulps
    of scipy's `stdtrit` past TABLE_DF; `large_corrections` holds the difference."""
    import numpy as np

    v = 1.0 / np.asarray(df, dtype=np.float64)
    g1 = (z ** 3 + z) / 4
    g2 = (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96
    g3 = (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384
    g4 = (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z) / 92160
    return z + v * (g1 + v * (g2 + v * (g3 + v * g4)))


def large_corrections() -> ndarray:
    """What resources/stats/t975_large.npy holds, computed by scipy: for df = TABLE_DF + 1 .. LARGE_DF, scipy's
    `stdtrit` at TABLE_Q minus `t_expansion`, in units in the last place (int8). A million-row run's intervals
    ask for such dfs, and importing scipy.special for them was half a second of `rageval metrics`."""
    import numpy as np
    from scipy.special import ndtri, stdtrit

    df = np.arange(TABLE_DF + 1, LARGE_DF + 1, dtype=np.float64)
    exact = stdtrit(df, TABLE_Q)
    ulps = exact.view(np.int64) - t_expansion(df, float(ndtri(TABLE_Q))).view(np.int64)
    if np.abs(ulps).max() > 127:
        raise RuntimeError("the expansion is too far from scipy's numbers to store its corrections")
    return np.asarray(ulps, dtype=np.int8)


@lru_cache(maxsize=1)
def large_table() -> ndarray:
    import numpy as np

    return np.asarray(np.load(resources_dir() / "stats" / "t975_large.npy", mmap_mode="r"))


# scipy.special's ndtri at the levels the default paths ask for besides TABLE_Q (0.8: an audit's power to settle),
# its doubles written out (tests/core/test_metrics.py holds them to scipy's): `rageval agreement` imported
# scipy.special (0.17 s) for the one number 0.84
COMMON_Z = {0.8: 0.8416212335729143, 0.9: 1.2815515655446004, 0.95: 1.6448536269514722, 0.99: 2.3263478740408408,
            0.995: 2.5758293035489004}


@lru_cache(maxsize=256)
def normal_quantile(q: float) -> float:
    """The standard normal quantile (scipy.special's `ndtri`, from the table at TABLE_Q and COMMON_Z; not scipy.stats,
    whose import costs half a second on every command that shows an interval)."""
    if q == TABLE_Q:
        return float(_table()[0])
    if q in COMMON_Z:
        return COMMON_Z[q]
    from scipy.special import ndtri

    return float(ndtri(q))


def _z(confidence: float) -> float:
    return normal_quantile(0.5 + confidence / 2)


@lru_cache(maxsize=4096)
def t_quantile(q: float, df: float) -> float:
    """Student's t quantile (scipy.special's `stdtrit`, what scipy.stats.t.ppf computes; from the table at TABLE_Q
    and a whole df up to TABLE_DF), cached: a gate asks for the same few hundred of them over and over."""
    df = max(1.0, df)
    if q == TABLE_Q and df <= TABLE_DF and df == int(df):     # (an infinite or NaN df fails the first test: scipy)
        return float(_table()[int(df)])
    if q == TABLE_Q and df <= LARGE_DF and df == int(df):
        import numpy as np

        value = t_expansion(np.array([df]), float(_table()[0]))
        return float((value.view(np.int64) + int(large_table()[int(df) - TABLE_DF - 1])).view(np.float64)[0])
    from scipy.special import stdtrit

    return float(stdtrit(df, q))


def wilson(successes: float, n: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Wilson's score interval of a proportion, on 0..1: the numbers of statsmodels' `proportion_confint(method=
    "wilson")` (tests/core/test_metrics.py holds them equal), in closed form — importing statsmodels (and scipy.stats
    with it) cost `rageval metrics` half a second."""
    z = _z(confidence)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def _t(confidence: float, n: int) -> float:
    return t_quantile(0.5 + confidence / 2, max(1, n - 1))


def mean_ci(values: Any, *, scale: tuple[float, float] = SCALE,
            confidence: float = CONFIDENCE) -> tuple[float | None, float | None, float | None]:
    """(mean, low, high) of the finite values on `scale`; (None, None, None) when there are none."""
    data = _finite(values)
    n = int(data.size)
    if n == 0:
        return None, None, None
    lo, hi = scale
    mean = float(data.mean())
    span = hi - lo
    binary = bool(((data == lo) | (data == hi)).all())
    sd = float(data.std(ddof=1)) if n > 1 else 0.0
    if binary or sd <= 1e-9 * span:          # equal values (up to rounding): no spread to estimate
        share = min(1.0, max(0.0, (mean - lo) / span))
        low, high = wilson(share * n, n, confidence)
        return mean, lo + low * span, lo + high * span
    half = _t(confidence, n) * sd / math.sqrt(n)
    return mean, max(lo, mean - half), min(hi, mean + half)


def paired_se(diffs: Any, *, bound: float = SCALE[1]) -> tuple[float, float, int]:
    """(mean, standard error, n) of paired differences on a scale of ±`bound`. When every difference is the same,
    the error is the one a share of changed questions would have when none of n was seen to change."""
    data = _finite(diffs)
    n = int(data.size)
    if n == 0:
        return math.nan, math.nan, 0
    mean = float(data.mean())
    sd = float(data.std(ddof=1)) if n > 1 else 0.0
    if sd > 1e-9 * bound:                    # equal differences up to rounding have no spread to estimate
        return mean, sd / math.sqrt(n), n
    return mean, unseen_change_se(n, bound), n


def unseen_change_se(n: int, bound: float = SCALE[1]) -> float:
    """The standard error of a mean whose n values showed no spread: that of a share of changed values when none
    of n was seen to change (Wilson's half-width at 0 of n, bound * z^2 / (n + z^2), divided by z)."""
    z = normal_quantile(0.5 + CONFIDENCE / 2)
    return bound * z / (max(1, n) + z * z)


def diff_ci(diffs: Any, *, confidence: float = CONFIDENCE,
            bound: float = SCALE[1]) -> tuple[float | None, float | None, float | None]:
    """(mean, low, high) of paired differences: Student's t interval (see the module's note for equal values)."""
    mean, se, n = paired_se(diffs, bound=bound)
    if n == 0:
        return None, None, None
    half = _t(confidence, n) * se
    return mean, max(-2 * bound, mean - half), min(2 * bound, mean + half)


def drop_p_value(mean: float, se: float, df: float, limit: float) -> float:
    """One-sided p-value of "the drop is at most `limit` points" (H0: mean >= -limit) against "it is larger", from
    Student's t on `df` degrees of freedom (n - 1). Small when the evidence says the drop exceeds the limit."""
    from scipy.special import stdtr

    if not (math.isfinite(se) and se > 0 and math.isfinite(mean)):
        return 1.0
    return float(stdtr(max(1.0, df), (mean + limit) / se))


def lower_bound(mean: float, se: float, df: float, alpha: float) -> float:
    """The one-sided (1 - alpha) lower confidence bound of a mean difference."""
    return mean - t_quantile(1 - alpha, df) * se


def detectable_drop(se: float, df: float, limit: float, level: float, power: float = 0.8) -> float:
    """The smallest drop a one-sided test at `level` detects with `power` (its minimum detectable effect): the
    limit plus (t_{1-level} + t_{power}) standard errors."""
    return limit + (t_quantile(1 - level, df) + t_quantile(power, df)) * se


def detectable_drop_bounded(se: float, n: int, df: float, limit: float, level: float, power: float = 0.8,
                            bound: float = SCALE[1]) -> float:
    """The smallest drop D a one-sided test at `level` detects with `power` when the drop itself adds to the
    spread of the differences: a drop of D points on a 0-`bound` scale adds at most D(bound - D) to their variance
    (the Bhatia-Davis bound: a share of questions falling by up to `bound` each), so D solves
    D = limit + (t_{1-level} + t_{power}) * sqrt(se^2 + D(bound - D) / n). Without that term a binary metric's
    power at D was overstated (a configured hit@5 cell caught a drop of its tolerance in 42% of simulated pull
    requests, not 80%: bench/bench_gate.py)."""
    c = t_quantile(1 - level, df) + t_quantile(power, df)
    if not (math.isfinite(se) and n >= 1):
        return math.nan
    k = c * c / n
    a, b, q = 1 + k, -(2 * limit + k * bound), limit * limit - c * c * se * se
    disc = b * b - 4 * a * q
    return (-b + math.sqrt(max(disc, 0.0))) / (2 * a)


def holm(p_values: list[float], alpha: float) -> tuple[list[bool], list[float]]:
    """Holm's step-down adjustment: which hypotheses are rejected with the family-wise error rate at most
    `alpha`, whatever their dependence, and the adjusted p-values. The same numbers as statsmodels'
    `multipletests(method="holm")` (tests/core/test_gate_rule.py), which runs a full garbage collection on every
    call (40 ms: a simulation of thousands of gates spent most of its time there)."""
    import numpy as np

    p = np.asarray(p_values, dtype=float)
    m = p.size
    if m == 0:
        return [], []
    order = np.argsort(p, kind="mergesort")
    stepped = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    adjusted = np.empty(m)
    adjusted[order] = stepped
    return [bool(a <= alpha) for a in adjusted], [float(a) for a in adjusted]


@lru_cache(maxsize=8)
def _normals(draws: int, m: int, seed: int) -> Any:
    """Standard normal draws, the same for every call with the same arguments (the adjustment is reproducible and a
    gate re-evaluated with another limit costs a matrix product, not new draws)."""
    import numpy as np

    values = np.random.default_rng(seed).standard_normal((draws, m))
    values.flags.writeable = False
    return values


def max_t(p_values: list[float], corr: Any, alpha: float, *, draws: int = 20_000,
          seed: int = 2027) -> tuple[list[bool], list[float], float]:
    """The step-down max-T adjustment (Westfall and Young 1993; the parametric form of Hothorn, Bretz and Westfall
    2008): each one-sided p-value becomes a normal score, and a hypothesis's adjusted p-value is the chance that the
    largest score among it and the hypotheses less significant than it reaches its own, under a multivariate
    normal with the tests' correlation (`corr`), by Monte Carlo with a fixed seed. Correlated tests — four
    retrieval metrics of one slice, a slice and 'all' — cost less of alpha than Holm charges, and the family-wise
    error stays at most `alpha`. Returns (rejected, adjusted p-values, the single-step critical score)."""
    import numpy as np
    from scipy.special import ndtri

    p = np.clip(np.asarray(p_values, dtype=float), 1e-300, 1.0)
    m = p.size
    if m == 0:
        return [], [], math.inf
    r = np.asarray(corr, dtype=float)
    values, vectors = np.linalg.eigh((r + r.T) / 2)
    root = vectors * np.sqrt(np.clip(values, 0.0, None))          # the nearest positive semi-definite square root
    scale = np.sqrt(np.maximum((root ** 2).sum(axis=1), 1e-12))
    z = _normals(draws, m, seed) @ (root / scale[:, None]).T
    scores = -ndtri(p)
    order = np.argsort(-scores, kind="mergesort")
    tail_max = np.maximum.accumulate(z[:, order][:, ::-1], axis=1)[:, ::-1]
    stepped = np.maximum.accumulate((tail_max >= scores[order]).mean(axis=0))
    adjusted = np.empty(m)
    adjusted[order] = stepped
    critical = float(np.quantile(z.max(axis=1), 1 - alpha))
    return [bool(a <= alpha) for a in adjusted], [float(a) for a in adjusted], critical


def percentile(values: Any, q: float) -> float | None:
    import numpy as np

    data = _finite(values)
    return float(np.percentile(data, q)) if data.size else None


if __name__ == "__main__":      # writes the table (resources/stats/t975.npy) from scipy
    import numpy as np

    target = resources_dir() / "stats" / "t975.npy"
    target.parent.mkdir(exist_ok=True)
    np.save(target, quantile_table())
    np.save(target.with_name("t975_large.npy"), large_corrections())
    print(f"wrote {target} and {target.with_name('t975_large.npy')}")
