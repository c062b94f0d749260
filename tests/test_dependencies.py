"""Every third-party package the app imports is declared in pyproject.toml (a missing one breaks a clean
install, or the PyInstaller build, only when that feature is first used)."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions

from tests.conftest import REPO


def _imported_top_modules() -> set[str]:
    found: set[str] = set()
    for path in (REPO / "rageval_desktop").rglob("*.py"):
        if path.name == "pytest_plugin.py":   # loaded by pytest only: pytest is there by construction
            continue
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found - set(sys.stdlib_module_names) - {"rageval_desktop", "__future__"}


def _declared() -> set[str]:
    """The base install's packages and the `local` extra's (torch and what needs it: the optional parts, each of
    which says what to install when it is missing — tests/core/test_optional_parts.py)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    names = project["dependencies"] + project["optional-dependencies"]["local"]
    return {re.split(r"[<>=!~\[; ]", n, maxsplit=1)[0].lower().replace("_", "-") for n in names}


def test_every_runtime_import_is_declared():
    dists = packages_distributions()
    declared = _declared()
    missing = {}
    for module in sorted(_imported_top_modules()):
        candidates = {d.lower().replace("_", "-") for d in dists.get(module, [module])}
        if not candidates & declared:
            missing[module] = sorted(candidates)
    assert missing == {}
