"""The README's "Large jobs" commands, run as written against the loopback Batch API and embeddings server (only
the server's address and the printed job id differ)."""

from __future__ import annotations

import json
import shutil

from rageval_desktop.cli import main
from rageval_desktop.core.jobs import batch
from rageval_desktop.core.judges.registry import add_judge
from rageval_desktop.core.store.project import Project
from tests.cli.test_readme_cost import _block
from tests.support.fake_openai import FakeOpenAI


def test_the_large_jobs_commands_run_as_written(tmp_path, monkeypatch, capsys, demo_file):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-readme-0123456789abcdef")
    monkeypatch.setattr(batch, "POLL_SECONDS", 0)
    shutil.copy(demo_file, tmp_path / "eval.rageval")
    commands = _block("### Large jobs")
    assert [c[1:3] for c in commands] == [["judge", "eval.rageval"], ["judge", "eval.rageval"], ["jobs", "show"],
                                          ["jobs", "resume"], ["prices", "set"], ["golden", "dedupe"]]
    with FakeOpenAI() as server:
        server.embedder = lambda text: [1.0, float(len(text) % 5), float(text.count(" "))]
        with Project.open(tmp_path / "eval.rageval") as p:
            add_judge(p, "gpt-correct", "correctness", "llm", model="gpt-4o-mini", base_url=server.url,
                      api_key_ref="OPENAI_API_KEY")
        job_id = None
        for argv in commands:
            argv = [server.url if a == "http://localhost:8080/v1" else a for a in argv]
            if job_id is not None and argv[1] == "jobs":
                argv[-1] = str(job_id)
            assert main([*argv[1:], "--json"]) == 0, argv
            out = json.loads(capsys.readouterr().out)
            if "--no-wait" in argv:
                job_id = out["job_id"]
                assert out["status"] == "submitted" and out["sent"] == 72
            if argv[1:3] == ["jobs", "resume"]:
                assert out["status"] == "done" and out["judged"]["batch_replies"] == 72
        assert server.calls == 0 and len(server.batch_requests) == 72 and server.embedding_requests
