"""Issue 48: whether a score is gold-free was written four ways that disagreed (the app left "answered" out of the
box plots' check, the report put it in). It is a field of MetricSpec now, read through vocab.gold_free everywhere."""

from __future__ import annotations

import re

from rageval_desktop.core.base.vocab import METRICS, gold_free, metric_of
from rageval_desktop.core.reports.plots import BOX_METRICS
from tests.conftest import REPO


def test_one_rule_says_which_scores_are_gold_free():
    assert {m for m, spec in METRICS.items() if spec.gold_free} == {
        "passage_relevance", "answered", "nuggets", "citation_support", "hallucination"}
    for score in ("umbrela_p@5", "umbrela_mrr", "nugget_vital", "citation_f1", "hhem", "answered", "nuggets"):
        assert gold_free(score), score
    for score in ("correctness", "correctness_binary", "faithfulness", "hit@5", "mrr", "ndcg@10", "latency"):
        assert not gold_free(score), score
    assert (metric_of("umbrela_p@5"), metric_of("hhem"), metric_of("hit@5")) == ("passage_relevance",
                                                                                 "hallucination", None)
    assert all(gold_free(m) for m in BOX_METRICS)          # the box plots draw gold-free scores only


def test_no_module_writes_the_rule_again():
    spelled = re.compile(r"""\(\s*["']umbrela_["']\s*,\s*["']nugget_["']""")
    found = [str(p.relative_to(REPO)) for p in (REPO / "rageval_desktop").rglob("*.py")
             if spelled.search(p.read_text(encoding="utf-8")) and p.name != "vocab.py"]
    assert not found, found
