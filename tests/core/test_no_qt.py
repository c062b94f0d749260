"""core/ and the CLI never import Qt: import every module with PySide6 made unimportable."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tests.conftest import REPO

SCRIPT = textwrap.dedent("""
    import importlib, pkgutil, sys
    sys.modules["PySide6"] = None          # any import of PySide6 now raises ImportError
    import rageval_desktop.core as core
    names = [m.name for m in pkgutil.walk_packages(core.__path__, "rageval_desktop.core.")]
    for name in names + ["rageval_desktop.cli"]:
        importlib.import_module(name)
    print(len(names))
""")


def test_core_imports_without_qt():
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert result.returncode == 0, result.stderr[-2000:]
    assert int(result.stdout.strip()) >= 15


def test_import_linter_contracts_hold():
    exe = str(Path(sys.executable).parent / "lint-imports")
    result = subprocess.run([exe], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert result.returncode == 0, result.stdout[-2000:]
    assert "5 kept, 0 broken" in result.stdout
