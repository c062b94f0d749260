"""README examples run as written (those that need only a project): the golden-set versioning steps in order."""

from __future__ import annotations

import re
import shlex

from rageval_desktop.cli import main
from tests.conftest import REPO


def test_golden_version_and_diff_example_runs_in_order(tmp_path, capsys):
    """Was: the README diffed v2 against v3 on a project that had no v2."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    commands = [line.split("#")[0].strip() for line in text.splitlines()
                if re.match(r"rageval golden (version|diff) ", line)]
    assert [c.split()[2] for c in commands] == ["version", "version", "diff"]
    project = tmp_path / "eval.rageval"
    assert main(["demo", str(project)]) == 0
    for command in commands:
        argv = [str(project) if a == "eval.rageval" else a for a in shlex.split(command)[1:]]
        assert main(argv) == 0, command
    assert "v2" in capsys.readouterr().out
