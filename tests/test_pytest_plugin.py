"""The pytest plugin as a team uses it: ten lines of their own tests against a project file, run by pytest (in a
subprocess, as CI runs it). A gate that cannot decide fails with the gate's Markdown; --rageval-record keeps the
decisions; the project file is never written."""

from __future__ import annotations

import json
import shutil

from tests.conftest import file_digest

pytest_plugins = ["pytester"]

SUITE = """
from rageval_desktop.testing import GateNotPassed


def test_hit10_may_ship(rageval_gate):
    gate = rageval_gate.passes("v1", "v2", metrics=["hit@10"], max_slice_drop=60, max_aggregate_drop=60)
    assert gate.exit_code == 0


def test_the_default_gate_cannot_tell(rageval_gate):
    rageval_gate.passes("v1", "v2")


def test_the_project_is_read_only(rageval_project):
    assert rageval_project.runs() == ["v1", "v2"]


def test_assert_on_the_gate_itself(rageval_project):
    assert not rageval_project.gate("v1", "v2")          # "cannot tell" is never true
"""


def test_a_teams_suite_gates_with_the_plugin(pytester, demo_file):
    project = pytester.path / "eval.rageval"
    shutil.copy(demo_file, project)
    before = file_digest(project)
    pytester.makepyfile(test_gate=SUITE)
    pytester.makeini("[pytest]\nrageval_project = eval.rageval\n")
    result = pytester.runpytest_subprocess("--rageval-record", "decisions", "-p", "rageval_desktop")
    result.assert_outcomes(passed=3, failed=1)
    out = result.stdout.str()
    assert "GateNotPassed" in out and "RAG evaluation gate" in out and "**not decision-grade" in out
    recorded = sorted(p.name for p in (pytester.path / "decisions").iterdir())
    assert recorded == ["test_gate.py_test_hit10_may_ship.json", "test_gate.py_test_hit10_may_ship.md",
                        "test_gate.py_test_the_default_gate_cannot_tell.json",
                        "test_gate.py_test_the_default_gate_cannot_tell.md"]
    data = json.loads((pytester.path / "decisions" / "test_gate.py_test_hit10_may_ship.json").read_text())
    assert data["decision"] == "pass" and data["exit_code"] == 0
    assert file_digest(project) == before
    # issue 74: a second run into the same folder wrote over the first's records; now each keeps its own
    pytester.runpytest_subprocess("--rageval-record", "decisions", "-p", "rageval_desktop")
    again = sorted(p.name for p in (pytester.path / "decisions").iterdir())
    assert len(again) == 8 and "test_gate.py_test_hit10_may_ship~2.json" in again
    assert json.loads((pytester.path / "decisions" / "test_gate.py_test_hit10_may_ship.json").read_text()) == data


def test_records_of_names_that_meet_are_kept_apart(tmp_path):
    from rageval_desktop.pytest_plugin import keep

    first = keep(tmp_path, "t", "{}", "# one")
    (tmp_path / "t~2.md").write_text("a stray")
    second = keep(tmp_path, "t", "{}", "# two")
    assert (first.name, second.name) == ("t.json", "t~3.json")
    assert (tmp_path / "t.md").read_text() == "# one" and (tmp_path / "t~3.md").read_text() == "# two"
    assert not (tmp_path / "t~2.json").exists()


def test_without_a_project_the_fixtures_say_what_to_set(pytester, monkeypatch):
    monkeypatch.delenv("RAGEVAL_PROJECT", raising=False)
    pytester.makepyfile(test_gate="def test_x(rageval_project):\n    pass\n")
    result = pytester.runpytest_subprocess()
    assert result.ret != 0
    assert "--rageval-project PATH, rageval_project in the ini file, or RAGEVAL_PROJECT" in result.stdout.str() + \
        result.stderr.str()


def test_the_apps_modules_are_not_rewritten_by_pytest():
    """pytest marks the whole distribution of a `pytest11` plug-in for assertion rewriting: every module of the app
    imported during a test run was re-parsed by pytest, and on CPython 3.11 a parse run from an import inside a Qt
    callback failed with "AST constructor recursion depth mismatch" (a flaky GUI test). Only the plug-in's own
    module is rewritten now; the app's modules load as Python loads them."""
    import sys

    from rageval_desktop.core.store import project

    assert type(project.__loader__).__name__ == "SourceFileLoader"
    assert type(sys.modules["rageval_desktop.pytest_plugin"].__loader__).__name__ == "AssertionRewritingHook"
