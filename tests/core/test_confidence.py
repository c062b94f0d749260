"""Issue 47, part 1: a confidence for every judgment, stored with it — the share of repeated asks that agreed (a
stability check), or what a plug-in kind declares — and selective judging reading it instead of the score's distance
from the pass mark."""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter

import numpy as np
import pytest

from rageval_desktop.cli import main
from rageval_desktop.core.jobs.judge_job import run_judge_job
from rageval_desktop.core.jobs.spec import JobSpec
from rageval_desktop.core.judges.kinds import LocalKind, Scored
from rageval_desktop.core.judges.registry import add_judge, get_judge, update_judge
from rageval_desktop.core.review import ratings, selective
from rageval_desktop.core.store.project import Project
from tests.support.capitals import country, short_capitals, unsure
from tests.support.fake_openai import FakeOpenAI, Reply
from tests.support.plugin_kinds import registered

ROWS = 90


@pytest.fixture
def project(tmp_path, monkeypatch, capsys):
    """90 questions; the scripted judge is sure of two in three (always 4) and guesses on the rest (2 or 4)."""
    monkeypatch.setenv("JUDGE_KEY", "sk-test-key")
    path = short_capitals(tmp_path, ROWS)
    capsys.readouterr()
    return path


def guesser():
    seen: Counter = Counter()

    def reply(body: dict, n: int) -> Reply:
        prompt = body["messages"][-1]["content"]
        seen[prompt] += 1
        k = country(prompt)
        draw = int(hashlib.sha256(f"{prompt}|{seen[prompt]}".encode()).hexdigest(), 16) % 2
        return Reply(f"Feedback: ok. [RESULT] {2 + 2 * draw if unsure(k) else 4}")
    return reply


@pytest.mark.slow      # 450 calls through the loopback server (about 3 s)
def test_repeated_asks_give_each_verdict_a_confidence_that_selective_judging_reads(project, capsys):
    with FakeOpenAI(guesser()) as server:
        assert main(["judges", "add", project, "--name", "gpt", "--metric", "correctness", "--kind", "llm",
                     "--model", "m", "--base-url", server.url, "--api-key-env", "JUDGE_KEY"]) == 0
        assert main(["judge", project, "--run", "v1", "--judge", "gpt"]) == 0
        with Project.open(project) as p:
            judge = get_judge(p, "gpt")
            rows = dict(p.reader().execute("SELECT run_row_id, score FROM judgments WHERE judge_id = ?",
                                           (judge.id,)))
            ext = dict(p.reader().execute("SELECT id, external_id FROM run_rows"))
            # the reviewers: the sure rows pass, the guessed ones fail (the judge is right on them by chance)
            for row in rows:
                ratings.rate(p, row, "correctness", "ann", 2.0 if unsure(int(ext[row][1:])) else 4.0)
            assert selective.source(p, judge) == "mark"
            by_mark = selective.selective(p, judge)
            # on the distance from the mark a 4 sits on the mark (confidence 0): the judge decides only its fails
            assert by_mark["runs"]["v1"]["decided"] <= 1 / 3
        capsys.readouterr()
        assert main(["stability", project, "--judge", "gpt", "--run", "v1", "--sample", str(ROWS), "--repeats",
                     "4", "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
    assert out["confidence"]["rows"] == ROWS and out["confidence"]["unanimous"] >= 60
    with Project.open(project) as p:
        judge = get_judge(p, "gpt")
        stored = dict(p.reader().execute("SELECT run_row_id, confidence FROM judgments x JOIN run_rows rr ON "
                                         "rr.id = x.run_row_id JOIN runs r ON r.id = rr.run_id WHERE r.name = 'v1' "
                                         "AND x.judge_id = ?", (judge.id,)))
        sure = [r for r in stored if not unsure(int(ext[r][1:]))]
        assert all(stored[r] == 1.0 for r in sure)                                  # five asks, all alike
        guessed = [stored[r] for r in stored if unsure(int(ext[r][1:]))]
        assert min(guessed) < 1.0 and all(v in {k / 5 for k in range(1, 6)} for v in guessed)
        assert selective.source(p, judge) == "asks"
        found = selective.selective(p, judge)
        assert found["source"] == "asks" and "repeated asks" in found["confidence"]
        s = found["slices"]["all"]
        assert selective.pool(p, judge, "asks").size == ROWS      # the run's rows, not the repeated asks' own
        assert s["level"] is not None and s["bound"] <= 0.1
        assert found["runs"]["v1"]["decided"] >= 0.6             # the sure rows, and guesses that never wavered
        routed = selective.route(p, [judge], [s["level"]], "v1")
        assert all(routed[r] == "gpt" for r in sure)
        # a changed judge's old asks say nothing of it: back to the distance from the mark
        update_judge(p, "gpt", temperature=0.7)
        assert selective.source(p, get_judge(p, "gpt")) == "mark"
    assert main(["selective", project, "--judge", "gpt"]) == 0
    assert "distance from the pass mark" in capsys.readouterr().out


class Declares(LocalKind):
    """A plug-in kind that says how sure it is of each verdict."""
    name = "declares"
    label = "scores with a confidence, for tests"
    reads_passages = False
    confidence_from = "the share of its three sub-models that agreed"

    def __init__(self) -> None:
        self.script: list = []

    def score(self, project, judge, targets):
        for i, _ in enumerate(targets):
            yield Scored(4, "scripted", confidence=self.script[i % len(self.script)])


@pytest.fixture
def declares():
    with registered(Declares()) as kind:
        yield kind


def test_a_plug_in_kind_declares_a_confidence_stored_with_each_verdict(small, declares):
    declares.script = [1.0, 2 / 3]
    add_judge(small, "d", "correctness", "declares")
    assert run_judge_job(small, JobSpec(run="v1", judges=["d"])).ok == 6
    got = [c for (c,) in small.reader().execute("SELECT confidence FROM judgments ORDER BY run_row_id")]
    assert got == pytest.approx([1.0, 2 / 3] * 3)
    judge = get_judge(small, "d")
    assert selective.source(small, judge) == "declared"
    rows = [r for (r,) in small.reader().execute("SELECT run_row_id FROM judgments ORDER BY run_row_id")]
    assert np.allclose(selective.confidences(small, judge, rows, [4.0] * 6), [1.0, 2 / 3] * 3)
    assert "three sub-models" in selective.source_text(small, judge, "declared")


@pytest.mark.parametrize("bad", [1.5, -0.1, math.nan, "sure", True])
def test_a_declared_confidence_off_zero_to_one_is_an_error_row(small, declares, bad):
    declares.script = [0.5, bad]
    add_judge(small, "d", "correctness", "declares")
    stats = run_judge_job(small, JobSpec(run="v1", judges=["d"]))
    found = small.reader().execute("SELECT status, error_kind, raw_output, confidence FROM judgments "
                                   "ORDER BY run_row_id").fetchall()
    assert stats.ok == 3 and [f[0] for f in found] == ["ok", "error"] * 3
    assert all(f[1] == "bad_score" and "confidence" in f[2] and f[3] is None for f in found if f[0] == "error")


def logprob_judge(body: dict, n: int) -> Reply:
    """Sure of two rows in three (the score token 4 at 95%, 2 at 5%); on the rest it leans 55 / 45."""
    import math as m

    prompt = body["messages"][-1]["content"]
    k = country(prompt)
    lean = 0.55 if unsure(k) else 0.95
    alternatives = [["4", m.log(lean)], ["2", m.log(1 - lean)], [" ", m.log(1e-6)]]
    return Reply("Feedback: ok. [RESULT] 4",
                 logprobs=[["Feedback", 0.0, []], [":", 0.0, []], [" ok. [RESULT] ", 0.0, []],
                           ["4", m.log(lean), alternatives]])


@pytest.mark.slow      # 2 x 90 calls and a batch through the loopback server (about 4 s)
def test_log_probabilities_give_each_verdict_a_confidence_live_cached_and_batched(project, capsys):
    from rageval_desktop.core.jobs import batch

    def added(name: str, url: str, *extra: str) -> int:
        return main(["judges", "add", project, "--name", name, "--metric", "correctness", "--kind", "llm", "--model",
                     "m", "--base-url", url, "--api-key-env", "JUDGE_KEY", *extra])

    with FakeOpenAI(logprob_judge) as server:
        assert added("plain", server.url) == 0
        assert added("lp", server.url, "--param", "confidence=logprobs") == 0
        assert added("bad", server.url, "--param", "confidence=vibes") == 1
        assert "comes from 'logprobs'" in capsys.readouterr().err
        assert main(["judge", project, "--run", "v1", "--judge", "plain"]) == 0
        assert server.logprob_requests == 0                       # a judge that did not ask sends nothing new
        assert main(["judge", project, "--run", "v1", "--judge", "lp"]) == 0
        assert server.logprob_requests == ROWS                    # another request: not served from plain's cache
        with Project.open(project) as p:
            ext = dict(p.reader().execute("SELECT id, external_id FROM run_rows"))

            def stored(name: str) -> dict[int, float | None]:
                return dict(p.reader().execute(
                    "SELECT run_row_id, confidence FROM judgments WHERE judge_id = ?", (get_judge(p, name).id,)))

            assert set(stored("plain").values()) == {None}
            got = stored("lp")
            assert all(got[r] == pytest.approx(0.55 if unsure(int(ext[r][1:])) else 0.95, abs=1e-4) for r in got)
            assert selective.source(p, get_judge(p, "lp")) == "logprobs"
        # the same request again (a clone of the judge): served from the cache, with the same confidences
        calls = server.calls
        assert added("lp-again", server.url, "--param", "confidence=logprobs") == 0
        assert main(["judge", project, "--run", "v1", "--judge", "lp-again"]) == 0
        assert server.calls == calls
        with Project.open(project) as p:
            assert stored_of(p, "lp-again") == stored_of(p, "lp")
            # through the Batch API: asked in the request lines, read from the replies
            update_judge(p, "lp-again", model="m2")
            stats = batch.run_batch_job(p, JobSpec(run="v1", judges=["lp-again"], batch=True), poll_seconds=0)
            assert stats.merged == ROWS and server.batch_requests
            assert all(r["body"]["logprobs"] is True for r in server.batch_requests)
            batched = stored_of(p, "lp-again")
            assert sorted(v for v in batched.values() if v is not None) == sorted(stored_of(p, "lp").values())


def stored_of(p, name: str) -> list[float | None]:
    rows = p.reader().execute("SELECT x.run_row_id, x.confidence FROM judgments x WHERE x.judge_id = ? AND x.id IN "
                              "(SELECT MAX(id) FROM judgments WHERE judge_id = ? GROUP BY run_row_id)",
                              (get_judge(p, name).id, get_judge(p, name).id)).fetchall()
    return {r: c for r, c in rows}


def test_the_confidence_is_read_at_the_token_that_states_the_verdict():
    import math as m

    from rageval_desktop.core.judges.parsers import Verdict, logprob_confidence

    v4 = Verdict(4.0, None, None)
    tokens = [["[RESULT]", 0.0, []], [" 4", m.log(0.7), [[" 4", m.log(0.7)], ["5", m.log(0.2)], ["2", m.log(0.1)]]]]
    assert logprob_confidence(tokens, v4, 1, 5, 4) == pytest.approx(0.9)          # 4 and 5 pass; 2 fails
    yes = [["{\"is_correct\": ", 0.0, []], ["true", m.log(0.8), [["true", m.log(0.8)], ["false", m.log(0.2)]]]]
    assert logprob_confidence(yes, Verdict(1.0, "correct", None), 0, 1, 1) == pytest.approx(0.8)
    assert logprob_confidence([["4", 0.0, []]], v4, 1, 5, 4) == 1.0                # no alternative sent
    assert logprob_confidence([["maybe", 0.0, []]], v4, 1, 5, 4) is None           # no token states the score
    assert logprob_confidence(None, v4, 1, 5, 4) is None
    # a server's log-probabilities above 0 (impossible; 1e308 overflowed exp: the row became an internal error)
    astray = [[" 4", 1e308, [[" 4", 1e308], ["2", 0.5]]]]
    assert logprob_confidence(astray, v4, 1, 5, 4) == pytest.approx(0.5)
