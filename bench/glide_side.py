"""GLIDE's PPI++ interval (glide-py's PPIMeanEstimator) for the draws bench_ppi_grid.py hands it: run by an
interpreter that has glide-py (Python >= 3.12), `python glide_side.py IN.npz OUT.npy`. IN holds `truth` (draws x
questions, NaN where not rated) and `proxy` (the judge's scores); OUT gets one (low, high) a draw, NaN where GLIDE
refuses the draw (it raises on rated values that are all equal)."""

import sys

import numpy as np
from glide.estimators import PPIMeanEstimator

data = np.load(sys.argv[1])
out = np.full((data["truth"].shape[0], 2), np.nan)
estimator = PPIMeanEstimator()
for i, (truth, proxy) in enumerate(zip(data["truth"], data["proxy"], strict=True)):
    try:
        ci = estimator.estimate(truth, proxy).confidence_interval
    except ValueError:
        continue
    out[i] = ci.lower_bound, ci.upper_bound
np.save(sys.argv[2], out)
