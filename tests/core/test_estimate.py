"""Cost before you spend: the dry run plans exactly what the job then sends, and counts the cache."""

from __future__ import annotations

from rageval_desktop.core.jobs.estimate import estimate, token_counter
from rageval_desktop.core.jobs.judge_job import run_judge_job
from rageval_desktop.core.jobs.spec import JobSpec
from rageval_desktop.core.judges import prices
from tests.core.test_judging import llm_judge, proj  # noqa: F401  (the fixture)
from tests.support.fake_openai import FakeOpenAI


def test_the_dry_run_predicts_the_calls_and_the_cache(proj):  # noqa: F811
    prices.set_price(proj, "gpt-4o-mini", 1.0, 2.0)
    with FakeOpenAI() as server:
        llm_judge(proj, server, name="judge")
        before = estimate(proj, JobSpec(run="v1"))
        assert server.calls == 0                                   # a dry run sends nothing
        j = before["judges"][0]
        assert (before["calls"], j["calls"], j["cached"], before["already_judged"]) == (20, 20, 0, 0)
        assert j["prompt_tokens"] > 20 * 100 and j["completion_tokens"] == 20 * 160   # prometheus: a typical reply
        assert before["cost_usd"] == (j["prompt_tokens"] * 1.0 + j["completion_tokens"] * 2.0) / 1e6
        assert before["cost_usd_max"] > before["cost_usd"]
        stats = run_judge_job(proj, JobSpec(run="v1"))
        assert stats.calls == before["calls"]                       # the same plan as the job
        assert estimate(proj, JobSpec(run="v1"))["calls"] == 0      # everything judged: nothing to send
        with proj.write("forget") as w:
            w.execute("DELETE FROM judgments")
        again = estimate(proj, JobSpec(run="v1"))
        assert (again["calls"], again["judges"][0]["cached"]) == (0, 20)   # answered from the request cache
        assert estimate(proj, JobSpec(run="v1", use_cache=False))["calls"] == 20


def test_an_unpriced_model_says_so(proj):  # noqa: F811
    from rageval_desktop.core.judges.registry import add_judge

    with FakeOpenAI() as server:
        add_judge(proj, "local", "correctness", "llm", model="my-local-model", base_url=server.url)
        est = estimate(proj, JobSpec(run="v1"))
    assert est["cost_usd"] is None and est["unpriced_models"] == ["my-local-model"]
    assert est["judges"][0]["calls"] == 20 and est["judges"][0]["cost_usd"] is None


def test_tokens_are_counted_with_a_tokenizer():
    count, name = token_counter()
    assert name == "MiniLM WordPiece tokenizer"
    assert count("The quick brown fox jumps over the lazy dog.") == 10
