"""Shared fixtures. Every test gets its own data folder, so settings and the demo never touch $HOME."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data"  # fixtures copied from ../shared/data, so that a clone alone runs the suite
DEMO = REPO / "resources" / "demo"


@pytest.fixture(autouse=True)
def _data_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("RAGEVAL_DATA_DIR", str(tmp_path_factory.mktemp("data")))


@pytest.fixture
def project(tmp_path):
    from rageval_desktop.core.store.project import Project

    p = Project.create(tmp_path / "t.rageval", actor="tester")
    yield p
    p.close()


@pytest.fixture(scope="session")
def demo_file(tmp_path_factory) -> Path:
    from rageval_desktop.core.demo import write_demo_project

    return write_demo_project(tmp_path_factory.mktemp("demo") / "demo.rageval")


@pytest.fixture
def demo(demo_file, tmp_path):
    """An open copy of the demo project (judged, with a sample and a synthetic reviewer's ratings)."""
    import shutil

    from rageval_desktop.core.store.project import Project

    copy = tmp_path / "demo.rageval"
    shutil.copy(demo_file, copy)
    with Project.open(copy) as p:
        yield p


def team_packs(project, out: Path, size: int):
    """Two reviewers' packs (ann, bob, overlap 2) of a new correctness sample of v2, on a demo project whose
    synthetic reviewer's ratings are removed: (sample, the exported packs)."""
    from rageval_desktop.core.review import packs, sampling

    with project.write("only this team's ratings") as w:
        w.execute("DELETE FROM human_ratings")
    sample = sampling.create_sample(project, "v2", "correctness", size=size, seed=9)
    return sample, packs.export_packs(project, sample.id, ["ann", "bob"], out, overlap=2)


def pack_ids(project, made) -> dict[int, int]:
    """The project's row id -> the pack's own (a pack names its rows by ids drawn for it: issue 74)."""
    return {real: local for local, real in project.reader().execute(
        "SELECT local_id, run_row_id FROM review_pack_rows WHERE pack_id = ?", (made.pack_id,))}


def file_digest(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def table_dump(path: Path) -> dict[str, list]:
    """Every row of every table: equal dumps = the project is unchanged. (Not SQLite's planner statistics, which
    `PRAGMA optimize` may start when a project closes: they are no data of the project.)"""
    conn = sqlite3.connect(path)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                             "AND name NOT LIKE 'sqlite_stat%' ORDER BY name")]
        return {t: sorted(map(repr, conn.execute(f'SELECT * FROM "{t}"'))) for t in tables}
    finally:
        conn.close()
