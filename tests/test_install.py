"""The app as people install it: `python -m build` makes an sdist and a wheel (from the sdist) that carry the
resources, the licence and the metadata; the wheel installs into a fresh virtual environment outside the checkout
(its dependencies from the local cache, pinned by constraints.txt) and works there, from a temporary folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import venv
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from tests.support.fake_openai import FakeOpenAI

ROOT = Path(__file__).resolve().parents[1]
RESOURCES = sorted(p.relative_to(ROOT / "resources").as_posix() for p in (ROOT / "resources").rglob("*")
                   if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")


def _run(args: list, **kw) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, **kw)
    assert done.returncode == 0, f"{args}\n--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"
    return done


def _version() -> str:
    text = (ROOT / "rageval_desktop" / "_version.py").read_text()
    return text.split('__version__ = "')[1].split('"')[0]


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--outdir", out, ROOT])
    return out


@pytest.mark.slow
def test_the_wheel_and_the_sdist_carry_everything(dist):
    version = _version()
    wheel = dist / f"rageval_desktop-{version}-py3-none-any.whl"
    sdist = dist / f"rageval_desktop-{version}.tar.gz"
    assert wheel.is_file() and sdist.is_file(), sorted(p.name for p in dist.iterdir())
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        meta = Parser().parsestr(z.read(f"rageval_desktop-{version}.dist-info/METADATA").decode())
        entry_points = z.read(f"rageval_desktop-{version}.dist-info/entry_points.txt").decode()
    missing = [r for r in RESOURCES if f"rageval_desktop/resources/{r}" not in names]
    assert not missing, missing
    assert f"rageval_desktop-{version}.dist-info/licenses/LICENSE" in names
    assert "rageval_desktop/py.typed" in names
    assert not [n for n in names if n.startswith("tests/") or n.endswith(".pyc")]
    assert meta["Version"] == version and meta["License-Expression"] == "Apache-2.0"
    assert meta.get_all("Classifier") and meta.get_all("Project-URL")
    assert "RAGEval Desktop" in meta.get_payload() and meta["Description-Content-Type"] == "text/markdown"
    assert "rageval = rageval_desktop.cli:main" in entry_points
    assert "rageval-desktop = rageval_desktop.gui.app:main" in entry_points
    assert "llm = rageval_desktop.core.judges.kinds.llm:KIND" in entry_points
    with tarfile.open(sdist) as t:
        members = {m.name.split("/", 1)[1] for m in t.getmembers() if "/" in m.name}
    assert {"LICENSE", "README.md", "constraints.txt", "setup.py", "pyproject.toml"} <= members
    assert not [r for r in RESOURCES if f"resources/{r}" not in members]
    # issue 76: setuptools' defaults put 9 test files in the sdist without the support files they import
    assert not [m for m in members if m.startswith(("tests/", "bench/"))]


@pytest.mark.slow
def test_the_default_install_pulls_no_torch_and_no_cuda(dist, tmp_path):
    """`pip install rageval-desktop` pulled torch — on Linux from PyPI its CUDA build: 29 packages, 19 of them
    nvidia, cuda or triton, several GB the app never uses. torch and what needs it are the `local` extra now."""
    wheel = dist / f"rageval_desktop-{_version()}-py3-none-any.whl"
    report = tmp_path / "report.json"
    _run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet", "--report", report,
          wheel])
    names = {item["metadata"]["name"].lower().replace("_", "-") for item in json.loads(report.read_text())["install"]}
    assert "rageval-desktop" in names and "pyside6-essentials" in names
    heavy = sorted(n for n in names if n in ("torch", "sentence-transformers", "transformers", "triton")
                   or n.startswith(("nvidia-", "cuda-")))
    assert heavy == []
    _run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet", "--report", report,
          "-c", ROOT / "constraints.txt", f"{wheel}[local]"])
    local = {item["metadata"]["name"].lower().replace("_", "-"): item["metadata"]["version"]
             for item in json.loads(report.read_text())["install"]}
    assert "sentence-transformers" in local and local["torch"].startswith("2.13.0")


@pytest.mark.slow
def test_the_installed_wheel_works_outside_the_checkout(dist, tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    bin_dir = env_dir / "bin"
    wheel = dist / f"rageval_desktop-{_version()}-py3-none-any.whl"
    _run([bin_dir / "python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
          "-c", ROOT / "constraints.txt", wheel])
    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(HF_HUB_OFFLINE="1", QT_QPA_PLATFORM="offscreen", RAGEVAL_DATA_DIR=str(tmp_path / "data"),
               JUDGE_KEY="sk-test-install-0123456789", PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}")

    def rv(*args: str) -> str:
        return _run([bin_dir / "rageval", *args], cwd=work, env=env).stdout

    # the installed copy, not the checkout, answers
    where = _run([bin_dir / "python", "-c", "import rageval_desktop, pathlib;"
                  "from rageval_desktop.core.base.paths import resources_dir;"
                  "print(pathlib.Path(rageval_desktop.__file__).parent, resources_dir())"],
                 cwd=work, env=env).stdout.split()
    assert all(str(env_dir) in w for w in where), where
    assert rv("--version").strip() == f"rageval {_version()}"
    rv("demo", "d.rageval")
    metrics = json.loads(rv("metrics", "d.rageval", "--run", "v2", "--json"))
    assert metrics and (work / "d.rageval").is_file()
    with FakeOpenAI() as server:
        rv("judges", "add", "d.rageval", "--name", "wheel-judge", "--metric", "correctness", "--kind", "llm",
           "--model", "gpt-4o-mini", "--base-url", server.url, "--api-key-env", "JUDGE_KEY")
        stats = json.loads(rv("judge", "d.rageval", "--run", "v2", "--judge", "wheel-judge", "--json"))
        assert stats["rows"] > 0 and stats["ok"] == stats["rows"] and server.calls == stats["calls"] > 0
        again = json.loads(rv("judge", "d.rageval", "--run", "v2", "--judge", "wheel-judge", "--json"))
        assert again["rows"] == 0 and server.calls == stats["calls"]          # resumes: nothing bought twice
    shot = work / "x.png"
    _run([bin_dir / "rageval-desktop", "--demo", "--screenshot", shot], cwd=work, env=env, timeout=180)
    assert shot.stat().st_size > 10_000 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the Python API, from the installed copy
    out = _run([bin_dir / "python", "-c", "import rageval_desktop as rv\n"
                "with rv.open('d.rageval') as p:\n"
                "    print(len(p.metrics('v2').frame))"], cwd=work, env=env).stdout
    assert int(out) > 0
    # the pytest plugin and the CI reports, from the installed copy (pytest installed as a team would)
    _run([bin_dir / "python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "pytest"])
    (work / "test_gate.py").write_text(
        "def test_hit10(rageval_gate):\n"
        "    rageval_gate.passes('v1', 'v2', metrics=['hit@10'], max_slice_drop=60, max_aggregate_drop=60)\n\n"
        "def test_default(rageval_gate):\n"
        "    rageval_gate.passes('v1', 'v2')\n", encoding="utf-8")
    done = subprocess.run([str(bin_dir / "python"), "-m", "pytest", "-p", "rageval_desktop", "test_gate.py",
                           "--rageval-project", "d.rageval", "--rageval-record", "kept", "-p", "no:cacheprovider"],
                          cwd=work, env={**env, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}, capture_output=True,
                          text=True)
    assert done.returncode == 1 and "1 failed, 1 passed" in done.stdout, done.stdout[-3000:] + done.stderr
    assert "GateNotPassed" in done.stdout and len(list((work / "kept").glob("*.json"))) == 2
    gate = subprocess.run([str(bin_dir / "rageval"), "gate", "d.rageval", "--baseline", "v1", "--candidate", "v2",
                           "--junit", "gate.xml", "--summary", "summary.md"], cwd=work, env=env)
    assert gate.returncode == 3
    assert (work / "gate.xml").read_text().startswith('<?xml') and "exit code: 3" in (work / "summary.md").read_text()
