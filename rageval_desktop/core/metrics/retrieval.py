"""Retrieval metrics of one row, from the ranks at which its gold chunks were retrieved (binary relevance).

Pure functions: `gold_ranks` are the 1-based ranks of distinct gold chunks found among the retrieved passages,
`n_gold` is how many gold chunks the golden row names (rows without gold ids are left out by the caller).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

DEFAULT_KS = (5, 10, 50)


def hit_at_k(gold_ranks: Sequence[int], k: int) -> float:
    """recall@k as most RAG teams read it: did any gold chunk make the top k (1.0 or 0.0)."""
    return 1.0 if any(r <= k for r in gold_ranks) else 0.0


def recall_fraction_at_k(gold_ranks: Sequence[int], n_gold: int, k: int) -> float:
    """The share of the gold chunks found in the top k."""
    return sum(1 for r in gold_ranks if r <= k) / n_gold if n_gold else 0.0


def precision_at_k(gold_ranks: Sequence[int], k: int) -> float:
    return sum(1 for r in gold_ranks if r <= k) / k


def reciprocal_rank(gold_ranks: Sequence[int]) -> float:
    return 1.0 / min(gold_ranks) if gold_ranks else 0.0


def ndcg_at_k(gold_ranks: Sequence[int], n_gold: int, k: int) -> float:
    """Binary-relevance nDCG@k: DCG of the gold hits over the DCG of a perfect ranking."""
    dcg = sum(1.0 / math.log2(r + 1) for r in gold_ranks if r <= k)
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(n_gold, k) + 1))
    return dcg / ideal if ideal else 0.0


def row_metrics(gold_ranks: Sequence[int], n_gold: int, ks: Sequence[int] = DEFAULT_KS) -> dict[str, float]:
    """Every retrieval metric of one row, as fractions in [0, 1]."""
    out: dict[str, float] = {}
    for k in ks:
        out[f"recall@{k}"] = hit_at_k(gold_ranks, k)
        out[f"recall_frac@{k}"] = recall_fraction_at_k(gold_ranks, n_gold, k)
        out[f"precision@{k}"] = precision_at_k(gold_ranks, k)
        out[f"ndcg@{k}"] = ndcg_at_k(gold_ranks, n_gold, k)
    out["mrr"] = reciprocal_rank(gold_ranks)
    return out
