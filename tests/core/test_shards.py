"""Judge jobs for outside engines (issue 50): `--export-shards` writes the job as OpenAI batch request shards, a
runner that reads them as vLLM's run_batch does answers them against the loopback server, and `--import-results`
brings the replies back — any order, any subset, twice, after a kill at any step — judging each row once and
calling nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from rageval_desktop.cli import main
from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.jobs import shards
from rageval_desktop.core.jobs.judge_job import run_judge_job
from rageval_desktop.core.jobs.spec import JobSpec
from rageval_desktop.core.judges.registry import add_judge
from rageval_desktop.core.store.project import Project
from tests.conftest import REPO
from tests.core.test_judging import KEY, llm_judge, make_project
from tests.support.batch_runner import run as run_batch
from tests.support.fake_openai import FakeOpenAI, Reply


@pytest.fixture
def setup(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY", KEY)
    project = make_project(tmp_path / "s.rageval", n=20)
    with FakeOpenAI() as server:
        llm_judge(project, server)
        yield project, server, tmp_path
    project.close()


def judged(project: Project) -> list[tuple]:
    return project.reader().execute("SELECT run_row_id, status, score FROM judgments ORDER BY run_row_id").fetchall()


def answer(folder, names, server, tmp_path, fail_every=0) -> list:
    outs = []
    for name in names:
        out = tmp_path / f"results-{name}"
        run_batch(str(folder / name), str(out), server.url, fail_every)
        outs.append(out)
    return outs


def test_export_answer_import_in_any_order_and_subset_twice_judges_each_row_once(setup):
    project, server, tmp_path = setup
    folder = tmp_path / "shards"
    stats = shards.export_shards(project, JobSpec(run="v1"), folder, shard_requests=8)
    assert (stats.requests, stats.cached, stats.shards) == (20, 0, ["shard-00001.jsonl", "shard-00002.jsonl",
                                                                     "shard-00003.jsonl"])
    assert server.calls == 0                                      # exporting sends nothing
    line = json.loads((folder / "shard-00001.jsonl").read_text().splitlines()[0])
    assert line["method"] == "POST" and line["url"] == "/v1/chat/completions" and len(line["custom_id"]) == 64
    assert line["body"]["model"] == "gpt-4o-mini" and "<reference>" in line["body"]["messages"][-1]["content"]
    outs = answer(folder, stats.shards, server, tmp_path)
    assert server.calls == 20
    # a subset first (the last shard), then everything in reverse order, then everything again
    first = shards.import_results(project, [outs[2]], JobSpec(run="v1"))
    assert (first.stored, first.known) == (4, 0) and first.judged["judge"].job.ok == 4
    assert first.judged["judge"].unanswered == 16 and len(judged(project)) == 4
    again = shards.import_results(project, outs[::-1], JobSpec(run="v1"))
    assert (again.stored, again.known) == (16, 4) and again.judged["judge"].job.ok == 16
    twice = shards.import_results(project, outs, JobSpec(run="v1"))
    assert (twice.stored, twice.known) == (0, 20) and twice.judged["judge"] == shards.Offline(None, 0)
    rows = judged(project)
    assert len(rows) == 20 and {r[1] for r in rows} == {"ok"} and {r[2] for r in rows} == {4.0}
    assert len({r[0] for r in rows}) == 20                        # one judgment a row
    assert server.calls == 20                                     # the runner's: importing and judging call nothing
    cost = project.reader().execute("SELECT SUM(cost_usd), SUM(cache_hit) FROM judgments").fetchone()
    assert cost == (0.0, 20)                                      # the engine's cost is not the app's to know


def test_exporting_again_writes_only_what_is_not_answered(setup):
    project, server, tmp_path = setup
    folder = tmp_path / "shards"
    stats = shards.export_shards(project, JobSpec(run="v1"), folder, shard_requests=10)
    outs = answer(folder, stats.shards[:1], server, tmp_path)
    shards.import_results(project, outs, JobSpec(run="v1"))
    again = shards.export_shards(project, JobSpec(run="v1"), folder, shard_requests=10)
    assert (again.requests, again.shards) == (10, ["shard-00001.jsonl"])
    assert not (folder / "shard-00002.jsonl").exists()
    with pytest.raises(RagevalError, match="holds the shards of another job"):
        shards.export_shards(project, JobSpec(run="v1", slice_tag="easy"), folder)  # same judges, another job?
    assert json.loads((folder / "_manifest.json").read_text())["requests"] == 10


def test_failed_and_hostile_lines_are_counted_and_stored_nowhere(setup):
    project, server, tmp_path = setup
    folder = tmp_path / "shards"
    stats = shards.export_shards(project, JobSpec(run="v1"), folder)
    [out] = answer(folder, stats.shards, server, tmp_path, fail_every=5)
    good = json.loads(out.read_text().splitlines()[0])
    hostile = [b"not json", b"[1, 2]", json.dumps({"custom_id": "x" * 64, "response": good["response"]}).encode(),
               json.dumps({"custom_id": good["custom_id"], "response": "a string"}).encode(),
               json.dumps({"custom_id": good["custom_id"], "response": {"status_code": 500, "body": {}}}).encode(),
               json.dumps({"custom_id": good["custom_id"], "response": {"status_code": 200, "body": {
                   "choices": [{"message": {"content": 42}}]}}}).encode()]
    with out.open("ab") as f:
        f.write(b"\n".join(hostile) + b"\n")
    result = shards.import_results(project, [out], JobSpec(run="v1"))
    assert result.stored == 16 and result.failed == 4 + len(hostile)
    assert result.failed_by_kind == {"engine_error": 4, "bad_response": 5, "http_500": 1}
    assert result.judged["judge"].job.ok == 16 and result.judged["judge"].unanswered == 4


def test_a_reply_stating_impossible_token_counts_is_kept_without_them(setup):
    """2**70 prompt tokens (found by fuzzing results files) stopped the import with an internal error: SQLite cannot
    store the number. A count no reply can hold is no count: the reply is kept, its usage unknown."""
    project, server, tmp_path = setup
    folder = tmp_path / "shards"
    stats = shards.export_shards(project, JobSpec(run="v1"), folder)
    [out] = answer(folder, stats.shards, server, tmp_path)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    for line, (prompt, completion) in zip(lines, [(2**70, 5), (-3, 2**31), (True, 1.5), ("7", None)], strict=False):
        line["response"]["body"]["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion}
    out.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = shards.import_results(project, [out], JobSpec(run="v1"))
    assert result.stored == 20 and result.judged["judge"].job.ok == 20
    stated = project.reader().execute("SELECT prompt_tokens, completion_tokens FROM llm_cache WHERE key = ?",
                                      (lines[0]["custom_id"],)).fetchone()
    assert stated == (None, 5)


def test_a_live_reply_stating_impossible_token_counts_is_judged_without_them(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY", KEY)
    project = make_project(tmp_path / "t.rageval", n=3)
    body = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "Feedback: fine. [RESULT] 4"}}],
            "usage": {"prompt_tokens": 2**70, "completion_tokens": 3, "total_tokens": 2**70 + 3}}
    with FakeOpenAI(lambda b, n: Reply(raw_body=json.dumps(body).encode(),
                                       headers={"Content-Type": "application/json"})) as server:
        llm_judge(project, server)
        stats = run_judge_job(project, JobSpec(run="v1"))
    assert stats.ok == 3 and stats.stopped is None
    # counted as a reply that states no prompt tokens is (the write failed on 2**70: "Python int too large"): its
    # tokens unknown, not 0
    assert project.reader().execute("SELECT DISTINCT prompt_tokens, completion_tokens FROM judgments").fetchall() \
        == [(None, None)]
    project.close()


def test_an_unparsed_reply_is_unparsed_with_no_repair_call(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY", KEY)
    project = make_project(tmp_path / "u.rageval", n=4)
    with FakeOpenAI(lambda body, n: Reply("no score here")) as server:
        llm_judge(project, server)
        stats = shards.export_shards(project, JobSpec(run="v1"), tmp_path / "sh")
        outs = answer(tmp_path / "sh", stats.shards, server, tmp_path)
        calls = server.calls
        result = shards.import_results(project, outs, JobSpec(run="v1"))
        assert server.calls == calls == 4                          # no repair request was sent
    assert result.judged["judge"].job.unparsed == 4
    assert {r[1] for r in judged(project)} == {"unparsed"}
    project.close()


def test_a_kill_at_any_step_loses_nothing_and_stores_nothing_twice(setup, monkeypatch):
    """Killed while writing a shard (its part file is left), while keeping replies (after the first chunk) and
    while judging: the same commands again end where an uninterrupted round trip ends."""
    project, server, tmp_path = setup
    folder = tmp_path / "shards"
    real_replace = os.replace
    calls = {"n": 0}

    def dies_on_the_second_shard(src, dst):    # (the first replace is the manifest)
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        real_replace(src, dst)

    monkeypatch.setattr(shards.os, "replace", dies_on_the_second_shard)
    with pytest.raises(KeyboardInterrupt):
        shards.export_shards(project, JobSpec(run="v1"), folder, shard_requests=8)
    assert sorted(p.name for p in folder.iterdir()) == [".shard-00002.jsonl.part", "_manifest.json",
                                                        "shard-00001.jsonl"]
    assert json.loads((folder / "_manifest.json").read_text())["complete"] is False
    monkeypatch.setattr(shards.os, "replace", real_replace)
    stats = shards.export_shards(project, JobSpec(run="v1"), folder, shard_requests=8)
    assert stats.requests == 20 and sorted(p.name for p in folder.iterdir()) == [
        "_manifest.json", "shard-00001.jsonl", "shard-00002.jsonl", "shard-00003.jsonl"]
    outs = answer(folder, stats.shards, server, tmp_path)
    # killed after the first chunk of replies was kept
    monkeypatch.setattr(shards, "IMPORT_CHUNK", 5)
    real_keep, kept = shards.keep_replies, {"n": 0}

    def dies_after_one(project_, entries, stats_):
        kept["n"] += 1
        if kept["n"] == 2:
            raise KeyboardInterrupt
        real_keep(project_, entries, stats_)

    monkeypatch.setattr(shards, "keep_replies", dies_after_one)
    with pytest.raises(KeyboardInterrupt):
        shards.import_results(project, outs, JobSpec(run="v1"))
    monkeypatch.setattr(shards, "keep_replies", real_keep)
    assert project.reader().execute("SELECT COUNT(*) FROM llm_cache").fetchone()[0] == 5
    # killed while judging
    from rageval_desktop.core.jobs import judge_job

    real_record, recorded = judge_job.JudgeJob.record, {"n": 0}

    def dies_while_judging(self, *args, **kwargs):
        recorded["n"] += 1
        if recorded["n"] == 7:
            raise KeyboardInterrupt
        return real_record(self, *args, **kwargs)

    monkeypatch.setattr(judge_job.JudgeJob, "record", dies_while_judging)
    with pytest.raises(KeyboardInterrupt):
        shards.import_results(project, outs, JobSpec(run="v1"))
    monkeypatch.setattr(judge_job.JudgeJob, "record", real_record)
    done = shards.import_results(project, outs, JobSpec(run="v1"))
    assert done.stored == 0 and done.known == 20
    rows = judged(project)
    assert len(rows) == 20 and len({r[0] for r in rows}) == 20 and {r[1] for r in rows} == {"ok"}
    assert server.calls == 20


def test_multi_call_judges_are_left_to_a_live_run(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY", KEY)
    project = make_project(tmp_path / "m.rageval", n=3)
    with FakeOpenAI() as server:
        llm_judge(project, server, name="cit", metric="citation_support")
        with pytest.raises(RagevalError, match="only LLM judges of single-call metrics"):
            shards.export_shards(project, JobSpec(run="v1"), tmp_path / "sh")
        llm_judge(project, server)
        stats = shards.export_shards(project, JobSpec(run="v1"), tmp_path / "sh")
    assert stats.requests == 3 and stats.live == 3
    project.close()


@pytest.mark.slow
def test_the_command_line_round_trip_as_a_team_would_run_it(tmp_path, monkeypatch, capsys):
    """`rageval judge --export-shards`, the runner in its own process per shard, `--import-results` with a glob's
    files; the project's judgments are the live job's, and the summary says what is left."""
    monkeypatch.setenv("JUDGE_KEY", KEY)
    project = make_project(tmp_path / "c.rageval", n=12)
    path = str(project.path)
    with FakeOpenAI() as server:
        llm_judge(project, server)
        project.close()
        assert main(["judge", path, "--run", "v1", "--export-shards", str(tmp_path / "sh"), "--shard-size", "5"]) == 0
        out = capsys.readouterr().out
        assert "wrote 12 requests in 3 shard(s)" in out and "--import-results results-*.jsonl" in out
        for i in (1, 2, 3):
            subprocess.run([sys.executable, "-m", "tests.support.batch_runner", "-i",
                            str(tmp_path / "sh" / f"shard-0000{i}.jsonl"), "-o", str(tmp_path / f"results-{i}.jsonl"),
                            "--url", server.url], cwd=REPO, check=True, timeout=60)
        files = [str(tmp_path / f"results-{i}.jsonl") for i in (3, 1)]
        assert main(["judge", path, "--run", "v1", "--import-results", *files]) == 0
        out = capsys.readouterr().out
        assert "kept 7 replies from 2 file(s) (0 kept before)" in out      # shards of 5, 5 and 2: the last and first
        assert "judge: 7 to judge (0 already judged): 7 ok, 0 unparsed, 0 errors; 0 calls; 5 rows still" in out
        assert main(["judge", path, "--run", "v1", "--import-results", str(tmp_path / "results-2.jsonl"), *files,
                     "--json"]) == 0
        result = json.loads(capsys.readouterr().out)
        assert (result["stored"], result["known"], result["judged"]["judge"]["job"]["ok"]) == (5, 7, 5)
        assert server.calls == 12
        assert main(["judge", path, "--run", "v1", "--import-results", "nope.jsonl"]) == 1
        assert "no such file: nope.jsonl" in capsys.readouterr().err
        assert main(["judge", path, "--run", "v1", "--import-results", files[0], "--batch"]) == 2


def test_a_reply_longer_than_any_verdict_is_not_kept_live_or_from_a_results_file(setup, tmp_path, monkeypatch):
    """A server gone astray answered 2 MB a row: every reply was kept, twice (the cache and the judgment)."""
    project, server, _ = setup
    huge = "[RESULT] 4 " + "x" * 2_000_000
    with FakeOpenAI(lambda b, n: Reply(huge)) as astray:
        llm_judge(project, astray, name="astray", max_retries=0, timeout=60.0)   # (2 MB a reply: not a race)
        stats = run_judge_job(project, JobSpec(run="v1", judges=["astray"]))
    assert stats.errors_by_kind == {"too_long": 20} and stats.ok == 0
    longest = project.reader().execute("SELECT MAX(LENGTH(raw_output)) FROM judgments").fetchone()[0]
    assert longest < 1000 and "more than the 1,000,000 a judge's verdict may take" in project.reader().execute(
        "SELECT raw_output FROM judgments LIMIT 1").fetchone()[0]
    assert project.reader().execute("SELECT COUNT(*) FROM llm_cache").fetchone()[0] == 0
    folder = tmp_path / "shards"
    exported = shards.export_shards(project, JobSpec(run="v1", judges=["judge"]), folder)
    [out] = answer(folder, exported.shards, server, tmp_path)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    lines[0]["response"]["body"]["choices"][0]["message"]["content"] = huge
    out.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = shards.import_results(project, [out])
    assert result.stored == 19 and result.failed_by_kind == {"too_long": 1}


def _forge(results, score: int) -> None:
    """Every reply of a results file rewritten to give `score` (what a planted file would say)."""
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    for line in lines:
        line["response"]["body"]["choices"][0]["message"]["content"] = f"Planted. [RESULT] {score}"
    results.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_results_answer_only_what_an_export_of_that_run_asked(setup, tmp_path, capsys):
    """Issue 74: `--import-results` kept every well-formed line in the request cache whatever run it named and
    whether or not any export wrote its key: results "for v1" answering v2's requests (rendered from a copy of the
    project) were kept, and a later live job of v2 took all of them from the cache (mean 5.0) saying only "from
    cache"; 72 random keys were kept the same way."""
    import shutil

    from rageval_desktop.core.importers import import_run

    project, server, _ = setup
    rows = [{"id": f"g{i}", "question": f"Question number {i}?", "answer": f"It is {i}, surely.",
             "retrieved": [{"chunk_id": f"c{i}", "text": f"Chunk {i}.", "score": 0.9}]} for i in range(20)]
    (tmp_path / "v2.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    import_run(project, tmp_path / "v2.jsonl", "v2")
    project.close()
    shutil.copy(project.path, tmp_path / "copy.rageval")      # the attacker's copy: its exports are not the project's
    copy = Project.open(tmp_path / "copy.rageval")
    stolen = shards.export_shards(copy, JobSpec(run="v2"), tmp_path / "theirs")
    copy.close()
    [planted] = answer(tmp_path / "theirs", stolen.shards, server, tmp_path)
    _forge(planted, 5)
    rng = __import__("random").Random(0)
    line = json.loads(planted.read_text().splitlines()[0])
    with planted.open("a") as f:                                # keys no export ever wrote
        for _ in range(72):
            line["custom_id"] = "".join(rng.choice("0123456789abcdef") for _ in range(64))
            f.write(json.dumps(line) + "\n")
    project = Project.open(tmp_path / "s.rageval")
    shards.export_shards(project, JobSpec(run="v1"), tmp_path / "ours")       # v1's own export: no help to v2
    for run in ("v1", "v2"):
        found = shards.import_results(project, [planted], JobSpec(run=run))
        assert (found.stored, found.refused) == (0, 92), run
        assert found.numbered[str(planted)]["refused"] == list(range(1, 93))
    cached = project.reader().execute("SELECT COUNT(*) FROM llm_cache").fetchone()[0]
    assert cached == 0
    calls = server.calls
    job = run_judge_job(project, JobSpec(run="v2"))
    assert job.ok == 20 and server.calls == calls + 20                          # asked, not taken from a plant
    scores = project.reader().execute("SELECT DISTINCT j.score FROM judgments j JOIN run_rows r ON r.id = "
                                      "j.run_row_id JOIN runs u ON u.id = r.run_id WHERE u.name = 'v2'").fetchall()
    assert scores == [(4.0,)]
    path = str(project.path)
    project.close()
    assert main(["judge", path, "--run", "v2", "--import-results", str(planted)]) == 0
    err = capsys.readouterr().err
    assert "refused 92 repl(ies) to requests no export of run 'v2' wrote" in err and "lines 1-92" in err


def test_imported_replies_are_scrubbed_of_the_judges_key_and_any_depth_is_read(setup, tmp_path):
    """Issue 74: the live path scrubbed the judge's key from replies; the results import did not (a proxy that
    echoes it: 189 cells, 315 copies). A line nested 200,000 deep was an internal error (RecursionError); bad lines
    were counted, never numbered."""
    project, server, _ = setup
    stats = shards.export_shards(project, JobSpec(run="v1"), tmp_path / "sh")
    [out] = answer(tmp_path / "sh", stats.shards, server, tmp_path)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    for line in lines:
        message = line["response"]["body"]["choices"][0]["message"]
        message["content"] = f"Authorization: Bearer {KEY} echoed. " + message["content"]
        line["response"]["request_id"] = f"req-{KEY}"
    out.write_text("".join(json.dumps(line) + "\n" for line in lines) + "[" * 200_000 + "]" * 200_000 + "\n")
    found = shards.import_results(project, [out], JobSpec(run="v1"))
    assert found.stored == 20 and found.failed_by_kind == {"bad_response": 1}
    assert found.numbered[str(out)] == {"bad_response": [21]}
    dump = "\n".join(str(r) for r in project.reader().execute("SELECT * FROM llm_cache").fetchall())
    dump += "\n".join(str(r) for r in project.reader().execute("SELECT raw_output, rationale, request_id "
                                                                "FROM judgments").fetchall())
    assert KEY not in dump and found.judged["judge"].job.ok == 20


def test_outside_engines_without_surprises(setup, monkeypatch, capsys):
    """Issue 76.6: Ray Data's read_json read manifest.json as a request; two judges' models shared a shard (the Batch
    API and vLLM's run_batch take one model a file) and the printed --model MODEL matched neither; results that were
    all errors were imported with exit 0; importing demanded the judge's key though it calls nothing."""
    project, server, tmp_path = setup
    add_judge(project, "other", "correctness", "llm", model="other-model", base_url=server.url,
              api_key_ref="JUDGE_KEY")
    folder = tmp_path / "shards"
    path = str(project.path)
    project.close()
    assert main(["judge", path, "--run", "v1", "--export-shards", str(folder), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    by_model = {}
    for shard in stats["shards"]:
        models = {json.loads(line)["body"]["model"] for line in (folder / shard).read_text().splitlines()}
        assert len(models) == 1                                   # one model a shard
        by_model.setdefault(models.pop(), []).append(shard)
    assert set(by_model) == {"gpt-4o-mini", "other-model"} and stats["models"] == {
        s: m for m, shards_of in by_model.items() for s in shards_of}
    assert sorted(p.name for p in folder.iterdir() if p.suffix in (".json", ".jsonl")) == sorted(
        ["_manifest.json", *stats["shards"]])                     # readers of the folder skip "_" files
    assert main(["judge", path, "--run", "v1", "--export-shards", str(tmp_path / "again")]) == 0
    text = capsys.readouterr().out
    assert "--model gpt-4o-mini" in text and "--model other-model" in text and "--model MODEL" not in text
    # every line an error: not a success
    errors = tmp_path / "errors.jsonl"
    errors.write_text("".join(json.dumps({"custom_id": json.loads(line)["custom_id"], "response": {
        "status_code": 404, "body": {"error": {"message": "model not found"}}}, "error": None}) + "\n"
        for line in (folder / stats["shards"][0]).read_text().splitlines()))
    assert main(["judge", path, "--run", "v1", "--import-results", str(errors)]) == 1
    assert "error: no reply kept" in capsys.readouterr().err
    # replies imported and judged with no key in the environment: nothing is called
    outs = answer(folder, stats["shards"], server, tmp_path)
    monkeypatch.delenv("JUDGE_KEY")
    calls = server.calls
    assert main(["judge", path, "--run", "v1", "--import-results", *map(str, outs)]) == 0
    assert server.calls == calls
    with Project.open(path, read_only=True) as p:
        assert p.reader().execute("SELECT COUNT(*) FROM judgments WHERE status = 'ok'").fetchone()[0] == 40
