"""Retrieval metrics of one row, from the ranks at which its gold chunks were retrieved (binary relevance).

Pure functions: `gold_ranks` are the 1-based ranks of distinct gold chunks found among the retrieved passages,
`n_gold` is how many gold chunks the golden row names (rows without gold ids are left out by the caller).

Names, as in trec_eval and ranx:
- `hit@k`: 1 when any gold chunk is in the top k, else 0 (trec_eval `success_k`, ranx `hit_rate@k`); its mean over
  questions is the hit rate that many RAG teams call "recall@k".
- `recall@k`: the share of the row's gold chunks found in the top k (trec_eval `recall_k`, ranx `recall@k`).
  With one gold chunk per question the two are equal.
- `precision@k`, `mrr` (1 / rank of the first gold chunk), `ndcg@k` (binary gains).
Rank is the position in the run file (the first retrieved passage is rank 1), unless the run was imported with
`--rank-by score`. A chunk id retrieved twice in one list keeps both rank slots; only its first rank counts.
"""


from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rageval_desktop.core.base.scoring import citations, nuggets, umbrela
from rageval_desktop.core.base.vocab import metric_of

if TYPE_CHECKING:
    from numpy import ndarray

DEFAULT_KS = (5, 10, 50)
# names used before 0.2, accepted by `--metrics` for a while: recall_frac@k was the share of gold chunks
OLD_NAMES = {"recall_frac@": "recall@"}


def hit_at_k(gold_ranks: Sequence[int], k: int) -> float:
    """hit@k: did any gold chunk make the top k (1.0 or 0.0)."""
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
        out[f"hit@{k}"] = hit_at_k(gold_ranks, k)
        out[f"recall@{k}"] = recall_fraction_at_k(gold_ranks, n_gold, k)
        out[f"precision@{k}"] = precision_at_k(gold_ranks, k)
        out[f"ndcg@{k}"] = ndcg_at_k(gold_ranks, n_gold, k)
    out["mrr"] = reciprocal_rank(gold_ranks)
    return out


class Hits:
    """The retrieval metrics of many rows at once (numpy; 100k rows in milliseconds), a column at a time: what
    `row_metrics` gives each row, with NaN for rows without gold ids.

    `hit_rows`/`hit_ranks` list every (row, rank) at which a distinct gold chunk was retrieved. `column(name)` is the
    values of one metric (`hit@k`, `recall@k`, `precision@k`, `ndcg@k`, `mrr`, or `first_rank`: the first gold
    chunk's rank, NaN when none was found) aligned with `row_ids`, for any k."""

    def __init__(self, row_ids: Sequence[int], n_gold: Sequence[int], hit_rows: Sequence[int],
                 hit_ranks: Sequence[int]) -> None:
        import numpy as np

        rows = np.asarray(row_ids)
        self.gold = np.asarray(n_gold)       # (counts as they are: divided into floats where used)
        wanted = np.asarray(hit_rows, dtype=np.int64)
        if len(rows) < 2 or (rows[1:] > rows[:-1]).all():    # each hit's row, found by binary search (no sort: a
            self.idx = np.searchsorted(rows, wanted)       # run's rows are usually in order)
        else:
            order = np.argsort(rows, kind="stable")
            self.idx = order[np.searchsorted(rows[order], wanted)]
        # ranks as they were read (1-2 bytes): compared with k, and made floats where a gain needs them
        self.ranks = np.asarray(hit_ranks)
        self.n = len(rows)
        self.first = np.full(self.n, np.inf)
        np.minimum.at(self.first, self.idx, self.ranks.astype(float, copy=False))
        self.found = np.isfinite(self.first)
        self.no_gold = self.gold == 0

    def column(self, name: str) -> ndarray:
        import numpy as np

        n, first, gold = self.n, self.first, self.gold
        if name in ("mrr", "first_rank"):
            if name == "first_rank":
                return np.where(self.found, first, np.nan)
            values = np.where(self.found, 1.0 / first, 0.0)
        else:
            kind, _, cut = name.partition("@")
            k = int(cut)
            if kind == "hit":
                values = (first <= k).astype(float)
            else:
                inside = self.ranks <= k
                if kind == "ndcg":
                    gain = 1.0 / np.log2(self.ranks + 1.0)
                    dcg = np.bincount(self.idx[inside], weights=gain[inside], minlength=n)
                    ideal = np.concatenate([[0.0], np.cumsum(1.0 / np.log2(np.arange(2, k + 2)))])[
                        np.minimum(gold, k).astype(int)]
                    values = np.divide(dcg, ideal, out=np.zeros(n), where=ideal > 0)
                else:
                    count = np.bincount(self.idx[inside], minlength=n).astype(float)
                    values = (np.divide(count, gold, out=np.zeros(n), where=gold > 0) if kind == "recall" else
                              count / k)
        values[self.no_gold] = np.nan
        return values


def names(ks: Sequence[int] = DEFAULT_KS) -> list[str]:
    """The columns `table` gives, in its order."""
    return [f"{kind}@{k}" for k in ks for kind in ("hit", "recall", "precision", "ndcg")] + ["mrr", "first_rank"]


def table(row_ids: Sequence[int], n_gold: Sequence[int], hit_rows: Sequence[int], hit_ranks: Sequence[int],
          ks: Sequence[int] = DEFAULT_KS) -> dict[str, Any]:
    """Every column of `Hits` for these ks: column name -> numpy array aligned with `row_ids`."""
    hits = Hits(row_ids, n_gold, hit_rows, hit_ranks)
    return {name: hits.column(name) for name in names(ks)}


def canonical_name(name: str) -> str:
    """A metric name as `--metrics` may spell it, in today's words (old names keep working for a while)."""
    for old, new in OLD_NAMES.items():
        if name.startswith(old):
            return new + name[len(old):]
    return name


RANK_NOTE = (". Rank is the position in the run file unless it was imported with --rank-by score; questions "
             "without gold ids are left out.")


def definition(name: str) -> str | None:
    """What a retrieval column means, in one sentence (tooltips, reports, docs)."""
    if metric_of(name) not in (None, name):   # a score derived from a judged metric (umbrela_*, nugget_*, hhem)

        return {**umbrela.DEFINITIONS, **nuggets.DEFINITIONS, **citations.DEFINITIONS,
                "hhem": "model-based (HHEM-2.1-Open): how consistent the answer is with the passages; under 50 = "
                        "hallucinated"}.get(name)
    kind, _, k = name.partition("@")
    texts = {
        "hit": f"hit@{k}: share of questions with any gold chunk in the top {k} (a hit rate; trec_eval success_{k}, "
               f"ranx hit_rate@{k})",
        "recall": f"recall@{k}: mean share of a question's gold chunks found in the top {k} (IR recall; trec_eval "
                  f"recall_{k})",
        "precision": f"precision@{k}: mean share of the top {k} that are gold chunks",
        "ndcg": f"nDCG@{k}: ranking quality of the gold chunks in the top {k} (binary gains)",
        "mrr": "MRR: mean of 1 / rank of the first gold chunk (0 when none is retrieved)",
    }
    if name == "mrr":
        return texts["mrr"] + RANK_NOTE
    return texts[kind] + RANK_NOTE if kind in texts and k else None

