"""Backups with SQLite's online backup API, kept in a folder beside the project and rotated."""

from __future__ import annotations

import re
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

KEEP = 10


def backup_dir(project_path: Path) -> Path:
    return project_path.parent / f".{project_path.name}.backups"


def list_backups(project_path: Path) -> list[Path]:
    folder = backup_dir(project_path)
    if not folder.exists():
        return []
    return sorted(folder.glob(f"{project_path.stem}-*.rageval"))


def backup_to_rotation(src: sqlite3.Connection, project_path: Path, reason: str, keep: int = KEEP) -> Path:
    folder = backup_dir(project_path)
    folder.mkdir(exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    safe_reason = re.sub(r"[^A-Za-z0-9_.-]+", "-", reason)[:60]
    out = folder / f"{project_path.stem}-{stamp}-{safe_reason}.rageval"
    tmp = out.with_suffix(".partial")
    dst = sqlite3.connect(tmp)
    try:
        src.backup(dst)
        dst.execute("PRAGMA journal_mode = DELETE")  # a backup is one self-contained file
    finally:
        dst.close()
    tmp.replace(out)
    for old in list_backups(project_path)[:-keep]:
        old.unlink(missing_ok=True)
    return out
