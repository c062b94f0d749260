"""The judging CLI contract: judges add/list, judge --json keys and exit codes, prices, jobs."""

from __future__ import annotations

import asyncio
import json

import pytest

from rageval_desktop.cli import main
from rageval_desktop.core.base.limiter import AdaptiveLimiter
from tests.core.test_judging import KEY, make_project
from tests.support.fake_openai import FakeOpenAI, Reply


@pytest.fixture
def path(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY", KEY)
    p = tmp_path / "c.rageval"
    make_project(p).close()
    return p


def out_json(capsys):
    return json.loads(capsys.readouterr().out)


def test_judges_add_list_and_judge_json(path, capsys):
    with FakeOpenAI() as server:
        assert main(["judges", "add", str(path), "--name", "j", "--metric", "correctness", "--kind", "llm",
                     "--model", "gpt-4o-mini", "--base-url", server.url, "--api-key-env", "JUDGE_KEY",
                     "--concurrency", "4", "--json"]) == 0
        added = out_json(capsys)
        assert added["api_key_ref"] == "env:JUDGE_KEY" and added["params"]["concurrency"] == 4
        assert main(["judges", "list", str(path), "--json"]) == 0
        assert [j["name"] for j in out_json(capsys)] == ["j"]
        assert main(["judge", str(path), "--run", "v1", "--slice", "easy", "--json"]) == 0
        stats = out_json(capsys)
        assert {"rows", "ok", "unparsed", "errors", "calls", "cache_hits", "cost_usd", "seconds"} <= set(stats)
        assert (stats["rows"], stats["ok"], stats["calls"]) == (10, 10, 10)   # only the easy slice
        assert main(["judge", str(path), "--run", "v1", "--json", "--only-missing"]) == 0
        assert out_json(capsys)["rows"] == 10                                   # the other 10
    assert main(["jobs", "list", str(path), "--json"]) == 0
    assert [j["status"] for j in out_json(capsys)] == ["done", "done"]


def test_fatal_error_exits_1_with_a_plain_message(path, capsys):
    with FakeOpenAI(lambda b, n: Reply(status=401, error={"message": "bad key", "type": "auth",
                                                          "code": "invalid_api_key"})) as server:
        main(["judges", "add", str(path), "--name", "j", "--metric", "correctness", "--kind", "llm", "--model", "m",
              "--base-url", server.url, "--api-key-env", "JUDGE_KEY"])
        capsys.readouterr()
        assert main(["judge", str(path), "--run", "v1", "--json"]) == 1
    captured = capsys.readouterr()
    assert captured.err.splitlines()[0].startswith("error: the job stopped: the endpoint refused the API key")
    assert json.loads(captured.out)["stopped"] == "fatal"
    assert KEY not in captured.out + captured.err


def test_unparsed_rows_still_exit_0(path, capsys):
    with FakeOpenAI(lambda b, n: Reply("no score here")) as server:
        main(["judges", "add", str(path), "--name", "j", "--metric", "correctness", "--kind", "llm", "--model", "m",
              "--base-url", server.url])
        capsys.readouterr()
        assert main(["judge", str(path), "--run", "v1", "--json"]) == 0
        stats = out_json(capsys)
        assert (stats["unparsed"], stats["repair_retries"], stats["calls"] - stats["retries"]) == (20, 20, 40), stats
        # run again: nothing to do, and it says which flag would redo the unparsed rows (issue 45)
        assert main(["judge", str(path), "--run", "v1"]) == 0
        said = capsys.readouterr().out
        assert "0 to judge (20 already judged, 20 of them with a reply that never parsed: redo those with " \
               "--redo-unparsed)" in said
        # --only-failed redoes exactly the unparsed rows
        server.responder = lambda b, n: Reply("Feedback: fine [RESULT] 5")
        assert main(["judge", str(path), "--run", "v1", "--only-failed", "--no-cache", "--json"]) == 0
        assert out_json(capsys)["ok"] == 20


def test_judges_add_refuses_a_key_in_place_of_a_name(path, capsys):
    assert main(["judges", "add", str(path), "--name", "j", "--metric", "correctness", "--kind", "llm",
                 "--model", "m", "--api-key-env", "sk-live-abcdef1234567890"]) == 1
    assert "never the key itself" in capsys.readouterr().err


def test_prices_set_and_list(path, capsys):
    assert main(["prices", "set", str(path), "my-model", "--input", "1.5", "--output", "2", "--json"]) == 0
    assert out_json(capsys)["my-model"] == {"input_per_mtok": 1.5, "output_per_mtok": 2.0,
                                            "batch_input_per_mtok": 0.75, "batch_output_per_mtok": 1.0,
                                            "batch_set": False}
    assert main(["prices", "set", str(path), "my-model", "--input", "1.5", "--output", "2", "--batch-input", "0.5",
                 "--batch-output", "1.2", "--json"]) == 0
    assert out_json(capsys)["my-model"] == {"input_per_mtok": 1.5, "output_per_mtok": 2.0,
                                            "batch_input_per_mtok": 0.5, "batch_output_per_mtok": 1.2,
                                            "batch_set": True}


def test_rpm_cap_spaces_out_starts(monkeypatch):
    """On a fake clock (issue 78: measured on the wall clock the gaps were 88 ms under load, and the test failed a
    fresh clone's `make test`): each start is scheduled one interval after the last."""
    import types

    from rageval_desktop.core.base import limiter as limiter_module

    clock = types.SimpleNamespace(now=100.0)
    clock.monotonic = lambda: clock.now

    async def sleep(seconds: float) -> None:
        clock.now += seconds

    monkeypatch.setattr(limiter_module, "time", clock)
    monkeypatch.setattr(limiter_module, "asyncio", types.SimpleNamespace(
        sleep=sleep, Condition=asyncio.Condition, wait_for=asyncio.wait_for))

    async def go() -> list[float]:
        limiter = AdaptiveLimiter(8, rpm=600)     # one start every 0.1 s
        starts = []
        for _ in range(5):
            ticket = await limiter.acquire()
            starts.append(clock.now)
            await limiter.release("ok", ticket)
            clock.now += 0.03                      # the call took 30 ms: the next start still waits its turn
        return starts

    starts = asyncio.run(go())
    assert [round(b - a, 9) for a, b in zip(starts, starts[1:], strict=False)] == [0.1] * 4


def test_limiter_backs_off_and_climbs_back():
    async def go() -> tuple[float, float, float]:
        limiter = AdaptiveLimiter(16)
        tickets = [await limiter.acquire() for _ in range(12)]
        await limiter.release("overload", tickets[0])        # refused with 12 in flight: the server admits ~11
        after_429 = limiter.limit
        await limiter.release("timeout", tickets[1])
        after_timeout = limiter.limit
        for ticket in tickets[2:]:
            await limiter.release("ok", ticket)
        return after_429, after_timeout, limiter.limit

    after_429, after_timeout, recovered = asyncio.run(go())
    assert after_429 == 11.0
    assert after_timeout == 5.5
    assert recovered > after_timeout


def test_judge_dry_run_sends_nothing_and_prints_the_cost(tmp_path, capsys):
    import json

    from rageval_desktop.cli import main
    from tests.support.fake_openai import FakeOpenAI

    project = tmp_path / "d.rageval"
    assert main(["demo", str(project)]) == 0
    with FakeOpenAI() as server:
        assert main(["judges", "add", str(project), "--name", "ans", "--metric", "answered", "--kind", "llm",
                     "--model", "gpt-4o-mini", "--base-url", server.url]) == 0
        capsys.readouterr()
        assert main(["judge", str(project), "--run", "v1", "--judge", "ans", "--dry-run", "--json"]) == 0
        est = json.loads(capsys.readouterr().out)
        assert server.calls == 0
    assert est["calls"] == 72 and est["judges"][0]["judge"] == "ans" and est["cost_usd"] > 0
    assert est["tokenizer"] == "MiniLM WordPiece tokenizer"


def test_a_missing_key_stops_the_job_before_any_work_and_the_dry_run_says_so(tmp_path, capsys, monkeypatch):
    """Was: the offline judges ran for 49 s, then the job failed on the unset key; the dry run priced the judge
    without a word about the key (issue 31)."""
    monkeypatch.delenv("NOPE_KEY", raising=False)
    path = str(tmp_path / "k.rageval")
    assert main(["demo", path]) == 0
    assert main(["judges", "add", path, "--name", "fresh", "--metric", "correctness", "--kind", "lexical"]) == 0
    assert main(["judges", "add", path, "--name", "gpt", "--metric", "correctness", "--kind", "llm", "--model", "m",
                 "--api-key-env", "NOPE_KEY"]) == 0
    capsys.readouterr()
    assert main(["judge", path, "--run", "v2", "--dry-run"]) == 0
    captured = capsys.readouterr()
    assert "cannot start: judge 'gpt': the environment variable NOPE_KEY" in captured.out
    assert "set NOPE_KEY in the environment" in captured.err
    assert main(["judge", path, "--run", "v2"]) == 1
    assert "cannot start: judge 'gpt'" in capsys.readouterr().err
    import sqlite3

    conn = sqlite3.connect(path)
    fresh = conn.execute("SELECT COUNT(*) FROM judgments x JOIN judges j ON j.id = x.judge_id "
                         "WHERE j.name = 'fresh'").fetchone()[0]
    assert fresh == 0                                   # the local judge did not run first
    conn.close()
