"""Retrieval scores without gold ids, from UMBRELA passage grades (0-3), computed as open-rag-eval computes them:
a passage is relevant when its grade is >= 2; precision@k for k in (1, 3, 5), skipped for a row whose graded list
is shorter than k (not counted as zero); AP@k, the mean precision at the relevant positions of the top k (0 when
none is relevant); MRR, the reciprocal rank of the first relevant passage (0 when none); and the mean grade.

Unscored is not wrong: a passage whose grade did not parse (or failed) leaves every number that depends on it
unknown (None) — never a zero. All values are on 0-100, like every score (the mean grade as a share of 3).
"""

from __future__ import annotations

from collections.abc import Sequence

RELEVANT = 2
KS = (1, 3, 5)
NAMES = ("umbrela_p@1", "umbrela_p@3", "umbrela_p@5", "umbrela_ap@5", "umbrela_mrr", "umbrela_mean")
SOURCE_METRIC = "passage_relevance"
DEFINITIONS = {
    "umbrela_p@1": "judge-based (UMBRELA): share of relevant passages (grade >= 2) in the top 1",
    "umbrela_p@3": "judge-based (UMBRELA): share of relevant passages (grade >= 2) in the top 3",
    "umbrela_p@5": "judge-based (UMBRELA): share of relevant passages (grade >= 2) in the top 5",
    "umbrela_ap@5": "judge-based (UMBRELA): mean precision at the relevant positions of the top 5",
    "umbrela_mrr": "judge-based (UMBRELA): reciprocal rank of the first relevant passage (grade >= 2)",
    "umbrela_mean": "judge-based (UMBRELA): mean passage grade, as a share of 3",
}


def row_scores(grades: Sequence[float | None]) -> dict[str, float | None]:
    """The UMBRELA retrieval scores of one row from its graded passages in rank order (None: not graded)."""
    out: dict[str, float | None] = {}
    relevant = [None if g is None else g >= RELEVANT for g in grades]
    for k in KS:
        top = relevant[:k]
        out[f"umbrela_p@{k}"] = None if k > len(relevant) or None in top else 100.0 * sum(bool(t) for t in top) / k
    top5 = relevant[:5]
    if len(relevant) < 5 or None in top5:
        out["umbrela_ap@5"] = None
    else:
        hits, precisions = 0, []
        for i, rel in enumerate(top5, start=1):
            if rel:
                hits += 1
                precisions.append(hits / i)
        out["umbrela_ap@5"] = 100.0 * sum(precisions) / len(precisions) if precisions else 0.0
    mrr: float | None = 0.0 if relevant else None
    for i, rel in enumerate(relevant, start=1):
        if rel is None:       # an ungraded passage before the first relevant one: the rank is unknown
            mrr = None
            break
        if rel:
            mrr = 100.0 / i
            break
    out["umbrela_mrr"] = mrr
    graded = [g for g in grades if g is not None]
    out["umbrela_mean"] = 100.0 * sum(graded) / (3 * len(graded)) if graded else None
    return out
