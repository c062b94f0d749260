"""Retrieval metrics, from the ranks at which each row's gold chunks were retrieved (binary relevance), declared
once in a registry (`RetrievalMetric`, `register`) that metrics, compare, the gate, charts, reports and the app read.

`Hits` holds many rows' hits (the 1-based ranks of distinct gold chunks found among the retrieved passages, and how
many gold chunks each golden row names; rows without gold ids are NaN) and gives a metric's column for any cut-off.

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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from rageval_desktop.core.base.scoring import citations, nuggets, umbrela
from rageval_desktop.core.base.vocab import METRICS, metric_of

if TYPE_CHECKING:
    from numpy import ndarray

DEFAULT_KS = (5, 10, 50)
# names used before 0.2, accepted by `--metrics` for a while: recall_frac@k was the share of gold chunks
OLD_NAMES = {"recall_frac@": "recall@"}


class Hits:
    """The retrieval metrics of many rows at once (numpy; 100k rows in milliseconds), a column at a time, NaN for
    rows without gold ids.

    `hit_rows`/`hit_ranks` list every (row, rank) at which a distinct gold chunk was retrieved. `column(name)` is the
    values of one declared metric at any cut-off (`hit@7`, `mrr`), or `first_rank` (the first gold chunk's rank, NaN
    when none was found), aligned with `row_ids`."""

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
        """One metric's values (a `RetrievalMetric`'s, any cut-off) or `first_rank`, NaN for rows without gold ids."""
        import numpy as np

        if name == "first_rank":
            return np.where(self.found, self.first, np.nan)
        found = parse(name)
        if found is None:
            raise KeyError(name)
        spec, k = found
        values = np.array(spec.column(self, k), dtype=float)     # (a copy: the caller's own, as before)
        values[self.no_gold] = np.nan
        return values

    def within(self, k: int) -> ndarray:
        """How many of each row's gold chunks are in its top k."""
        import numpy as np

        inside = self.ranks <= k
        return np.bincount(self.idx[inside], minlength=self.n).astype(float)

    def share(self, counts: ndarray, of: ndarray) -> ndarray:
        """counts / of, 0 where `of` is 0."""
        import numpy as np

        return np.asarray(np.divide(counts, of, out=np.zeros(self.n), where=of > 0))


def _hit(h: Hits, k: int) -> ndarray:
    return (h.first <= k).astype(float)


def _recall(h: Hits, k: int) -> ndarray:
    return h.share(h.within(k), h.gold.astype(float))


def _precision(h: Hits, k: int) -> ndarray:
    return h.within(k) / k


def _mrr(h: Hits, k: int) -> ndarray:
    import numpy as np

    return np.where(h.found, 1.0 / h.first, 0.0)


def _ndcg(h: Hits, k: int) -> ndarray:
    """Binary-relevance nDCG@k: DCG of the gold hits over the DCG of a perfect ranking (min(n_gold, k) gold chunks
    at the top)."""
    import numpy as np

    inside = h.ranks <= k
    gain = 1.0 / np.log2(h.ranks + 1.0)
    dcg = np.bincount(h.idx[inside], weights=gain[inside], minlength=h.n)
    ideal = np.concatenate([[0.0], np.cumsum(1.0 / np.log2(np.arange(2, k + 2)))])[np.minimum(h.gold, k).astype(int)]
    return h.share(dcg, ideal)


PLAIN = 0   # the cut-off of a metric that has none (mrr): its name is its family's
Tier = Literal["shown", "headline", "brief"]


@dataclass(frozen=True)
class RetrievalMetric:
    """A metric computed from the ranks at which each row's gold chunks were retrieved, declared once: the metrics,
    compare, the gate and its plan, the charts, the reports and the app find it here, as they find judged metrics in
    `base.vocab.METRICS`. Its values are shares in [0, 1] (shown on 0-100) and higher is better.

    `shown`, `headline` and `brief` are the cut-offs each tier uses (`PLAIN` for a metric without one): `shown` the
    columns of the app's dashboard and the HTML and PDF reports; `headline` those with a 95% CI on the dashboard, in
    a comparison and the gate by default and in the failing-rows list; `brief` the dashboard chart's bars and the
    terminal's and Markdown's tables."""

    family: str                                   # the name, or its part before "@k" (hit@5: "hit" at 5)
    label: str                                    # as a table heads it; "{k}" stands for the cut-off
    definition: str                               # one sentence; "{k}" stands for the cut-off
    column: Callable[[Hits, int], ndarray]        # every row's value at cut-off k (rows without gold set apart)
    cut: bool = True                              # named family@k for any k >= 1; without, the family alone
    shown: tuple[int, ...] = ()
    headline: tuple[int, ...] = ()
    brief: tuple[int, ...] = ()
    zero: str = "no gold chunk in the top {k}"    # what a row's 0 means (the failing-rows list)

    def name(self, k: int = PLAIN) -> str:
        return f"{self.family}@{k}" if self.cut else self.family


REGISTRY: dict[str, RetrievalMetric] = {}


def register(spec: RetrievalMetric) -> RetrievalMetric:
    """Declare a computed retrieval metric (a plug-in's too): one entry, found everywhere. Refuses a family already
    declared or named like a judged metric."""
    if spec.family in REGISTRY or spec.family in METRICS or "@" in spec.family or "__" in spec.family:
        raise ValueError(f"retrieval metric {spec.family!r} is already declared or is not a plain name")
    REGISTRY[spec.family] = spec
    return spec


RANK_NOTE = (". Rank is the position in the run file unless it was imported with --rank-by score; questions "
             "without gold ids are left out.")

register(RetrievalMetric(
    "hit", "hit@{k}", "hit@{k}: share of questions with any gold chunk in the top {k} (a hit rate; trec_eval "
    "success_{k}, ranx hit_rate@{k})", _hit, shown=(5, 10), headline=(5, 10), brief=(5,)))
register(RetrievalMetric(
    "recall", "recall@{k}", "recall@{k}: mean share of a question's gold chunks found in the top {k} (IR recall; "
    "trec_eval recall_{k})", _recall, shown=(10,)))
register(RetrievalMetric(
    "mrr", "MRR", "MRR: mean of 1 / rank of the first gold chunk (0 when none is retrieved)", _mrr, cut=False,
    shown=(PLAIN,), headline=(PLAIN,), brief=(PLAIN,), zero="no gold chunk retrieved"))
register(RetrievalMetric(
    "ndcg", "nDCG@{k}", "nDCG@{k}: ranking quality of the gold chunks in the top {k} (binary gains)", _ndcg,
    shown=(10,), headline=(10,)))
register(RetrievalMetric(
    "precision", "precision@{k}", "precision@{k}: mean share of the top {k} that are gold chunks", _precision))


def parse(name: str) -> tuple[RetrievalMetric, int] | None:
    """(the metric, its cut-off) a name means — 'hit@5', 'mrr' — or None for no retrieval metric."""
    family, at, cut = name.partition("@")
    spec = REGISTRY.get(family)
    if spec is None or bool(at) != spec.cut:
        return None
    if not spec.cut:
        return spec, PLAIN
    return (spec, int(cut)) if cut.isdigit() and int(cut) > 0 and cut == str(int(cut)) else None


def is_retrieval(name: str) -> bool:
    return parse(name) is not None


def named(tier: Tier) -> list[str]:
    """The metrics of a tier (`RetrievalMetric`'s `shown`, `headline`, `brief`), in declaration order."""
    return [spec.name(k) for spec in REGISTRY.values() for k in getattr(spec, tier)]


def label(name: str) -> str:
    """How a table heads a retrieval metric ('nDCG@10', 'MRR'); the name itself for anything else."""
    found = parse(name)
    return found[0].label.format(k=found[1]) if found else name


def spelled() -> str:
    """Every retrieval metric as `--metrics` takes it, for help and errors: 'hit@k, recall@k, mrr, …'."""
    return ", ".join(spec.name(0).replace("@0", "@k") if spec.cut else spec.family for spec in REGISTRY.values())


def names(ks: Sequence[int] = DEFAULT_KS) -> list[str]:
    """The columns `table` gives, in its order: every declared metric at every cut-off, then `first_rank`."""
    cut = [spec for spec in REGISTRY.values() if spec.cut]
    return [spec.name(k) for k in ks for spec in cut] + [s.family for s in REGISTRY.values() if not s.cut] + \
        ["first_rank"]


def table(row_ids: Sequence[int], n_gold: Sequence[int], hit_rows: Sequence[int], hit_ranks: Sequence[int],
          ks: Sequence[int] = DEFAULT_KS) -> dict[str, ndarray]:
    """Every column of `Hits` for these ks: column name -> numpy array aligned with `row_ids`."""
    hits = Hits(row_ids, n_gold, hit_rows, hit_ranks)
    return {name: hits.column(name) for name in names(ks)}


def canonical_name(name: str) -> str:
    """A metric name as `--metrics` may spell it, in today's words (old names keep working for a while)."""
    for old, new in OLD_NAMES.items():
        if name.startswith(old):
            return new + name[len(old):]
    return name


def definition(name: str) -> str | None:
    """What a retrieval column means, in one sentence (tooltips, reports, docs)."""
    if metric_of(name) not in (None, name):   # a score derived from a judged metric (umbrela_*, nugget_*, hhem)

        return {**umbrela.DEFINITIONS, **nuggets.DEFINITIONS, **citations.DEFINITIONS,
                "hhem": "model-based (HHEM-2.1-Open): how consistent the answer is with the passages; under 50 = "
                        "hallucinated"}.get(name)
    found = parse(name)
    return found[0].definition.format(k=found[1]) + RANK_NOTE if found else None
