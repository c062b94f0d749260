"""docs/recipes/ray_data_judge.py — the outside-engines recipe for Ray Data LLM — run with Ray Data itself (issue 76):
the shards a judge job exports, answered by Ray against the loopback server and imported back, judge every row as the
app's own live job does, and the manifest is never read as a request."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from rageval_desktop.core.jobs import shards
from rageval_desktop.core.jobs.judge_job import run_judge_job
from rageval_desktop.core.jobs.spec import JobSpec
from rageval_desktop.core.store.project import Project
from tests.conftest import REPO
from tests.core.test_judging import KEY, llm_judge, make_project
from tests.support.fake_openai import FakeOpenAI, Reply

pytestmark = pytest.mark.slow

RECIPE = REPO / "docs" / "recipes" / "ray_data_judge.py"


def graded(body: dict, n: int) -> Reply:
    """A score that depends on the row (question k gets k mod 5 + 1), so a reply landing on the wrong row shows."""
    k = int(re.search(r"Question number (\d+)", body["messages"][-1]["content"]).group(1))
    return Reply(f"Feedback: graded. [RESULT] {k % 5 + 1}")


def judged(project: Project) -> list[tuple]:
    return project.reader().execute(
        "SELECT r.external_id, j.status, j.score FROM judgments j JOIN run_rows r ON r.id = j.run_row_id "
        "ORDER BY r.external_id").fetchall()


def test_ray_data_answers_the_shards_and_the_import_judges_as_the_live_job_does(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY", KEY)
    project = make_project(tmp_path / "ray.rageval", n=30)
    with FakeOpenAI(graded) as server:
        llm_judge(project, server)
        project.close()
        shutil.copy(tmp_path / "ray.rageval", tmp_path / "live.rageval")
        project = Project.open(tmp_path / "ray.rageval")
        stats = shards.export_shards(project, JobSpec(run="v1"), tmp_path / "shards", shard_requests=8)
        assert stats.requests == 30 and server.calls == 0
        env = {**os.environ, "OPENAI_API_KEY": KEY, "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0",
               "RAY_USAGE_STATS_ENABLED": "0"}
        done = subprocess.run([sys.executable, str(RECIPE), str(tmp_path / "shards"), str(tmp_path / "results"),
                               "--url", f"{server.url}/chat/completions"],
                              env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        assert server.calls == 30                               # one call a request: the manifest is not a request
        assert {h for h in server.auth_headers} == {f"Bearer {KEY}"}
        results = sorted((tmp_path / "results").glob("*.json"))
        lines = [json.loads(line) for path in results for line in path.read_text().splitlines() if line.strip()]
        assert len(lines) == 30 and len({line["custom_id"] for line in lines}) == 30
        imported = shards.import_results(project, results, JobSpec(run="v1"))
        assert (imported.stored, imported.known) == (30, 0) and imported.judged["judge"].job.ok == 30
        assert imported.judged["judge"].unanswered == 0 and server.calls == 30     # importing calls nothing
        live = Project.open(tmp_path / "live.rageval")
        run_judge_job(live, JobSpec(run="v1"))
        assert judged(project) == judged(live) and len(judged(live)) == 30
        assert {score for _, _, score in judged(live)} == {1.0, 2.0, 3.0, 4.0, 5.0}
        live.close()
    project.close()
