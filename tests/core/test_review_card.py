"""The review card's rules: the human scale from the rubric file, guidelines kept in the project, blind until
rated, side by side after."""

from __future__ import annotations

import pytest

from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.base.vocab import METRICS
from rageval_desktop.core.review import card, guidelines
from rageval_desktop.core.store.queries import JudgmentView, RowDetail


def _detail() -> RowDetail:
    j = lambda name, metric, score, status="ok", rank=0, judge_status="active": JudgmentView(  # noqa: E731
        name, metric, judge_status, rank, status, score, None, None, None, None, 0.01, 120.0)
    return RowDetail(title="v2 · q1", question="q", answer="a", gold_answer="g", gold_chunk_ids=[], slice_tag="easy",
                     passages=[], facts={"golden row": "g1", "latency ms": 812.0, "cost USD": 0.002,
                                         "prompt tokens": 900, "completion tokens": 40},
                     judgments=(j("minilm", "correctness", 4.25), j("gpt-judge", "correctness", 2.0),
                                j("umbrela", "passage_relevance", 3.0, rank=1),
                                j("bad", "correctness", None, status="unparsed"),
                                j("old", "correctness", 5.0, judge_status="retired")))


def test_every_row_metric_has_an_anchor_per_score():
    for name, spec in METRICS.items():
        scale = guidelines.human_rubric(name)
        whole = list(range(int(spec.low), int(spec.high) + 1))
        assert [p.score for p in scale.points] == ([0, 0.5, 1] if spec.items else whole), name
        assert all(p.anchor for p in scale.points), name
        assert scale.criterion
    nugget = guidelines.human_rubric("nuggets")
    assert [(p.key, p.label) for p in nugget.points] == [("n", "not_support"), ("p", "partial_support"),
                                                         ("f", "support")]   # s is the card's skip key
    assert [p.key for p in guidelines.human_rubric("citation_support").points] == ["n", "p", "f"]
    for name in METRICS:   # no score key is also the card's move, skip, comment or undo key
        assert not {p.key for p in guidelines.human_rubric(name).points} & guidelines.RESERVED_KEYS, name
    assert guidelines.human_rubric("hallucination").binary
    binary = guidelines.human_rubric("correctness_binary")
    assert binary.binary and [(p.label, p.key) for p in binary.points] == [("No", "0"), ("Yes", "1")]


def test_blind_hides_verdicts_and_effort_and_a_skip_stays_blind():
    blind = card.blinded(_detail())
    assert blind.judgments == () and set(blind.facts) == {"golden row"}
    assert card.revealed(3.0, rated=True) and not card.revealed(None, rated=True)
    assert not card.revealed(None, rated=False)


def test_side_by_side_lists_this_metric_only():
    line = card.side_by_side(_detail(), "correctness", 3.0)
    assert line == "you 3 · minilm 4.25 · gpt-judge 2 · bad unparsed · old 5 (retired)"
    assert card.side_by_side(_detail(), "faithfulness", 1.0).endswith("no judge has scored this row for this metric")


def test_guidelines_are_kept_audited_and_bounded(project):
    assert guidelines.guidelines(project, "correctness") == ""
    guidelines.set_guidelines(project, "correctness", "# Rules\r\n- a refusal is 1\r\n")
    assert guidelines.guidelines(project, "correctness") == "# Rules\n- a refusal is 1"
    assert project.reader().execute("SELECT COUNT(*) FROM audit_log WHERE action = 'set review guidelines'"
                                    ).fetchone()[0] == 1
    with pytest.raises(RagevalError, match="unknown metric"):
        guidelines.set_guidelines(project, "nope", "x")
    with pytest.raises(RagevalError, match="limited to"):
        guidelines.set_guidelines(project, "correctness", "x" * (guidelines.MAX_GUIDELINES + 1))
