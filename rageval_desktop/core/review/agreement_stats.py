"""Agreement statistics of a judge against humans, all computed from confusion matrices (pure functions).

Scores on a k-point scale are label indices 0..k-1, so every statistic the audit reports is a function of the
k x k confusion matrix (rows: human, columns: judge): exact and within-one agreement, Cohen's kappa, quadratic
weighted kappa, Spearman's rho (Pearson on mid-ranks, which the marginals give) and Krippendorff's ordinal alpha
(its coincidence matrix is C + C^T for two coders). Working on a stack of matrices makes a bootstrap of 1,000
resamples one numpy call instead of 1,000 calls into scikit-learn; the values equal scikit-learn's, scipy's and
the `krippendorff` package's (tests/core/test_agreement_stats.py checks them to 1e-12). `alpha` is Krippendorff's
alpha for any number of coders with missing values (reviewers with each other, a judge asked again), the app's own:
the `krippendorff` package is GPL-3.0 and stays a test oracle.

A statistic that is undefined on a resample (every score the same label) is NaN, as in those libraries.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

STATS = ("exact", "within_one", "cohen_kappa", "quadratic_kappa", "spearman", "krippendorff_alpha")
LABELS = {"exact": "exact agreement", "within_one": "within one point", "cohen_kappa": "Cohen's κ",
          "quadratic_kappa": "quadratic-weighted κ", "spearman": "Spearman's ρ",
          "krippendorff_alpha": "Krippendorff's α"}


def label(statistic: str | None) -> str:
    """A statistic's name for people (screens and reports); `--json` keeps the identifier."""
    return LABELS.get(statistic or "", statistic or "—")


def confusion(human: Any, judge: Any, k: int, weights: Any | None = None) -> Any:
    """Confusion matrices of label indices: arrays (..., n) -> counts (..., k, k), as float. With `weights`
    (inverse inclusion probabilities, same shape), each pair counts its weight, scaled so that a matrix still
    sums to n: every statistic then reads it as it reads counts."""
    import numpy as np

    human = np.asarray(human, dtype=np.int64)
    judge = np.asarray(judge, dtype=np.int64)
    lead = human.shape[:-1]
    batch = int(np.prod(lead)) if lead else 1
    codes = human.reshape(batch, -1) * k + judge.reshape(batch, -1)
    codes = codes + (np.arange(batch) * k * k)[:, None]
    w = None
    if weights is not None:
        w = np.asarray(weights, dtype=float).reshape(batch, -1)
        w = w * (w.shape[-1] / w.sum(axis=-1, keepdims=True))
        w = w.ravel()
    counts = np.bincount(codes.ravel(), weights=w, minlength=batch * k * k).astype(float)
    return counts.reshape(*lead, k, k)


def add_last(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """x.sum(axis=-1), to the bit: under 8 values by adding them in order, which is how numpy's sum adds fewer than 8
    numbers (numpy's reduction over a short last axis took 0.43 ms for a posterior's 2,000 matrices' margins, these
    adds 0.12)."""
    if x.shape[-1] >= 8 or x.ndim < 2:
        total: NDArray[np.float64] = x.sum(axis=-1)
        return total
    out = x[..., 0].copy()
    for m in range(1, x.shape[-1]):
        out += x[..., m]
    return out


def margins(c: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The row and column sums of each matrix in a stack (..., k, k), as numpy's sums give them (`add_last`)."""
    import numpy as np

    return add_last(c), add_last(np.swapaxes(c, -1, -2))


def from_confusion(name: str, c: Any) -> Any:
    """One statistic of each confusion matrix in a stack (..., k, k); NaN where undefined."""
    import numpy as np

    c = np.asarray(c, dtype=float)
    k = c.shape[-1]
    n = c.sum(axis=(-2, -1))
    i, j = np.indices((k, k))
    with np.errstate(divide="ignore", invalid="ignore"):
        if name == "exact":
            return np.trace(c, axis1=-2, axis2=-1) / n
        if name == "within_one":
            return (c * (np.abs(i - j) <= 1)).sum(axis=(-2, -1)) / n
        rows, cols = margins(c)                        # human and judge marginals
        if name in ("cohen_kappa", "quadratic_kappa"):
            # 1 - sum(w * c) / sum(w * rows cols^T / n), as products with the k x k weights (a posterior's 2,000
            # matrices: 0.5 ms, against 1.1 ms through the stack of expected matrices)
            w = (i != j).astype(float) if name == "cohen_kappa" else ((i - j) ** 2).astype(float)
            observed = c.reshape(*c.shape[:-2], k * k) @ w.ravel()
            expected = add_last((rows @ w) * cols) / n
            return 1.0 - observed / expected
        if name == "spearman":
            def midranks(marginal: Any) -> Any:
                return np.cumsum(marginal, axis=-1) - (marginal - 1.0) / 2.0
            rh, rj = midranks(rows), midranks(cols)
            mh = (rows * rh).sum(axis=-1) / n
            mj = (cols * rj).sum(axis=-1) / n
            dh, dj = rh - mh[..., None], rj - mj[..., None]
            cov = (c * dh[..., :, None] * dj[..., None, :]).sum(axis=(-2, -1))
            var_h = (rows * dh ** 2).sum(axis=-1)
            var_j = (cols * dj ** 2).sum(axis=-1)
            value = cov / np.sqrt(var_h * var_j)
            # a constant side has no ranks to correlate (scipy returns NaN); guard against rounding noise
            return np.where((var_h <= 1e-12 * n ** 3) | (var_j <= 1e-12 * n ** 3), np.nan, value)
        if name == "krippendorff_alpha":
            o = c + np.swapaxes(c, -1, -2)                  # coincidences of two coders
            nv = o.sum(axis=-1)
            total = nv.sum(axis=-1)
            cum = np.cumsum(nv, axis=-1)
            lo, hi = np.minimum(i, j), np.maximum(i, j)
            # ordinal distance: (sum of n_g for g between c and k, inclusive, minus (n_c + n_k) / 2) squared
            between = np.take(cum, hi, axis=-1) - np.take(cum, lo, axis=-1) + np.take(nv, lo, axis=-1)
            d = (between - (np.take(nv, i, axis=-1) + np.take(nv, j, axis=-1)) / 2.0) ** 2
            e = (nv[..., :, None] * nv[..., None, :] - nv[..., :, None] * np.eye(k)) / (total - 1.0)[..., None, None]
            return 1.0 - (o * d).sum(axis=(-2, -1)) / (e * d).sum(axis=(-2, -1))
    raise ValueError(f"unknown statistic '{name}'")


def statistic(name: str, human: Any, judge: Any, k: int, weights: Any | None = None) -> float:
    """One statistic of paired label indices; NaN when undefined (no pairs, or a single label in use)."""
    if len(human) == 0:
        return float("nan")
    return float(from_confusion(name, confusion(human, judge, k, weights)))


def bootstrap_ci(name: str, human: Any, judge: Any, k: int, *, resamples: int = 1000,
                 seed: int = 11, weights: Any | None = None) -> tuple[float | None, float | None]:
    """Paired percentile-bootstrap 95% CI (scipy.stats.bootstrap resamples the pairs — with their weights, when
    given; the statistic is vectorised over resamples). Resamples where the statistic is undefined are left out;
    when more than half are, there is no interval."""
    import numpy as np
    from scipy.stats import bootstrap

    human = np.asarray(human, dtype=np.int64)
    judge = np.asarray(judge, dtype=np.int64)
    if len(human) < 2:
        return None, None

    def stat(h: Any, j: Any, *w: Any, axis: int = -1) -> Any:
        h, j = np.moveaxis(h, axis, -1), np.moveaxis(j, axis, -1)
        return from_confusion(name, confusion(h, j, k, np.moveaxis(w[0], axis, -1) if w else None))

    data = (human, judge) if weights is None else (human, judge, np.asarray(weights, dtype=float))
    with warnings.catch_warnings():  # degenerate resamples are handled below, as the old loop did
        warnings.simplefilter("ignore")
        res = bootstrap(data, stat, paired=True, vectorized=True, n_resamples=resamples,
                        method="percentile", confidence_level=0.95, random_state=np.random.default_rng(seed))
    values = np.asarray(res.bootstrap_distribution, dtype=float)
    values = values[np.isfinite(values)]
    if values.size < resamples // 2:
        return None, None
    return float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))


ALPHA_LEVELS = ("nominal", "ordinal", "interval", "ratio")


def alpha(data: object, level: str = "ordinal") -> float:
    """Krippendorff's alpha of `data` (coders x units, NaN where a coder gave no value) at a level of measurement:
    1 - D_o / D_e over the coincidence matrix of the units two or more coders valued (Krippendorff 2011,
    "Computing Krippendorff's alpha-reliability"). Equal to the `krippendorff` package's `alpha` (a test holds it
    to 1e-12). NaN when undefined (fewer than two pairable values, or one value in use)."""
    import numpy as np

    if level not in ALPHA_LEVELS:
        raise ValueError(f"unknown level of measurement '{level}'")
    values = np.asarray(data, dtype=float)
    seen = values[np.isfinite(values)]
    domain = np.unique(seen)
    if domain.size < 2:
        return float("nan")
    index = np.searchsorted(domain, values[np.isfinite(values)])
    counts = np.zeros((values.shape[1], domain.size))
    unit = np.nonzero(np.isfinite(values))[1]
    np.add.at(counts, (unit, index), 1.0)
    pairable = counts.sum(axis=1)
    weight = np.where(pairable >= 2, 1.0 / np.maximum(pairable - 1.0, 1.0), 0.0)
    coincide = (counts * weight[:, None]).T @ counts - np.diag((counts * weight[:, None]).sum(axis=0))
    marginal = coincide.sum(axis=1)
    total = float(marginal.sum())
    if total <= 1:
        return float("nan")
    if level == "nominal":
        distance = 1.0 - np.eye(domain.size)
    elif level == "interval":
        distance = (domain[:, None] - domain[None, :]) ** 2
    elif level == "ratio":
        both = domain[:, None] + domain[None, :]
        distance = np.where(both == 0, 0.0, (domain[:, None] - domain[None, :]) / np.where(both == 0, 1.0, both)) ** 2
    else:
        cum = np.cumsum(marginal)
        lo, hi = np.minimum.outer(np.arange(domain.size), np.arange(domain.size)), \
            np.maximum.outer(np.arange(domain.size), np.arange(domain.size))
        between = cum[hi] - cum[lo] + marginal[lo]
        distance = (between - (marginal[:, None] + marginal[None, :]) / 2.0) ** 2
    observed = float((coincide * distance).sum())
    expected = float((np.outer(marginal, marginal) * distance).sum()) / (total - 1.0)
    return float("nan") if expected == 0 else 1.0 - observed / expected
