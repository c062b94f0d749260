"""The vocabulary every floor shares: the metrics (their scales, levels and pass marks), the judge kinds, and the
defaults of an LLM judge — each written once, here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class MetricSpec:
    name: str
    low: float
    high: float
    level: str            # "row": one score per run row; "passage": one per retrieved passage
    needs_reference: bool = False
    default_rubric: str | None = None
    pass_mark: float | None = None  # a score under it counts as a failure
    items: str | None = None        # sub-items judged within a row ("nugget", "citation"), kept in the detail
    kinds: tuple[str, ...] = ("llm",)  # the methods that can judge it (embedded judges: see add_judge)
    marker_free: bool = False       # judged on the answer without its [n] markers, as open-rag-eval reads it
    gold_free: bool = False         # one of open-rag-eval's gold-free metrics: box plots, the report's gold-free part


METRICS: dict[str, MetricSpec] = {m.name: m for m in (
    MetricSpec("correctness", 1, 5, "row", True, "correctness", 4),
    MetricSpec("correctness_binary", 0, 1, "row", True, "correctness_binary", 1),
    MetricSpec("faithfulness", 1, 5, "row", False, "faithfulness", 4),
    MetricSpec("answer_relevance", 1, 5, "row", False, "answer_relevance", 4),
    MetricSpec("passage_relevance", 0, 3, "passage", False, "passage_relevance_umbrela", 2, gold_free=True),
    # open-rag-eval's no-answer check: "% answered"
    MetricSpec("answered", 0, 1, "row", False, "answered", 1, marker_free=True, gold_free=True),
    # AutoNuggetizer (TREC 2024 RAG, as open-rag-eval runs it): the row score is the weighted nugget score
    MetricSpec("nuggets", 0, 1, "row", False, "nugget_assignment", None, items="nugget", marker_free=True,
               gold_free=True),
    # each answer sentence against each passage it cites: the row score is the citation F1
    MetricSpec("citation_support", 0, 1, "row", False, "citation_support", None, items="citation", gold_free=True),
    # HHEM-2.1-Open, a local model: 1 = consistent with the passages, under 0.5 = hallucinated
    MetricSpec("hallucination", 0, 1, "row", False, None, 0.5, kinds=("hhem",), gold_free=True),
)}

# The scores a dashboard shows that come from a judged metric under another name: UMBRELA's retrieval scores from
# passage_relevance grades, the nugget and citation scores from their per-item judgments, HHEM's from hallucination.
UNLINKED = "(unlinked)"      # the slice of a run row linked to no golden row
NO_SLICE = "(no slice)"      # the slice of a run row whose golden row has none (a project without slices: every row)
# a run row's slice in SQL, run_rows joined (LEFT) to golden_rows as g
SLICE_OF = f"CASE WHEN g.id IS NULL THEN '{UNLINKED}' ELSE COALESCE(g.slice_tag, '{NO_SLICE}') END"

DERIVED_PREFIXES = {"umbrela_": "passage_relevance", "nugget_": "nuggets", "citation_": "citation_support"}
DERIVED_NAMES = {"hhem": "hallucination"}


def metric_of(score: str) -> str | None:
    """The judged metric a dashboard score comes from ("umbrela_p@5" -> passage_relevance, "hhem" -> hallucination,
    "correctness" -> itself); None for a score of no judged metric (hit@5, mrr)."""
    if score in METRICS:
        return score
    if score in DERIVED_NAMES:
        return DERIVED_NAMES[score]
    return next((m for prefix, m in DERIVED_PREFIXES.items() if score.startswith(prefix)), None)


def metric_choices() -> str:
    """Every metric a judge may score, with the dashboard scores it gives under other names (`--metric`'s help)."""
    out = []
    for name, spec in METRICS.items():
        gives = [f"{p}*" for p, m in DERIVED_PREFIXES.items() if m == name] + [
            s for s, m in DERIVED_NAMES.items() if m == name]
        kinds = "" if spec.kinds == ("llm",) else f"--kind {'/'.join(spec.kinds)}"
        said = "; ".join(x for x in (f"gives {', '.join(gives)}" if gives else "", kinds) if x)
        out.append(f"{name} ({said})" if said else name)
    return ", ".join(out)


def gold_free(score: str) -> bool:
    """Whether a score (a metric or a dashboard column) is one of open-rag-eval's gold-free ones: the one rule the
    reports, the charts and the app read (`MetricSpec.gold_free`)."""
    metric = metric_of(score)
    return metric is not None and METRICS[metric].gold_free
LLM_DEFAULTS: dict[str, Any] = {"temperature": 0.0, "max_tokens": 512, "seed": 0, "timeout": 120.0,
                                "concurrency": 16, "max_retries": 4, "rpm": None, "passages_k": 5}
