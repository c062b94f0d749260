"""What the review card may show, and when: blind before a rating, side by side after it.

Blind means blind: before this reviewer has rated a row, neither the judges' verdicts nor anything that hints at
the system's effort (latency, cost, token counts) is shown. A skipped row stays blind — the reviewer may come back
to it. After a rating the card shows "you 3 · minilm 4.3 · gpt-judge 2".
"""

from __future__ import annotations

from dataclasses import replace

from rageval_desktop.core.store.queries import RowDetail

HIDDEN_FACTS = ("latency ms", "cost USD", "prompt tokens", "completion tokens")
NO_RATING = "not rated"


def blinded(detail: RowDetail) -> RowDetail:
    """The row without judgments and without the run's latency, cost and token counts."""
    facts = {k: v for k, v in detail.facts.items() if k not in HIDDEN_FACTS}
    return replace(detail, judgments=(), facts=facts)


def revealed(mine: float | None, rated: bool) -> bool:
    """Whether the judges may be shown: only after a rating (a skip is not one)."""
    return rated and mine is not None


def side_by_side(detail: RowDetail, metric: str, mine: float | None, *, skipped: bool = False) -> str:
    """'you 3 · minilm 4.3 · gpt-judge 2' — this reviewer's score, then every judge of the metric on this row
    (retired judges marked, errors named)."""
    you = "you skipped" if skipped else f"you {mine:g}" if mine is not None else f"you: {NO_RATING}"
    parts = [you]
    for j in detail.judgments:
        if j.metric != metric or j.passage_rank:
            continue
        value = f"{j.score:.3g}" if j.status == "ok" and j.score is not None else j.status
        parts.append(f"{j.judge} {value}" + (" (retired)" if j.judge_status == "retired" else ""))
    if len(parts) == 1:
        parts.append("no judge has scored this row for this metric")
    return " · ".join(parts)
