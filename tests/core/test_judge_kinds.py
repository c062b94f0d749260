"""Judge kinds plug in (issue 29): the example kind of docs/examples is installed the way pip installs any package
(into a folder of its own, outside the checkout) and used by the CLI — registered, added, run, measured — without
a file of core or gui changed. The built-in kinds are registered the same way."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from rageval_desktop.core.judges import kinds
from tests.conftest import REPO

EXAMPLE = REPO / "docs" / "examples" / "rageval-exact-match"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The example kind, installed by pip into a folder of its own; and a plug-in whose import fails."""
    root = tmp_path_factory.mktemp("plugins")
    source = root / "src"
    shutil.copytree(EXAMPLE, source)
    target = root / "site"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                           "--no-index", "--target", str(target), str(source)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    broken = target / "broken_kind-1.0.dist-info"
    broken.mkdir()
    (broken / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-kind\nVersion: 1.0\n")
    (broken / "entry_points.txt").write_text("[rageval_desktop.judge_kinds]\nbroken = no_such_module_here:KIND\n")
    return target


def rageval(site: Path | None, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    env["PYTHONPATH"] = os.pathsep.join([str(site)] if site else []) or ""
    return subprocess.run([sys.executable, "-m", "rageval_desktop.cli", *args], capture_output=True, text=True,
                          env=env, timeout=300, cwd=site.parent if site else None)


@pytest.mark.slow      # heavy (2-3 s): make test stays near 90 s; CI runs it
def test_the_readme_plug_in_example_runs_as_written(site, tmp_path):
    """README, "A judge kind of your own": pip installs the example (the fixture did, into a folder of its own),
    then each rageval command runs in order and exits 0."""
    import shlex

    block = (REPO / "README.md").read_text(encoding="utf-8").split("### A judge kind of your own", 1)[1]
    code = block.split("```bash", 1)[1].split("```", 1)[0]
    lines = [line.split("   #")[0].strip() for line in code.splitlines() if line.strip()]
    assert lines[0] == "pip install ./docs/examples/rageval-exact-match" and (REPO / lines[0].split()[-1]).is_dir()
    module = block.split("```python", 1)[1].split("```", 1)[0]
    assert module.strip() == (EXAMPLE / "rageval_exact_match" / "__init__.py").read_text().strip()
    assert len(module.strip().splitlines()) <= 35
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(site)}
    for line in lines[1:]:
        argv = shlex.split(line)
        assert argv[0] == "rageval"
        done = subprocess.run([sys.executable, "-m", "rageval_desktop.cli", *argv[1:]], capture_output=True,
                              text=True, env=env, timeout=300, cwd=tmp_path)
        assert done.returncode == 0, (line, done.stderr)
    assert "em" in done.stdout            # metrics lists the new judge's flag


@pytest.mark.slow   # heavy: make test-slow (and CI) run it
def test_an_installed_kind_is_listed_added_run_and_measured(site, tmp_path):
    project = str(tmp_path / "d.rageval")
    assert rageval(site, "demo", project).returncode == 0
    listed = rageval(site, "judges", "kinds", "--json")
    assert listed.returncode == 0, listed.stderr
    found = {k["name"]: k for k in json.loads(listed.stdout)["kinds"]}
    assert {"llm", "embedding", "lexical", "hhem", "exact_match"} <= set(found)
    assert found["exact_match"]["source"] == "rageval-exact-match"
    assert found["exact_match"]["metrics"] == ["correctness", "correctness_binary"]
    problems = json.loads(listed.stdout)["problems"]          # the broken plug-in is named, the rest works
    assert len(problems) == 1 and "broken" in problems[0] and "no_such_module_here" in problems[0]

    added = rageval(site, "judges", "add", project, "--name", "em", "--metric", "correctness_binary", "--kind",
                    "exact_match", "--param", "strict=false")
    assert added.returncode == 0, added.stderr
    refused = rageval(site, "judges", "add", project, "--name", "em2", "--metric", "faithfulness", "--kind",
                      "exact_match")
    assert refused.returncode == 1 and "faithfulness has no reference to match" in refused.stderr
    ran = rageval(site, "judge", project, "--run", "v2", "--judge", "em", "--json")
    assert ran.returncode == 0, ran.stderr
    stats = json.loads(ran.stdout)
    assert stats["done"] == 72 and stats["calls"] == 0
    with sqlite3.connect(project) as conn:
        scores = [s for (s,) in conn.execute("SELECT j.score FROM judgments j JOIN judges g ON g.id = j.judge_id "
                                             "WHERE g.name = 'em' AND j.status = 'ok'")]
        params = conn.execute("SELECT kind, params FROM judges WHERE name = 'em'").fetchone()
    assert len(scores) == 72 and set(scores) <= {0.0, 1.0} and 0 < sum(scores) < 72
    assert params[0] == "exact_match" and json.loads(params[1]) == {"strict": False}
    metrics = rageval(site, "metrics", project, "--run", "v2", "--json")
    assert metrics.returncode == 0, metrics.stderr
    assert "em" in json.loads(metrics.stdout)["judges"]["correctness_binary"]
    again = rageval(site, "judge", project, "--run", "v2", "--judge", "em", "--json")
    assert json.loads(again.stdout)["skipped"] == 72           # judged once: a re-run buys nothing

    # the plug-in uninstalled: the project still lists its judge; running it says what is missing (exit 2)
    listed = rageval(None, "judges", "list", project, "--json")
    assert listed.returncode == 0 and "em" in {j["name"] for j in json.loads(listed.stdout)}
    gone = rageval(None, "judge", project, "--run", "v2", "--judge", "em")
    assert gone.returncode == 2 and "unknown judge kind 'exact_match'" in gone.stderr
    assert "Traceback" not in gone.stderr


def test_the_built_in_kinds_are_registered_like_plug_ins():
    """pyproject.toml's entry points and the fallback list (a checkout without metadata) are the same."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["entry-points"][kinds.ENTRY_POINT_GROUP] == kinds.BUILTIN
    for name in kinds.BUILTIN:
        kind = kinds.get_kind(name)
        assert isinstance(kind, kinds.JudgeKind) and kind.name == name


def test_a_kind_is_checked_when_registered():
    with pytest.raises(Exception, match="not a judge kind"):
        kinds.register(object())
