"""Inverse-probability weights of rated targets, from the design of the sample each rating belongs to.

A representative sample (`stratified`, the default) and a rating made outside any sample weigh 1. A sample drawn
with unequal probabilities (`disagreement`, `uncertain`: core.review.sampling) keeps each target's inclusion
probability p; its ratings weigh 1/p, so agreement statistics (a weighted confusion matrix) and PPI corrections
(a weighted mean) estimate what a uniform sample would have: the targets drawn more often count less.
A target rated in several samples takes the weight of its first non-uniform one.
"""

from __future__ import annotations

from typing import Any

from rageval_desktop.core.store.project import Project


def design(project: Project, metric: str) -> dict[tuple[int, str], float]:
    """(run row, target) -> inclusion probability, for the targets of `metric` rated within a non-uniform sample;
    `target` as in core.review.targets.target_id (the passage rank, "0" for the row, or a nugget's text)."""
    from rageval_desktop.core.review.targets import target_id, unit

    kind = unit(metric)
    out: dict[tuple[int, str], float] = {}
    for row, item, key, p in project.reader().execute(
            "SELECT sr.run_row_id, sr.item, sr.item_key, sr.inclusion FROM review_sample_rows sr JOIN review_samples "
            "s ON s.id = sr.sample_id WHERE s.metric = ? AND sr.inclusion > 0 AND EXISTS (SELECT 1 FROM "
            "human_ratings h WHERE h.sample_id = s.id AND h.run_row_id = sr.run_row_id AND h.passage_rank = sr.item "
            "AND h.withdrawn_at IS NULL AND h.skipped = 0) ORDER BY s.id", (metric,)):
        out.setdefault((int(row), target_id(kind, int(item), key)), float(p))
    return out


def target_weights(project: Project, metric: str) -> dict[int, float]:
    """Row -> weight (1/p) for the rows of a row metric rated in a non-uniform sample; absent rows weigh 1."""
    return {row: 1.0 / p for (row, target), p in design(project, metric).items() if target == "0"}


def pair_weights(project: Project, metric: str, merged: Any) -> Any | None:
    """Weights aligned with an agreement frame (`run_row_id`, `target` columns), or None when every rated target
    comes from a representative sample (the statistics stay unweighted)."""
    import numpy as np

    found = design(project, metric)
    if not found or merged.empty:
        return None
    weights = np.array([1.0 / found.get((int(r), str(t)), 1.0) for r, t in
                        zip(merged["run_row_id"], merged["target"], strict=True)])
    return None if np.allclose(weights, 1.0) else weights
