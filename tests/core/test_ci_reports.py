"""JUnit XML from a gate decision carries any text from data as text: characters XML 1.0 cannot hold and
bidirectional controls become their code points; a regression is a failure."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from rageval_desktop.core.metrics.gate import GateResult
from rageval_desktop.core.reports.ci import junit_xml


def test_a_regression_fails_and_hostile_slice_names_are_inert():
    cell = {"slice": "edge\x1b[31m\u202e", "metric": "hit@5", "baseline": 80.0, "candidate": 40.0, "drop": 40.0,
            "allowed": 2.0, "ci": (-55.0, -25.0), "n": 30, "n_counts": "questions", "within_noise": False,
            "p_adjusted": 0.001, "why": "shown"}
    result = GateResult(comparison={"baseline": "main", "candidate": "pr-1", "shared_questions": 30},
                        regressions=[cell], gated=1)
    text = junit_xml(result)
    root = ET.fromstring(text.split("\n", 1)[1])
    decision, case = root.findall("testsuite/testcase")
    assert decision.find("failure").get("type") == "regression"
    failure = case.find("failure")
    assert root.get("failures") == "2" and failure.get("type") == "regression"
    assert case.get("name") == "edge[U+001B][31m[U+202E] · hit@5"
    assert "-40.0 points" in failure.get("message") and "allowed 2" in failure.get("message")


def test_cannot_tell_is_a_failing_decision_never_a_green_suite_of_skips():
    """Skipped cells alone read as green in CI test reports: the decision is a case of its own and fails unless the
    gate passed — also when no cell was gated at all."""
    result = GateResult(comparison={"baseline": "main", "candidate": "pr-1", "shared_questions": 0})
    root = ET.fromstring(junit_xml(result).split("\n", 1)[1])
    assert root.get("tests") == "1" and root.get("failures") == "1"
    failure = root.find("testsuite/testcase/failure")
    assert failure.get("type") == "not_decision_grade" and failure.get("message").startswith("not decision-grade")
