"""The desktop bundle (make package): PyInstaller one-folder, frozen. Built here from the checkout, then started
from a temporary folder, offscreen: the CLI twin makes the demo, imports a run (the frozen import path: one
process, no reader process) and reads its metrics; the app renders a screenshot of the dashboard with its charts
(the chart process is the frozen executable, started again). torch stays out of the bundle."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "dist" / "bundle" / "rageval-desktop"


def _run(args: list, **kw) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, **kw)
    assert done.returncode == 0, f"{args}\n--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def bundle() -> Path:
    _run(["bash", ROOT / "packaging" / "build.sh", Path(sys.executable).parent], cwd=ROOT, timeout=1200)
    return APP


@pytest.mark.slow
def test_the_frozen_app_and_its_cli_twin_work_from_anywhere(bundle, tmp_path):
    assert (bundle / "rageval").is_symlink()
    assert (bundle / "share" / "applications" / "rageval-desktop.desktop").is_file()
    internal = bundle / "_internal"
    assert not [p.name for p in internal.iterdir() if p.name in ("torch", "transformers", "sentence_transformers")]
    assert (internal / "rageval_desktop" / "resources" / "rubrics").is_dir()
    # issue 74: every third-party licence text, Qt's LGPL notice, and no GPL package frozen in
    index = (internal / "licenses" / "INDEX.txt").read_text(encoding="utf-8")
    named = index.lower().replace("_", "-")         # a distribution's name as its metadata spells it
    assert "pyside6-essentials" in named and "pandas" in named and "krippendorff" not in named
    assert "LGPL" in (internal / "licenses" / "pyside6-essentials" / "NOTICE-rageval.txt").read_text(encoding="utf-8")
    assert not list(internal.glob("krippendorff*"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(QT_QPA_PLATFORM="offscreen", RAGEVAL_DATA_DIR=str(tmp_path / "data"),
               XDG_CACHE_HOME=str(tmp_path / "cache"), PATH="/usr/bin:/bin")          # no Python of ours on the PATH
    cli = bundle / "rageval"

    def rv(*args: str) -> str:
        return _run([cli, *args], cwd=tmp_path, env=env, timeout=120).stdout

    assert rv("--version").startswith("rageval ")
    # the command line starts as the venv's does (issue 49: --version was 2.6x slower): no Qt library loaded, and
    # none of the run-time hooks that imported pkg_resources, setuptools or QtCore at every start
    loaded = _run([cli, "--version"], cwd=tmp_path, env={**env, "LD_DEBUG": "libs"}, timeout=120).stderr
    assert "libpython" in loaded and "libQt6Core" not in loaded
    toc = (ROOT / "build" / "pyi" / "rageval-desktop" / "PKG-00.toc").read_text()
    assert "pyi_rth_multiprocessing" in toc
    assert not [h for h in ("pyi_rth_pkgres", "pyi_rth_setuptools", "pyi_rth_mplconfig", "pyi_rth_pyside6") if h in toc]
    rv("demo", "d.rageval", "--files", "files")
    out = rv("import", "run", "d.rageval", "files/outputs-v2.jsonl", "--run", "v3")
    assert "imported run 'v3': 72 rows" in out
    assert "v3" in rv("metrics", "d.rageval", "--run", "v3", "--json")
    shot = tmp_path / "dash.png"
    _run([bundle / "rageval-desktop", "d.rageval", "--view", "dashboard", "--run", "v3", "--size", "1280x720",
          "--screenshot", shot], cwd=tmp_path, env=env, timeout=120)
    assert shot.stat().st_size > 30_000 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # matplotlib's font cache is kept where it is outside the bundle: it was rebuilt for every report and window
    assert list((tmp_path / "cache" / "matplotlib").glob("fontlist-*.json"))
    archives = list((ROOT / "dist").glob("rageval-desktop-*-linux-*.tar.gz"))
    assert archives and archives[0].stat().st_size > 50_000_000
