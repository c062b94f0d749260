"""Every `rageval …` command a message, a hint or a help text names exists (was: `align` told users to run
`rageval rate`, which never existed; issue 31)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from rageval_desktop.cli import command_paths

ROOT = Path(__file__).resolve().parents[1] / "rageval_desktop"
NAMED = re.compile(r"(?<![.\w-])rageval ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?")
PROSE = {"command", "commands", "file", "files", "project", "projects"}     # "any rageval command that …"


def _strings(tree: ast.AST) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "X"
                           for v in node.values)
            out.append((node.lineno, text))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append((node.lineno, node.value))
    return out


def test_every_command_named_in_the_app_exists():
    paths = {p for p in command_paths() if p}
    tops = {p[0] for p in paths}
    groups = {p[0] for p in paths if len(p) == 2}
    wrong = []
    for path in sorted(ROOT.rglob("*.py")):
        for line, text in _strings(ast.parse(path.read_text(encoding="utf-8"))):
            for first, second in NAMED.findall(text):
                if first in PROSE:
                    continue
                if first not in tops:
                    wrong.append(f"{path.relative_to(ROOT)}:{line}: rageval {first}")
                elif first in groups and second and (first, second) not in paths and second not in ("project",):
                    wrong.append(f"{path.relative_to(ROOT)}:{line}: rageval {first} {second}")
    assert wrong == []


def test_every_command_the_docs_name_exists():
    tops = {p[0] for p in command_paths() if p}
    repo = ROOT.parent
    wrong = []
    for doc in [repo / "README.md", *sorted((repo / "docs").glob("*.md"))]:
        for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            for first, _ in NAMED.findall(line):
                if first not in tops and first not in PROSE:
                    wrong.append(f"{doc.name}:{n}: rageval {first}")
    assert wrong == []
