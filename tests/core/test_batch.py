"""Judge jobs through the Batch API, against a loopback server that implements /v1/files and /v1/batches, with the
real openai client: the same requests and cache as a live job, recorded batches, resumable polling, follow-up
batches for what failed, batch prices."""

from __future__ import annotations

import json

import pytest

from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.jobs import batch
from rageval_desktop.core.jobs.judge_job import run_judge_job
from rageval_desktop.core.jobs.spec import JobSpec
from rageval_desktop.core.judges import prices
from tests.core.test_judging import KEY, llm_judge, make_project
from tests.support.fake_openai import FakeOpenAI, Reply, default_content, question_of


@pytest.fixture
def proj(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY", KEY)
    p = make_project(tmp_path / "b.rageval", n=30)
    yield p
    p.close()


def spec(**kw):
    return JobSpec(run="v1", batch=True, **kw)


def judged(project):
    return project.reader().execute("SELECT run_row_id, status, score, cost_usd, prompt_tokens, completion_tokens, "
                                    "error_kind, cache_hit FROM judgments ORDER BY run_row_id").fetchall()


def test_a_batch_job_judges_every_row_at_the_batch_price_without_live_calls(proj, monkeypatch):
    monkeypatch.setattr(batch, "MAX_REQUESTS", 8)                # 30 requests: four files, four batches
    with FakeOpenAI() as server:
        llm_judge(proj, server)
        stats = batch.run_batch_job(proj, spec(), poll_seconds=0)
        rows = judged(proj)
        lines = [json.loads(x) for fid, data in server.files.items() for x in data.decode().splitlines()
                 if "custom_id" in x and '"method"' in x]
    assert stats.status == "done" and (stats.sent, stats.batches, stats.rounds) == (30, 4, 1)
    assert server.calls == 0 and len(server.batch_requests) == 30      # every reply came through the batches
    assert len(rows) == 30 and {r[1] for r in rows} == {"ok"} and {r[2] for r in rows} == {4.0}
    assert stats.judged["batch_replies"] == 30 and stats.judged["cache_hits"] == 0
    # the same request a live call sends: body and key
    body = lines[0]["body"]
    assert body["model"] == "gpt-4o-mini" and body["temperature"] == 0.0 and body["seed"] == 0
    assert {question_of(x["body"]) for x in lines} == {f"Question number {i}?" for i in range(30)}
    # priced at the batch price: half the live price by default
    live, half = prices.bundled()["gpt-4o-mini"], prices.batch_price(proj, "gpt-4o-mini")
    assert half == (live[0] / 2, live[1] / 2)
    for r in rows:
        assert r[3] == pytest.approx(prices.cost(half, r[4], r[5]))
    assert stats.judged["cost_usd"] == pytest.approx(sum(r[3] for r in rows))
    assert [b["status"] for b in batch.batches(proj, stats.job_id)] == ["completed"] * 4
    assert proj.reader().execute("SELECT status FROM jobs WHERE id = ?", (stats.job_id,)).fetchone()[0] == "done"

    # nothing is sent twice: a second batch job finds every row judged
    with FakeOpenAI() as again:
        again_stats = batch.run_batch_job(proj, spec(), poll_seconds=0)
    assert again_stats.sent == 0 and again.calls == 0 and again_stats.skipped == 30


def test_a_provider_stating_impossible_request_counts_while_it_works_does_not_stop_the_job(proj):
    """A batch in progress said it had completed 2**70 requests: writing its status failed (SQLite cannot hold the
    number) and the job stopped with an internal error. A count no batch can hold is no count."""
    def hostile(index: int, state: dict) -> str:
        state["request_counts"] = {"total": 2**70, "completed": 2**70, "failed": -1}   # (until it finishes)
        return "completed"

    with FakeOpenAI() as server:
        server.batch_outcome = hostile
        llm_judge(proj, server)
        stats = batch.run_batch_job(proj, spec(), poll_seconds=0)
    assert stats.status == "done" and stats.judged["batch_replies"] == 30
    assert [(b["completed"], b["failed"]) for b in batch.batches(proj, stats.job_id)] == [(30, 0)]


def test_cached_and_identical_requests_are_not_sent(proj):
    with FakeOpenAI() as server:
        llm_judge(proj, server)
        run_judge_job(proj, JobSpec(run="v1", slice_tag="edge"))      # 15 rows judged live: their replies cached
        proj.write("forget").__enter__().execute("DELETE FROM judgments")   # judged again, from the cache
        live_calls = server.calls
        stats = batch.run_batch_job(proj, spec(), poll_seconds=0)
    assert live_calls == 15 and server.calls == 15
    assert (stats.cached, stats.sent) == (15, 15) and len(server.batch_requests) == 15
    assert stats.judged["cache_hits"] == 15 and stats.judged["batch_replies"] == 15


def test_an_expired_batch_sends_what_was_left_in_a_follow_up_batch(proj):
    with FakeOpenAI() as server:
        server.batch_outcome = lambda index, b: "expired" if index == 0 else "completed"
        llm_judge(proj, server)
        stats = batch.run_batch_job(proj, spec(), poll_seconds=0)
        rows = judged(proj)
    assert stats.rounds == 2 and stats.failed_by_kind == {"batch_expired": 15}
    assert [b["status"] for b in batch.batches(proj, stats.job_id)] == ["expired", "completed"]
    assert [b["requests"] for b in batch.batches(proj, stats.job_id)] == [30, 15]
    assert server.calls == 0 and len(rows) == 30 and {r[1] for r in rows} == {"ok"}


def test_what_no_batch_answers_is_called_live_with_bounded_retries(proj):
    def script(body, n):
        if "Question number 3?" in body["messages"][-1]["content"]:
            return Reply(status=400, error={"message": "bad input", "type": "invalid_request_error", "code": None})
        if any("Question number 4?" in m["content"] for m in body["messages"]):
            return Reply("no score here")                          # unparsed: one repair request, then unparsed
        return Reply(default_content(body["messages"][-1]["content"]))

    with FakeOpenAI(script) as server:
        server.batch_outcome = lambda index, b: "failed" if index == 1 else "completed"
        llm_judge(proj, server)
        stats = batch.run_batch_job(proj, spec(), poll_seconds=0)
        rows = {r[0]: r for r in judged(proj)}
    # round 1: 29 answered, 1 failed (400); round 2 (that one request) failed validation; the live pass calls it
    assert stats.rounds == 2 and stats.failed_by_kind == {"http_400": 1, "batch_failed": 1}
    assert len(rows) == 30
    bad = [r for r in rows.values() if r[1] == "error"]
    assert len(bad) == 1 and bad[0][6] == "bad_request"             # a 400 is not retried live either
    unparsed = [r for r in rows.values() if r[1] == "unparsed"]
    assert len(unparsed) == 1
    assert server.calls == 2                                        # the 400 once, the repair request once
    assert stats.judged["batch_replies"] == 29


def test_submitted_jobs_resume_and_block_a_live_job_on_the_same_rows(proj):
    with FakeOpenAI() as server:
        llm_judge(proj, server)
        first = batch.run_batch_job(proj, spec(), wait=False)
        assert first.status == "submitted" and first.sent == 30 and judged(proj) == []
        assert [j["id"] for j in batch.waiting(proj)] == [first.job_id]
        with pytest.raises(RagevalError, match=f"batch job {first.job_id} is still waiting"):
            run_judge_job(proj, JobSpec(run="v1"))
        assert server.calls == 0
        done = batch.run_batch_job(proj, spec(), job_id=first.job_id, poll_seconds=0)
    assert done.status == "done" and done.job_id == first.job_id and (done.sent, done.batches) == (30, 1)
    assert len(server.batches) == 1                     # the job's totals: resuming sent nothing again
    assert len(judged(proj)) == 30 and len(server.batch_requests) == 30 and server.calls == 0
    assert batch.waiting(proj) == []
    assert {r[0] for r in proj.reader().execute("SELECT job_id FROM judgments")} == {first.job_id}


def test_cancel_cancels_the_remote_batches_and_keeps_what_came_back(proj):
    with FakeOpenAI() as server:
        llm_judge(proj, server)
        first = batch.run_batch_job(proj, spec(), wait=False)
        out = batch.cancel(proj, first.job_id)
        assert out["cancelled_batches"] == 1 and len(server.cancels) == 1
        # the next poll sees it cancelled: half its requests were answered and are kept
        status = proj.reader().execute("SELECT status FROM jobs WHERE id = ?", (first.job_id,)).fetchone()[0]
        assert status == "cancelled"
        live = run_judge_job(proj, JobSpec(run="v1"))   # no longer blocked: a cancelled job waits for nothing
    assert len(judged(proj)) == 30
    # the replies the cancelled batch brought back are used (and paid, at the batch price, once); the rest live
    assert (live.batch_replies, live.calls) == (15, 15)
    assert proj.reader().execute("SELECT COUNT(*) FROM llm_cache WHERE batch_job IS NOT NULL").fetchone()[0] == 0


def test_a_batch_created_but_not_recorded_is_found_not_created_again(proj, monkeypatch):
    real_create = batch.Provider.create

    def create_then_die(self, input_file_id, metadata):
        real_create(self, input_file_id, metadata)
        raise KeyboardInterrupt      # killed after the provider made the batch, before the project recorded it

    with FakeOpenAI() as server:
        llm_judge(proj, server)
        monkeypatch.setattr(batch.Provider, "create", create_then_die)
        with pytest.raises(KeyboardInterrupt):
            batch.run_batch_job(proj, spec(), poll_seconds=0)
        job_id = proj.reader().execute("SELECT MAX(id) FROM jobs").fetchone()[0]
        assert [b["remote_id"] for b in batch.batches(proj, job_id)] == [None]
        monkeypatch.setattr(batch.Provider, "create", real_create)
        done = batch.run_batch_job(proj, spec(), job_id=job_id, poll_seconds=0)
    assert len(server.batches) == 1 and len(server.files) == 2           # one input file, one output file
    assert done.status == "done" and len(judged(proj)) == 30 and server.calls == 0


def test_the_budget_is_checked_at_batch_prices_before_anything_is_sent(proj):
    prices.set_price(proj, "gpt-4o-mini", 1000.0, 1000.0)
    with FakeOpenAI() as server:
        llm_judge(proj, server)
        from rageval_desktop.core.jobs.estimate import estimate

        est = estimate(proj, spec())
        assert est["cost_usd"] == pytest.approx(estimate(proj, JobSpec(run="v1"))["cost_usd"] / 2)
        with pytest.raises(RagevalError, match="estimate at batch prices .* over the budget"):
            batch.run_batch_job(proj, spec(budget_usd=est["cost_usd"] * 0.9), poll_seconds=0)
        stats = batch.run_batch_job(proj, spec(budget_usd=est["cost_usd"] * 1.1), poll_seconds=0)
    assert server.files and stats.status == "done" and server.calls == 0
    assert proj.reader().execute("SELECT COUNT(*) FROM jobs").fetchone()[0] == 1   # the refused one left no job


def test_the_api_key_never_reaches_the_project_even_when_the_server_echoes_it(proj, tmp_path):
    with FakeOpenAI(lambda body, n: Reply(f"Feedback: fine, {KEY} [RESULT] 4")) as server:
        llm_judge(proj, server)
        batch.run_batch_job(proj, spec(), poll_seconds=0)
    proj.close()
    raw = (tmp_path / "b.rageval").read_bytes() + b"".join(
        p.read_bytes() for p in tmp_path.glob("b.rageval-*") if p.is_file())
    assert KEY.encode() not in raw
