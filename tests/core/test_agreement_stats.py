"""Agreement statistics from confusion matrices equal the libraries', and the vectorised bootstrap gives the same
CIs as the loop over scikit-learn it replaced (same seed, same resamples)."""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pytest
from scipy.stats import spearmanr
from sklearn.metrics import cohen_kappa_score

from rageval_desktop.core.review import agreement_stats as st


def reference(name: str, h: np.ndarray, j: np.ndarray, k: int) -> float:
    """The libraries, called as the audit called them before (NaN where they are undefined)."""
    labels = list(range(k))
    if name == "exact":
        return float(np.mean(h == j))
    if name == "within_one":
        return float(np.mean(np.abs(h - j) <= 1))
    if name in ("cohen_kappa", "quadratic_kappa"):
        if len(set(h) | set(j)) < 2:
            return math.nan
        with np.errstate(divide="ignore", invalid="ignore"):
            return float(cohen_kappa_score(h, j, labels=labels,
                                           weights="quadratic" if name == "quadratic_kappa" else None))
    if name == "spearman":
        if np.all(h == h[0]) or np.all(j == j[0]):
            return math.nan
        return float(spearmanr(j, h).statistic)
    data = np.vstack([j, h]).astype(float)
    if len(np.unique(data)) < 2:
        return math.nan
    return float(krippendorff.alpha(reliability_data=data, value_domain=labels, level_of_measurement="ordinal"))


def old_bootstrap(name: str, h: np.ndarray, j: np.ndarray, k: int, seed: int = 11) -> tuple:
    """The bootstrap the audit used before: 1,000 resamples, each through the libraries."""
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(1000):
        idx = rng.integers(0, len(h), len(h))
        values.append(reference(name, h[idx], j[idx], k))
    values = np.asarray(values)
    values = values[np.isfinite(values)]
    if values.size < 500:
        return None, None
    return float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))


def sample(seed: int) -> tuple[np.ndarray, np.ndarray, int]:
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 6))
    n = int(rng.integers(2, 80))
    h = rng.integers(0, k, n)
    j = rng.integers(0, k, n) if seed % 4 == 0 else np.clip(h + rng.integers(-1, 2, n), 0, k - 1)
    if seed % 7 == 0:
        j = np.full(n, h[0])  # a judge that always says the same: kappa and rho are undefined or 0
    return h, j, k


@pytest.mark.parametrize("seed", range(60))
def test_statistics_equal_the_libraries(seed):
    h, j, k = sample(seed)
    for name in st.STATS:
        ours, theirs = st.statistic(name, h, j, k), reference(name, h, j, k)
        assert math.isnan(ours) == math.isnan(theirs), name
        if not math.isnan(theirs):
            assert ours == pytest.approx(theirs, abs=1e-12), name


@pytest.mark.parametrize("seed", [2, 6])
@pytest.mark.parametrize("name", ["quadratic_kappa", "cohen_kappa", "spearman", "krippendorff_alpha", "exact"])
def test_bootstrap_ci_is_unchanged(seed, name):
    h, j, k = sample(seed)
    new, old = st.bootstrap_ci(name, h, j, k), old_bootstrap(name, h, j, k)
    if old[0] is None:
        assert new == (None, None)
    else:
        assert new == pytest.approx(old, abs=1e-12)


def test_stack_of_confusion_matrices():
    h = np.array([[0, 1, 2], [2, 2, 2]])
    j = np.array([[0, 1, 1], [0, 2, 2]])
    c = st.confusion(h, j, 3)
    assert c.shape == (2, 3, 3)
    assert c[0].tolist() == [[1, 0, 0], [0, 1, 0], [0, 1, 0]]
    assert c[1].tolist() == [[0, 0, 0], [0, 0, 0], [1, 0, 2]]
    assert np.allclose(st.from_confusion("exact", c), [2 / 3, 2 / 3])
