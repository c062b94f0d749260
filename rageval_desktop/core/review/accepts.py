"""False accepts first (issue 30): where a judge with a pass mark and the reviewers disagree on pass or fail.

A false accept is a target the judge passes and the reviewers fail: what a gate on that judge would ship. Per slice
and over all: false accepts and false rejects, the true-positive rate (judge passes | humans pass), the true-negative
rate (judge fails | humans fail) and the false-accept rate (1 − TNR), each with a Wilson 95% interval on the
sample's effective n — weighted by the sample's design when it was not drawn uniformly."""

from __future__ import annotations

from typing import Any

from rageval_desktop.core.base.stats import wilson
from rageval_desktop.core.base.vocab import METRICS
from rageval_desktop.core.judges.judge import Judge
from rageval_desktop.core.review import evidence
from rageval_desktop.core.review.agreement import rated_pairs
from rageval_desktop.core.review.weights import weighted_pairs
from rageval_desktop.core.store.project import Project

ALL = "all"


def _rate(hit: Any, base: Any, weights: Any) -> dict[str, Any]:
    """A weighted share hit/base with Wilson's interval on the effective n of `base` (None when base is empty)."""
    import numpy as np

    w = weights[base]
    n = int(base.sum())
    if n == 0:
        return {"value": None, "ci": [None, None], "n": 0}
    share = float(np.sum(w * hit[base]) / np.sum(w))
    n_eff = max(1, round(evidence.effective_n(w, n)))
    low, high = wilson(share * n_eff, n_eff)
    return {"value": share, "ci": [low, high], "n": n}


def pass_fail(project: Project, judge: Judge, run: str | None = None) -> dict[str, Any] | None:
    """The judge's pass/fail against the reviewers' (None: its metric has no pass mark); `run`: on its rows only."""
    import numpy as np

    mark = METRICS[judge.metric].pass_mark
    if mark is None:
        return None
    merged, _latest = rated_pairs(project, judge)
    if run is not None and not merged.empty:
        merged = merged.take(merged["run"] == run)
    out: dict[str, Any] = {"pass_mark": mark, "slices": {}, "false_accepts": []}
    if merged.empty:
        return out
    merged, weights, _outside = weighted_pairs(project, judge.metric, merged)
    if merged.empty:
        return out
    w = np.ones(len(merged)) if weights is None else np.asarray(weights, dtype=float)
    judge_score = np.asarray(merged["judge_score"], dtype=float)
    human_score = np.asarray(merged["human_score"], dtype=float)
    judge_pass, human_pass = judge_score >= mark, human_score >= mark
    slices = np.array(["—" if s is None else s for s in merged["slice"].tolist()], dtype=object)
    for name in [*sorted(set(slices)), ALL]:
        inside = np.ones(len(merged), bool) if name == ALL else slices == name
        accepts = inside & judge_pass & ~human_pass
        rejects = inside & ~judge_pass & human_pass
        out["slices"][name] = {
            "n": int(inside.sum()), "false_accepts": int(accepts.sum()), "false_rejects": int(rejects.sum()),
            "tpr": _rate(judge_pass, inside & human_pass, w), "tnr": _rate(~judge_pass, inside & ~human_pass, w),
            "false_accept_rate": _rate(judge_pass, inside & ~human_pass, w)}
    wrong = np.flatnonzero(judge_pass & ~human_pass)
    runs, rows, named = merged["run"], merged["run_row_id"], merged["slice"]
    out["false_accepts"] = [{"run_row_id": int(rows[i]), "run": runs[i], "slice": named[i],
                             "judge_score": float(judge_score[i]), "human_score": float(human_score[i])}
                            for i in sorted(wrong.tolist(), key=lambda i: (runs[i], rows[i]))]
    return out
