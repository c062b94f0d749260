"""Judge jobs through Anthropic's Message Batches (core/jobs/message_batches.py), against a loopback server that
implements /v1/messages/batches, with openai's client: the same job, records, rounds and cache as the OpenAI-style
Batch API, the requests in Anthropic's form, and the same guarantees when the process is killed."""

from __future__ import annotations

import json

import pytest

from rageval_desktop.core.jobs import batch, message_batches
from rageval_desktop.core.jobs.message_batches import MessageBatches, anthropic_request, flavour
from rageval_desktop.core.jobs.spec import JobSpec
from rageval_desktop.core.judges.secrets import Scrubber
from tests.core.test_judging import KEY, llm_judge, make_project
from tests.support.fake_openai import FakeOpenAI, Reply, question_of


@pytest.fixture
def proj(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY", KEY)
    p = make_project(tmp_path / "m.rageval", n=30)
    yield p
    p.close()


def spec(**kw):
    return JobSpec(run="v1", batch=True, batch_api="anthropic", **kw)


def judged(project):
    return project.reader().execute("SELECT run_row_id, status, score, prompt_tokens, completion_tokens "
                                    "FROM judgments ORDER BY run_row_id").fetchall()


def test_auto_picks_message_batches_for_anthropics_host_only():
    assert flavour("auto", "https://api.anthropic.com/v1") == "anthropic"
    assert flavour("auto", "https://api.anthropic.com.evil.example/v1") == "openai"
    assert flavour("auto", "http://127.0.0.1:8000/v1") == "openai"
    assert flavour("anthropic", "http://127.0.0.1:8000/v1") == "anthropic"


def test_a_request_line_becomes_a_message_batch_request():
    line = json.dumps({"custom_id": "k" * 64, "method": "POST", "url": "/v1/chat/completions", "body": {
        "model": "claude-x", "temperature": 0.0, "seed": 0, "messages": [
            {"role": "system", "content": "Be a judge."}, {"role": "user", "content": "Grade this."}]}}).encode()
    assert anthropic_request(line) == {"custom_id": "k" * 64, "params": {
        "model": "claude-x", "max_tokens": message_batches.DEFAULT_MAX_TOKENS, "system": "Be a judge.",
        "temperature": 0.0, "messages": [{"role": "user", "content": "Grade this."}]}}


def test_a_message_batch_job_judges_every_row_without_live_calls(proj, monkeypatch):
    monkeypatch.setattr(batch, "MAX_REQUESTS", 8)                # 30 requests: four batches
    with FakeOpenAI() as server:
        llm_judge(proj, server)
        stats = batch.run_batch_job(proj, spec(), poll_seconds=0)
        rows = judged(proj)
    assert stats.status == "done" and (stats.sent, stats.batches, stats.rounds) == (30, 4, 1)
    assert server.calls == 0 and server.batches == {} and len(server.message_batches) == 4
    assert len(server.message_batch_requests) == 30
    assert len(rows) == 30 and {r[1] for r in rows} == {"ok"} and {r[2] for r in rows} == {4.0}
    assert all(r[3] and r[4] for r in rows)                     # Anthropic's token counts, kept
    params = server.message_batch_requests[0]["params"]
    assert params["model"] == "gpt-4o-mini" and params["max_tokens"] > 0 and "seed" not in params
    assert {question_of({"messages": r["params"]["messages"]}) for r in server.message_batch_requests} == {
        f"Question number {i}?" for i in range(30)}
    assert set(server.anthropic_keys) == {KEY}                  # Anthropic's header, with the resolved key
    assert [b["status"] for b in batch.batches(proj, stats.job_id)] == ["completed"] * 4
    with FakeOpenAI() as again:                                 # nothing is sent twice
        again_stats = batch.run_batch_job(proj, spec(), poll_seconds=0)
    assert again_stats.sent == 0 and again.message_batches == {} and again_stats.skipped == 30


def test_errored_requests_go_in_the_next_round_and_the_rest_live(proj):
    with FakeOpenAI(lambda body, n: Reply(status=500) if n <= 5 else Reply("Feedback: ok [RESULT] 4")) as server:
        llm_judge(proj, server)
        stats = batch.run_batch_job(proj, spec(), poll_seconds=0)
        rows = judged(proj)
    assert stats.status == "done" and stats.rounds == 2 and stats.failed_by_kind == {"api_error": 5}
    assert len(server.message_batches) == 2 and len(server.message_batch_requests) == 35
    assert len(rows) == 30 and {r[1] for r in rows} == {"ok"} and server.calls == 0


def killed_then_resumed(proj, monkeypatch, create, between=None):
    """The job run with `create` in place of MessageBatches.create until it dies (KeyboardInterrupt), then resumed by
    id with the real one (`between(job_id)` looks at what the kill left first): (job id, the resumed job)."""
    real_create = MessageBatches.create
    monkeypatch.setattr(MessageBatches, "create", create)
    with pytest.raises(KeyboardInterrupt):
        batch.run_batch_job(proj, spec(), poll_seconds=0)
    job_id = proj.reader().execute("SELECT MAX(id) FROM jobs").fetchone()[0]
    if between is not None:
        between(job_id)
    monkeypatch.setattr(MessageBatches, "create", real_create)
    return job_id, batch.run_batch_job(proj, spec(), job_id=job_id, poll_seconds=0)


def test_a_batch_created_but_not_recorded_is_found_not_created_again(proj, monkeypatch):
    real_create = MessageBatches.create

    def create_then_die(self, input_file_id, metadata):
        real_create(self, input_file_id, metadata)
        raise KeyboardInterrupt      # killed after Anthropic made the batch, before the project recorded it

    with FakeOpenAI() as server:
        llm_judge(proj, server)

        def unrecorded(job_id):
            assert [b["remote_id"] for b in batch.batches(proj, job_id)] == [None]

        _, done = killed_then_resumed(proj, monkeypatch, create_then_die, unrecorded)
    assert len(server.message_batches) == 1 and len(server.message_batch_requests) == 30   # found by time and size
    assert done.status == "done" and len(judged(proj)) == 30 and server.calls == 0


def test_a_lost_batch_is_not_confused_with_one_already_recorded(proj, monkeypatch):
    """Parts of eight requests, alike in size, the third created but not recorded: the two recorded before it, made
    within the allowance for Anthropic's clock, are not adopted in its place; the lost one is found, none is made
    twice."""
    monkeypatch.setattr(batch, "MAX_REQUESTS", 8)
    real_create = MessageBatches.create
    made = []

    def create_third_then_die(self, input_file_id, metadata):
        found = real_create(self, input_file_id, metadata)
        made.append(found.id)
        if len(made) == 3:
            raise KeyboardInterrupt
        return found

    with FakeOpenAI() as server:
        llm_judge(proj, server)
        job_id, done = killed_then_resumed(proj, monkeypatch, create_third_then_die)
        remote = [b["remote_id"] for b in batch.batches(proj, job_id)]
    assert remote[:3] == made and len(set(remote)) == len(remote) == 4
    assert len(server.message_batch_requests) == 30 and done.status == "done" and len(judged(proj)) == 30


def test_a_part_recorded_but_never_sent_goes_in_the_next_round(proj, monkeypatch):
    """Killed after the part was recorded and before its batch was created: a new process has no requests to send
    (they were never uploaded anywhere), so the part is closed as not sent and its requests go in the next round."""
    def die(self, input_file_id, metadata):
        raise KeyboardInterrupt

    with FakeOpenAI() as server:
        llm_judge(proj, server)
        job_id, done = killed_then_resumed(proj, monkeypatch, die)
        parts = batch.batches(proj, job_id)
    assert server.message_batches and len(server.message_batch_requests) == 30        # each request sent once
    assert [(b["status"], b["round"]) for b in parts] == [("failed", 1), ("completed", 2)]
    assert done.status == "done" and len(judged(proj)) == 30 and server.calls == 0


def test_cancel_cancels_the_message_batch(proj):
    with FakeOpenAI() as server:
        llm_judge(proj, server)
        server.hold = True
        first = batch.run_batch_job(proj, spec(), wait=False)
        out = batch.cancel(proj, first.job_id)
    assert out["cancelled_batches"] == 1 and server.cancels == list(server.message_batches)


def test_the_key_never_reaches_the_project_even_when_the_reply_echoes_it(proj, tmp_path):
    with FakeOpenAI(lambda body, n: Reply(f"Feedback: fine, {KEY} [RESULT] 4")) as server:
        llm_judge(proj, server)
        batch.run_batch_job(proj, spec(), poll_seconds=0)
    proj.close()
    raw = (tmp_path / "m.rageval").read_bytes() + b"".join(
        p.read_bytes() for p in tmp_path.glob("m.rageval-*") if p.is_file())
    assert KEY.encode() not in raw


def test_a_hostile_results_line_is_counted_never_stored():
    scrub = Scrubber()
    for line in (b"not json", b'{"custom_id": "../etc", "result": {"type": "succeeded"}}',
                 json.dumps({"custom_id": "a" * 64,
                             "result": {"type": "succeeded", "message": {"content": 5}}}).encode(),
                 json.dumps({"custom_id": "a" * 64, "result": {"type": "expired"}}).encode()):
        entry, why = message_batches.parse_result(line, scrub, 1)
        assert entry is None and why


def test_the_command_line_asks_for_message_batches(proj, capsys):
    from rageval_desktop.cli import main

    path = str(proj.path)
    with FakeOpenAI() as server:
        llm_judge(proj, server)
        proj.close()
        assert main(["judge", path, "--run", "v1", "--batch-api", "anthropic"]) == 2     # only with --batch
        assert "--batch-api is for --batch jobs" in capsys.readouterr().err
        assert main(["judge", path, "--run", "v1", "--batch", "--batch-api", "anthropic", "--poll-seconds", "0",
                     "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "done" and out["sent"] == 30 and len(server.message_batches) == 1 and server.calls == 0
