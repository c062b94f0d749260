"""'% answered' (open-rag-eval's no-answer check): a yes/no LLM judge through the real client, per slice."""

from __future__ import annotations

import pytest

from rageval_desktop.core.jobs.judge_job import run_judge_job
from rageval_desktop.core.jobs.spec import JobSpec
from rageval_desktop.core.judges.parsers import ParseError, parse_yes_no
from rageval_desktop.core.metrics.dashboard import dashboard
from rageval_desktop.core.review.guidelines import human_rubric
from tests.core.test_judging import llm_judge, proj  # noqa: F401  (the fixture)
from tests.support.fake_openai import FakeOpenAI, Reply, question_of


@pytest.mark.parametrize("reply, score", [("yes", 1.0), ("No.", 0.0), ("`yes`", 1.0), ("Your Response: no", 0.0),
                                          ('{"answered": "yes"}', 1.0), ('{"answered": false}', 0.0)])
def test_yes_no_replies(reply, score):
    assert parse_yes_no(reply, 0, 1).score == score


@pytest.mark.parametrize("reply", ["maybe", "yes and no", "Yes. No.", ""])
def test_replies_that_are_not_a_verdict_stay_unparsed(reply):
    with pytest.raises(ParseError):
        parse_yes_no(reply, 0, 1)


def test_percent_answered_per_slice(proj):  # noqa: F811
    def responder(body: dict, n: int) -> Reply:
        number = int(question_of(body).split()[-1].rstrip("?"))
        return Reply(content="yes" if number % 4 else "no")      # every fourth question: "not an attempt"

    with FakeOpenAI(responder) as server:
        llm_judge(proj, server, name="answered-judge", metric="answered")
        stats = run_judge_job(proj, JobSpec(run="v1"))
    assert (stats.ok, stats.unparsed, stats.errors) == (20, 0, 0)
    summary = dashboard(proj, "v1")
    assert "answered" in summary["judge_metrics"]
    assert summary["slices"]["all"]["answered"] == pytest.approx(75.0)      # 15 of 20 answered
    assert summary["slices"]["edge"]["answered"] == pytest.approx(50.0)     # even numbers: 0, 4, 8 ... said no
    scale = human_rubric("answered")
    assert [(p.label, p.key) for p in scale.points] == [("No", "0"), ("Yes", "1")] and scale.criterion
