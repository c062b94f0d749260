"""The failure classes of a run's rows, counted by the judges a caller chooses (the Failures page's default: the
licensed ones)."""

from __future__ import annotations


def test_generation_failures_can_be_counted_by_chosen_judges_only(demo):
    """The Failures page's default (issue 48): the judges named count; the others' verdicts make no failure."""
    from rageval_desktop.core.metrics.failures import failure_listing

    every = failure_listing(demo, "v2")
    none = failure_listing(demo, "v2", judges=[])
    recall = failure_listing(demo, "v2", judges=["answer-recall"])
    assert every["counts"]["all"]["generation"] > recall["counts"]["all"]["generation"] >= 0
    assert none["counts"]["all"]["generation"] == 0 and none["pass_marks"] == {}
    assert none["counts"]["all"]["retrieval"] == every["counts"]["all"]["retrieval"]    # retrieval needs no judge
    assert set(recall["pass_marks"]) == {"correctness_binary"}
