"""The Python API: docs/api.md runs as written, and the API and the CLI give the same numbers."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from rageval_desktop.cli import main
from tests.conftest import REPO


def _blocks() -> list[str]:
    text = (REPO / "docs" / "api.md").read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_the_walk_through_runs_as_written(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    blocks = _blocks()
    assert len(blocks) >= 7
    namespace: dict = {"__name__": "walkthrough"}
    for block in blocks:
        exec(compile(block, "docs/api.md", "exec"), namespace)   # noqa: S102 - our own documentation
    out = capsys.readouterr().out
    assert "['v1', 'v2']" in out and "refused:" in out and "no run named 'v9'" in out
    assert namespace["stats"].ok == 72 and namespace["again"].rows == 0
    assert namespace["seen"] and namespace["seen"][-1][0] == namespace["seen"][-1][1]   # progress reached the end
    assert (tmp_path / "v3.html").is_file()


def test_importing_the_package_does_not_load_the_api_or_core():
    code = ("import sys, rageval_desktop as rv; assert rv.__version__; "
            "print(sorted(m for m in sys.modules if m.startswith(('rageval_desktop.', 'pandas', 'numpy'))))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "['rageval_desktop._version']", loaded


@pytest.mark.slow
def test_the_api_and_the_cli_give_the_same_numbers(tmp_path, capsys):
    import rageval_desktop as rv

    path = tmp_path / "d.rageval"
    with rv.demo(path) as p:
        metrics, comparison = p.metrics("v2").data, p.compare("v1", "v2").data
        gate = p.gate("v1", "v2", max_slice_drop=5)
        agreement = p.agreement()
    capsys.readouterr()
    for argv, expected in ((["metrics", str(path), "--run", "v2", "--json"], metrics),
                           (["compare", str(path), "--baseline", "v1", "--candidate", "v2", "--json"], comparison),
                           (["gate", str(path), "--baseline", "v1", "--candidate", "v2", "--max-slice-drop", "5",
                             "--json"], gate.data),
                           (["agreement", str(path), "--json"], agreement)):
        assert main(argv) == (gate.exit_code if argv[0] == "gate" else 0), argv
        assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(expected)), argv[0]


def test_errors_are_typed_and_usage_errors_keep_the_cli_hint(tmp_path, capsys):
    import rageval_desktop as rv

    with rv.demo(tmp_path / "d.rageval") as p:
        with pytest.raises(rv.NotFound, match="no run named 'nope'"):
            p.metrics("nope")
        with pytest.raises(rv.UsageError) as caught:
            p.gate("v1", "v2", max_slice_drop=-1)
        assert "--" not in str(caught.value) and "--max-slice-drop" in caught.value.for_cli()
        with pytest.raises(rv.UsageError, match="estimator"):
            p.metrics("v2", estimator="median")
        with pytest.raises(rv.UsageError, match="file path or a pandas DataFrame"):
            p.import_run([{"question": "q"}], "v9")
    with pytest.raises(rv.ProjectExists):
        rv.demo(tmp_path / "d.rageval")
    with pytest.raises(rv.UsageError, match=r"end in \.rageval"):
        rv.create(tmp_path / "x.db")
    assert main(["gate", str(tmp_path / "d.rageval"), "--baseline", "v1", "--candidate", "v2",
                 "--max-slice-drop", "-1"]) == 2
    assert "--max-slice-drop" in capsys.readouterr().err


def test_a_failed_job_raises_with_what_it_saved(tmp_path, monkeypatch):
    import rageval_desktop as rv
    from tests.support.fake_openai import FakeOpenAI, Reply

    monkeypatch.setenv("JUDGE_KEY", "sk-test-api-0123456789")
    refuse = Reply(status=401, error={"message": "bad key", "type": "auth", "code": "invalid_api_key"})
    with rv.demo(tmp_path / "d.rageval") as p, FakeOpenAI(lambda body, n: refuse) as server:
        p.add_judge("llm-j", "correctness", "llm", model="m", base_url=server.url, api_key_env="JUDGE_KEY")
        with pytest.raises(rv.JobStopped, match="refused the API key") as caught:
            p.judge("v2", ["llm-j"])
        assert caught.value.stats.stopped == "fatal" and caught.value.stats.ok == 0
        assert p.judge("v2", ["llm-j"], raise_on_stop=False).stopped == "fatal"


@pytest.mark.slow
def test_a_job_stops_when_cancelled_and_resumes_paying_nothing_twice(tmp_path, monkeypatch):
    import threading

    import rageval_desktop as rv
    from tests.support.fake_openai import FakeOpenAI

    monkeypatch.setenv("JUDGE_KEY", "sk-test-api-0123456789")
    cancel = threading.Event()
    with rv.demo(tmp_path / "d.rageval") as p, FakeOpenAI(latency=0.02) as server:
        p.add_judge("llm-j", "correctness", "llm", model="m", base_url=server.url, api_key_env="JUDGE_KEY",
                    concurrency=2)

        def progress(done: int, total: int, message: str) -> None:
            if done >= 4:
                cancel.set()

        first = p.judge("v2", ["llm-j"], progress=progress, cancel=cancel)
        assert first.stopped == "cancelled" and 4 <= first.ok < 72
        calls = server.calls
        rest = p.judge("v2", ["llm-j"])
        assert rest.stopped is None and rest.rows == 72 - first.ok and server.calls == calls + rest.rows


def test_bad_api_arguments_are_usage_errors_not_bare_python_ones(demo_file, tmp_path):
    """Issue 45: a size of 'x' raised a bare TypeError, and a metric given as one string was read letter by letter."""
    import shutil

    import rageval_desktop as rv

    path = tmp_path / "d.rageval"
    shutil.copy(demo_file, path)
    with rv.open(path) as project:
        with pytest.raises(rv.UsageError, match="size is a whole number"):
            project.sample("v1", "correctness", "x")
        with pytest.raises(rv.UsageError, match="size is 1 or more"):
            project.sample("v1", "correctness", 0)
        one = project.compare("v1", "v2", metrics="hit@5")
        assert one.data["metrics"] == ["hit@5", "coverage"]    # (coverage: every comparison counts what is unanswered)
        with pytest.raises(rv.UsageError, match="metrics are names"):
            project.gate("v1", "v2", metrics=[5])
