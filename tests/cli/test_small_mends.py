"""Small things a user trips on (issue 45): a demo project without the extension `new` asks for; the app asked for a
screenshot of a missing project exiting 1 without a word."""

from __future__ import annotations

import os
import subprocess
import sys

from rageval_desktop.cli import main
from tests.conftest import REPO


def test_demo_refuses_a_name_without_the_extension_and_writes_into_a_folder(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "demo"]) == 2
    assert "project files end in .rageval (got 'demo')" in capsys.readouterr().err
    assert not (tmp_path / "demo").exists()
    (tmp_path / "folder").mkdir()
    assert main(["demo", "folder"]) == 0
    assert (tmp_path / "folder" / "demo.rageval").is_file()


def test_the_app_says_why_a_screenshot_of_a_missing_project_failed(tmp_path):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "RAGEVAL_DATA_DIR": str(tmp_path / "data")}
    done = subprocess.run([sys.executable, "-m", "rageval_desktop.gui.app", str(tmp_path / "missing.rageval"),
                           "--screenshot", str(tmp_path / "x.png")], capture_output=True, text=True, timeout=120,
                          cwd=REPO, env=env)
    assert done.returncode == 1
    assert "missing.rageval: no such file; no screenshot was written" in done.stderr
    assert not (tmp_path / "x.png").exists()
