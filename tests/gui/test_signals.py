"""Ctrl+C in the terminal and SIGTERM close the app cleanly (issue 31: Ctrl+C did not stop `make demo`, and the next
start showed an unclean-shutdown notice)."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

import pytest


def _sessions(path) -> list[str]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return [k for (k,) in conn.execute("SELECT key FROM meta WHERE key LIKE 'session/%'")]
    finally:
        conn.close()


@pytest.mark.slow      # starts the app twice in its own process (about 6 s)
@pytest.mark.parametrize("which", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_closes_the_app_and_its_project_cleanly(demo_file, tmp_path, which):
    path = tmp_path / "d.rageval"
    shutil.copy(demo_file, path)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HF_HUB_OFFLINE": "1",
           "RAGEVAL_DATA_DIR": str(tmp_path / "data")}
    proc = subprocess.Popen([sys.executable, "-m", "rageval_desktop.gui.app", str(path)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while not _sessions(path) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        assert _sessions(path), "the app never opened the project"
        time.sleep(0.5)
        proc.send_signal(which)
        code = proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    err = proc.stderr.read().decode()
    assert code == 0 and "Traceback" not in err, err
    assert _sessions(path) == []          # closed cleanly: the next open checks nothing
