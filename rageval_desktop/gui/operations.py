"""What the window's workers run: core calls shaped as `fn(*args, ctx)`. No Qt here either."""

from __future__ import annotations

from pathlib import Path

from rageval_desktop.core import importers
from rageval_desktop.core.demo import write_demo_project
from rageval_desktop.core.importers.common import ImportReport
from rageval_desktop.core.jobs.context import TaskContext
from rageval_desktop.core.paths import user_data_dir
from rageval_desktop.core.store.project import Project


def open_project(path: Path, ctx: TaskContext) -> Project:
    return Project.open(path)


def create_project(path: Path, ctx: TaskContext) -> Project:
    return Project.create(path)


def demo_path() -> Path:
    return user_data_dir() / "demo.rageval"


def ensure_demo_project(ctx: TaskContext) -> Path:
    path = demo_path()
    if not path.exists():
        write_demo_project(path, ctx=ctx)
    return path


def import_file(project: Project, path: Path, kind: str, run_name: str | None, fmt: str | None,
                ctx: TaskContext) -> ImportReport:
    if kind == "golden":
        return importers.import_golden(project, path, fmt=fmt, ctx=ctx)
    if kind == "run":
        return importers.import_run(project, path, run_name or path.stem, fmt=fmt, ctx=ctx)
    return importers.import_corpus(project, path, ctx=ctx)


def backup(project: Project, ctx: TaskContext) -> Path:
    return project.backup("manual")


def periodic_backup(project: Project, ctx: TaskContext) -> Path | None:
    return project.backup_if_changed()
