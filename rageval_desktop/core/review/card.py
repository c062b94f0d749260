"""What the review card may show, and when: blind before a rating, side by side after it.

Blind means blind: before this reviewer has rated a row, neither the judges' verdicts nor anything that hints at
the system's effort (latency, cost, token counts) is shown. A skipped row stays blind — the reviewer may come back
to it. After a rating the card shows "you 3 · minilm 4.3 · gpt-judge 2".
"""

from __future__ import annotations

from dataclasses import replace

from rageval_desktop.core.base.scoring.nuggets import batch_values
from rageval_desktop.core.base.vocab import METRICS
from rageval_desktop.core.judges import rubrics
from rageval_desktop.core.review.guidelines import human_rubric
from rageval_desktop.core.review.targets import BY_TEXT, sub_key, unit
from rageval_desktop.core.review.targets import card as target_card
from rageval_desktop.core.store.project import Project
from rageval_desktop.core.store.queries import JudgmentView, RowDetail, preview_fields, run_row_detail

HIDDEN_FACTS = ("latency ms", "cost USD", "prompt tokens", "completion tokens")
NO_RATING = "not rated"


def blinded(detail: RowDetail) -> RowDetail:
    """The row without judgments and without the run's latency, cost and token counts."""
    facts = {k: v for k, v in detail.facts.items() if k not in HIDDEN_FACTS}
    return replace(detail, judgments=(), facts=facts)


def revealed(mine: float | None, rated: bool) -> bool:
    """Whether the judges may be shown: only after a rating (a skip is not one)."""
    return rated and mine is not None


def _same_target(j: JudgmentView, kind: str, item: int, key: str | None) -> bool:
    if kind in BY_TEXT:
        return j.passage_rank > 0 and sub_key(kind, j.rationale, j.detail) == key
    return j.passage_rank == item


def side_by_side(detail: RowDetail, metric: str, mine: float | None, *, skipped: bool = False, item: int = 0,
                 key: str | None = None) -> str:
    """'you 3 · minilm 4.3 · gpt-judge 2' — this reviewer's score, then every judge of the metric on the same
    target: the row, the passage, or the nugget or citation of the same text (retired judges marked, errors
    named). On a support scale the labels are named too: 'you 0.5 partial_support · nug 1 support'."""
    kind = unit(metric)
    labels = {p.score: p.label for p in human_rubric(metric).points} if kind in BY_TEXT else {}

    def value(score: float) -> str:
        return f"{score:.3g}" + (f" {labels[score]}" if score in labels else "")

    you = "you skipped" if skipped else f"you {value(mine)}" if mine is not None else f"you: {NO_RATING}"
    parts = [you]
    for j in detail.judgments:
        if j.metric != metric or not _same_target(j, kind, item, key):
            continue
        shown = value(j.score) if j.status == "ok" and j.score is not None else j.status
        parts.append(f"{j.judge} {shown}" + (" (retired)" if j.judge_status == "retired" else ""))
    if len(parts) == 1:
        parts.append(f"no judge has scored this {kind} for this metric")
    return " · ".join(parts)


def judge_prompt(project: Project, metric: str, row_id: int, item: int = 0, key: str | None = None) -> str:
    """The prompt an LLM judge of `metric` receives for this target, rendered with the project's current rubric
    (the row; the passage at its rank; the one nugget; the sentence and the passage it cites). No verdict in it."""

    spec = METRICS[metric]
    rubric = rubrics.rubric_for_metric(project, metric, spec.default_rubric)
    if rubric is None:
        return "No LLM rubric is used for this metric: it is judged by a local model."
    fields = preview_fields(project, row_id, rank=item or 1)
    kind = unit(metric)
    if kind == "nugget":
        fields = batch_values(fields["question"], [key or ""], fields["answer"])
    elif kind == "citation":
        shown = target_card(run_row_detail(project, row_id), metric, item, key)
        fields = {"statement": shown.text if shown else "", "citation": shown.context if shown else ""}
    what = {"row": "this row", "passage": f"passage #{item}", "nugget": "this nugget (in a batch of up to 10)",
            "citation": "this sentence and the passage it cites"}[kind]
    return (f"The rubric the judge receives for {what} ({rubric.name} v{rubric.version}):\n\n"
            + rubric.render(fields)[-1]["content"])
