"""Means with 95% confidence intervals: a percentile bootstrap (scipy) for small samples, the normal
approximation for large ones, where it is as good and a bootstrap would cost seconds per number."""

from __future__ import annotations

import math
from typing import Any

BOOTSTRAP_MAX_N = 2_000
RESAMPLES = 2_000
SEED = 12345


def mean_ci(values: Any, *, seed: int = SEED) -> tuple[float | None, float | None, float | None]:
    """(mean, low, high) of the finite values; (None, None, None) when there are none."""
    import numpy as np

    data = np.asarray(values, dtype=float)
    data = data[np.isfinite(data)]
    n = data.size
    if n == 0:
        return None, None, None
    mean = float(data.mean())
    if n == 1 or float(data.std()) == 0.0:
        return mean, mean, mean
    if n > BOOTSTRAP_MAX_N:
        half = 1.959964 * float(data.std(ddof=1)) / math.sqrt(n)
        return mean, mean - half, mean + half
    from scipy.stats import bootstrap

    res = bootstrap((data,), np.mean, n_resamples=RESAMPLES, confidence_level=0.95, method="percentile",
                    random_state=np.random.default_rng(seed), vectorized=True)
    return mean, float(res.confidence_interval.low), float(res.confidence_interval.high)


def percentile(values: Any, q: float) -> float | None:
    import numpy as np

    data = np.asarray(values, dtype=float)
    data = data[np.isfinite(data)]
    return float(np.percentile(data, q)) if data.size else None
