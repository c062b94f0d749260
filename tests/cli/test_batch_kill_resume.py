"""Done-when of the batch work: a 20,000-row batch job against the loopback batch server is killed twice while it
polls, resumed each time with `rageval jobs resume`, and ends with every row judged exactly once; the requests sent
are the rows not in the cache; the cost is at batch prices."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from rageval_desktop.core.importers import import_run
from rageval_desktop.core.jobs.judge_job import run_judge_job
from rageval_desktop.core.jobs.spec import JobSpec
from rageval_desktop.core.judges import prices
from rageval_desktop.core.store.project import Project
from tests.conftest import REPO
from tests.core.test_judging import KEY, llm_judge, make_project
from tests.support.fake_openai import FakeOpenAI

ROWS, CACHED = 20_000, 500


def _cli(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "rageval_desktop.cli", *args], cwd=REPO,
                            env={**os.environ, "JUDGE_KEY": KEY}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _wait(condition, what: str, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def _kill_while_polling(proc: subprocess.Popen, server: FakeOpenAI) -> None:
    polled = server.retrieves
    _wait(lambda: server.retrieves >= polled + 2 or proc.poll() is not None, "the job to poll")
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


@pytest.mark.slow   # heavy: `make test-all` and CI run it
def test_a_20k_row_batch_job_survives_two_kills_and_judges_every_row_once(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY", KEY)
    path = tmp_path / "big.rageval"
    project = make_project(path, n=ROWS)
    head = (tmp_path / "r.jsonl").read_text().splitlines()[:CACHED]
    (tmp_path / "r0.jsonl").write_text("\n".join(head) + "\n")
    import_run(project, tmp_path / "r0.jsonl", "v0")
    with FakeOpenAI() as server:
        llm_judge(project, server)
        run_judge_job(project, JobSpec(run="v0"))      # the same prompts as v1's first 500 rows: in the cache
        live_calls = server.calls
        project.close()
        server.hold = True
        first = _cli("judge", str(path), "--run", "v1", "--batch", "--poll-seconds", "0.05")
        _wait(lambda: server.batches, "the batch")
        _kill_while_polling(first, server)
        with Project.open(path) as p:
            job_id, status = p.reader().execute("SELECT id, status FROM jobs ORDER BY id DESC").fetchone()
            assert status == "interrupted"                     # the open saw its process gone
            assert p.reader().execute("SELECT COUNT(*) FROM judgments WHERE job_id = ?", (job_id,)).fetchone()[0] == 0
        second = _cli("jobs", "resume", str(path), str(job_id), "--poll-seconds", "0.05")
        _kill_while_polling(second, server)
        server.hold = False
        third = _cli("jobs", "resume", str(path), str(job_id), "--poll-seconds", "0.05", "--json")
        out, err = third.communicate(timeout=300)
        assert third.returncode == 0, err
        result = json.loads(out)
        assert server.calls == live_calls                     # no live call for v1: every reply came by batch
        sent = len(server.batch_requests)
        batches_made = len(server.batches)
    assert sent == ROWS - CACHED                              # the requests sent = rows not in the cache
    assert batches_made == 1                                  # resuming never submitted the batch again
    assert result["judged"]["batch_replies"] == ROWS - CACHED and result["judged"]["cache_hits"] == CACHED
    with Project.open(path) as p:
        total, distinct, ok = p.reader().execute(
            "SELECT COUNT(*), COUNT(DISTINCT x.run_row_id), SUM(x.status = 'ok') FROM judgments x "
            "JOIN run_rows rr ON rr.id = x.run_row_id JOIN runs r ON r.id = rr.run_id WHERE r.name = 'v1'").fetchone()
        rows = p.reader().execute(
            "SELECT x.cost_usd, x.prompt_tokens, x.completion_tokens, x.cache_hit FROM judgments x "
            "JOIN run_rows rr ON rr.id = x.run_row_id JOIN runs r ON r.id = rr.run_id WHERE r.name = 'v1'").fetchall()
        half = prices.batch_price(p, "gpt-4o-mini")
        status = p.reader().execute("SELECT status FROM jobs WHERE id = ?", (job_id,)).fetchone()[0]
    assert (total, distinct, ok) == (ROWS, ROWS, ROWS) and status == "done"
    paid = [r for r in rows if not r[3]]
    assert len(paid) == ROWS - CACHED and all(r[0] == 0 for r in rows if r[3])
    assert sum(r[0] for r in paid) == pytest.approx(sum(prices.cost(half, r[1], r[2]) for r in paid))
    assert result["judged"]["cost_usd"] == pytest.approx(sum(r[0] for r in paid))


@pytest.mark.slow      # heavy (2-3 s): make test stays near 90 s; CI runs it
def test_running_the_same_command_after_a_kill_resumes_the_waiting_job_and_pays_once(tmp_path, monkeypatch):
    """Was (issue 28): the re-run uploaded and paid for a new batch of every row, then stopped on 'batch job 1 is
    still waiting' with nothing saved; every later try said the same."""
    rows = 400
    monkeypatch.setenv("JUDGE_KEY", KEY)
    path = tmp_path / "rerun.rageval"
    project = make_project(path, n=rows)
    with FakeOpenAI() as server:
        llm_judge(project, server)
        project.close()
        server.hold = True
        first = _cli("judge", str(path), "--run", "v1", "--batch", "--poll-seconds", "0.05")
        _wait(lambda: server.batches, "the batch")
        _kill_while_polling(first, server)
        server.hold = False
        again = _cli("judge", str(path), "--run", "v1", "--batch", "--poll-seconds", "0.05", "--json")
        out, err = again.communicate(timeout=300)
        assert again.returncode == 0, err
        result = json.loads(out)
        requests, batches_made, live = len(server.batch_requests), len(server.batches), server.calls
    assert batches_made == 1 and requests <= 1.05 * rows and live == 0
    assert result["resumed"] == result["job_id"] == 1 and result["judged"]["batch_replies"] == rows
    with Project.open(path) as p:
        total, distinct = p.reader().execute("SELECT COUNT(*), COUNT(DISTINCT run_row_id) FROM judgments").fetchone()
    assert total == distinct == rows


def test_a_batch_another_process_is_collecting_is_refused_before_anything_is_sent(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY", KEY)
    path = tmp_path / "busy.rageval"
    project = make_project(path, n=50)
    with FakeOpenAI() as server:
        llm_judge(project, server)
        project.close()
        server.hold = True
        first = _cli("judge", str(path), "--run", "v1", "--batch", "--poll-seconds", "0.05")
        try:
            _wait(lambda: server.retrieves >= 2, "the job to poll")
            second = _cli("judge", str(path), "--run", "v1", "--batch", "--poll-seconds", "0.05")
            out, err = second.communicate(timeout=120)
            assert second.returncode == 1 and "is being collected by process" in err and "nothing was sent" in err
            assert len(server.batches) == 1
        finally:
            first.send_signal(signal.SIGKILL)
            first.wait(timeout=30)
