"""Issue 76: the README's pipx line for the `local` extra gives torch's CPU build. PyPI serves torch's CUDA build
on Linux (its wheel requires nvidia-* packages); PyTorch's CPU index serves `2.13.0+cpu`. The line's pip options are
resolved by pip itself (`--dry-run --report`) against two stand-in indexes built here — PyPI with the CUDA build,
PyTorch's CPU index with the CPU one, URLs swapped for folders, nothing else of this machine's pip set-up read — and
the resolution must pick `2.13.0+cpu` and no nvidia package; the same options without the CPU index pick CUDA."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import zipfile
from pathlib import Path
from urllib.parse import quote

from tests.cli.test_readme_blocks import readme_blocks
from tests.conftest import REPO

CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def wheel(folder: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> None:
    """A wheel pip can read the metadata of (nothing in it runs: the resolution is a dry run)."""
    stem = f"{name.replace('-', '_')}-{version}"      # a wheel's file name spells the project's dashes as _
    info = f"{stem}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(f"Requires-Dist: {r}\n"
                                                                               for r in requires)
    (folder / name).mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(folder / name / f"{stem}-py3-none-any.whl", "w") as z:
        z.writestr(f"{info}/METADATA", meta)
        z.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(f"{info}/RECORD", "")
    links = "".join(f'<a href="{quote(p.name)}">{p.name}</a>\n' for p in sorted((folder / name).glob("*.whl")))
    (folder / name / "index.html").write_text(f"<html><body>\n{links}</body></html>\n")


def readme_pip_args() -> list[str]:
    """The pip options of the README's pipx line that installs the `local` extra."""
    lines = [b.replace("\\\n", " ") for b in readme_blocks((REPO / "README.md").read_text(encoding="utf-8"))]
    found = [b for b in lines if b.startswith("pipx install") and "[local]" in b]
    assert len(found) == 1, found
    return shlex.split(re.search(r'--pip-args="([^"]*)"', found[0]).group(1))


def resolve(args: list[str], tmp_path: Path) -> dict[str, str]:
    report = tmp_path / "report.json"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--isolated", "--dry-run", "--ignore-installed",
                           "--quiet", "--no-cache-dir", "--report", str(report), *args, "torch"],
                          cwd=REPO, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return {item["metadata"]["name"]: item["metadata"]["version"] for item in json.loads(report.read_text())["install"]}


def test_the_readme_pipx_line_resolves_torch_to_its_cpu_build(tmp_path):
    pypi, cpu = tmp_path / "pypi", tmp_path / "cpu"
    wheel(pypi, "torch", "2.13.0", ("nvidia-cublas-cu12==12.9.1",))      # PyPI's Linux wheel: the CUDA build
    wheel(pypi, "torch", "2.14.0", ("nvidia-cublas-cu12==12.9.1",))      # a newer one the constraint keeps out
    wheel(pypi, "nvidia-cublas-cu12", "12.9.1")
    wheel(cpu, "torch", "2.13.0+cpu")
    args = readme_pip_args()
    assert CPU_INDEX in args and "-c" in args
    stand_in = ["--index-url", pypi.as_uri(), *[cpu.as_uri() if a == CPU_INDEX else a for a in args]]
    assert resolve(stand_in, tmp_path) == {"torch": "2.13.0+cpu"}
    # without the CPU index the same constraint takes PyPI's CUDA build: the index is what the line adds
    without = [a for a in stand_in if a not in (cpu.as_uri(), "--extra-index-url")]
    assert resolve(without, tmp_path) == {"torch": "2.13.0", "nvidia-cublas-cu12": "12.9.1"}
