"""The pytest plugin (entry point `pytest11`, name `rageval_desktop`: loaded wherever the package is installed, or
asked for with `pytest -p rageval_desktop`). It imports nothing heavy until a fixture is used.

Options (or the same names in the ini file, or the environment):
  --rageval-project PATH   the project file the fixtures open read-only (ini `rageval_project`, env RAGEVAL_PROJECT)
  --rageval-record DIR     keep each decision a test asks for: DIR/<test>.json (full precision) and .md

Fixtures:
  rageval_project   the project, opened read-only once per session (an `rv.Project`)
  rageval_gate      gate(baseline, candidate, **options) -> rv.Gate, recorded with --rageval-record; its
                    `.passes(...)` asserts the gate passed, failing with the gate's Markdown

    def test_the_candidate_may_ship(rageval_gate):
        rageval_gate.passes("main", "pr-42", config="gate.json")
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from rageval_desktop.api import Gate, Project


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """Only this module's asserts are pytest's to rewrite, not the whole app's. pytest marks every top-level package
    of a distribution that declares a `pytest11` plug-in, so each module of the app imported in a test run was
    parsed and recompiled by pytest's assertion rewriter — and on CPython 3.11 that parse, run from an import inside
    a Qt callback (a page built on first view), can fail with "SystemError: AST constructor recursion depth
    mismatch". The package's name is taken off the marks before any conftest imports the app (pytest keeps them in a
    set of its hook; without that set, nothing changes)."""
    must = getattr(early_config.pluginmanager.rewrite_hook, "_must_rewrite", None)
    if isinstance(must, set):
        must.discard("rageval_desktop")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rageval", "RAGEval Desktop: gate RAG runs in a test suite")
    group.addoption("--rageval-project", metavar="PATH", default=None,
                    help="the project file rageval_project and rageval_gate open, read-only (or RAGEVAL_PROJECT)")
    group.addoption("--rageval-record", metavar="DIR", default=None,
                    help="keep each gate decision a test asks for in DIR: <test>.json and <test>.md")
    parser.addini("rageval_project", "the project file rageval_project and rageval_gate open, read-only", default="")


def _project_path(config: pytest.Config) -> Path:
    chosen = (config.getoption("--rageval-project") or config.getini("rageval_project")
              or os.environ.get("RAGEVAL_PROJECT"))
    if not chosen:
        raise pytest.UsageError("rageval: say which project to open: --rageval-project PATH, rageval_project in the "
                                "ini file, or RAGEVAL_PROJECT")
    path = Path(str(chosen))
    if not path.is_absolute():
        path = Path(str(config.rootpath)) / path
    return path


@pytest.fixture(scope="session")
def rageval_project(pytestconfig: pytest.Config) -> Iterator[Project]:
    """The project, read-only: the tests read it and never change it (nor migrate or back it up)."""
    from rageval_desktop import api

    path = _project_path(pytestconfig)
    if not path.exists():
        raise pytest.UsageError(f"rageval: no project file at {path}")
    project = api.open(path, read_only=True)
    try:
        yield project
    finally:
        project.close()


class GateAsker:
    """What `rageval_gate` gives a test: call it for a decision, or `.passes(...)` to assert one passed."""

    def __init__(self, project: Project, record: Path | None, test: str) -> None:
        self.project, self.record, self.test = project, record, test
        self.asked = 0

    def __call__(self, baseline: str, candidate: str, **options: Any) -> Gate:
        gate = self.project.gate(baseline, candidate, **options)
        if self.record is not None:
            self.asked += 1
            stem = re.sub(r"[^\w.-]+", "_", self.test).strip("_") + (f"-{self.asked}" if self.asked > 1 else "")
            self.record.mkdir(parents=True, exist_ok=True)
            keep(self.record, stem, json.dumps(gate.data, indent=2, ensure_ascii=False), gate.markdown())
        return gate

    def passes(self, baseline: str, candidate: str, **options: Any) -> Gate:
        from rageval_desktop.testing import assert_gate_passes

        return assert_gate_passes(self(baseline, candidate, **options))


def keep(folder: Path, stem: str, data: str, markdown: str) -> Path:
    """`stem`.json and .md in `folder`, never over a record already there (issue 74: six gate calls left five
    files — two tests' names made one name, and a second run wrote over the first's): the first free name of
    `stem`, `stem`~2, `stem`~3…, claimed by creating it (exclusive, so parallel workers never share one)."""
    n = 1
    while True:
        name = stem if n == 1 else f"{stem}~{n}"
        try:
            with (folder / f"{name}.json").open("x", encoding="utf-8") as out:
                out.write(data)
        except FileExistsError:
            n += 1
            continue
        try:
            with (folder / f"{name}.md").open("x", encoding="utf-8") as out:
                out.write(markdown)
        except FileExistsError:
            (folder / f"{name}.json").unlink()     # a stray .md of that name: the pair takes the next one
            n += 1
            continue
        return folder / f"{name}.json"


@pytest.fixture
def rageval_gate(rageval_project: Project, request: pytest.FixtureRequest) -> GateAsker:
    record = request.config.getoption("--rageval-record")
    return GateAsker(rageval_project, Path(record) if record else None, request.node.nodeid)
