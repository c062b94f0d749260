"""Backups with SQLite's online backup API, kept in a folder beside the project and rotated (restoring one:
core/store/restore.py).

A backup is written to `*.partial` and renamed when complete, so a failed backup (full disk) leaves nothing
that looks like a backup; the partial file is removed and the error says why.
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
from datetime import UTC, datetime
from pathlib import Path

from rageval_desktop.core.base.errors import WriteFailed
from rageval_desktop.core.store.owners import pid_alive
from rageval_desktop.core.store.schema import SESSION_KEYS

KEEP = 10


def backup_dir(project_path: Path) -> Path:
    return project_path.parent / f".{project_path.name}.backups"


def list_backups(project_path: Path) -> list[Path]:
    folder = backup_dir(project_path)
    if not folder.exists():
        return []
    return sorted(folder.glob(f"{project_path.stem}-*.rageval"))


LEFTOVER_AGE_S = 3600     # a leftover without a writer's pid (made before 0.3) is removed after an hour


def clean_leftovers(project_path: Path) -> list[Path]:
    """Remove what a killed backup or restore left behind — `*.partial` backups, a `.NAME.restoring` copy, as large
    as the project and hidden — when the process that wrote it is gone (its pid is in the name). Run on every
    writable open; returns what it removed."""

    found = list(backup_dir(project_path).glob("*.partial")) if backup_dir(project_path).is_dir() else []
    found += list(project_path.parent.glob(f".{project_path.name}.restoring*"))
    removed = []
    for path in found:
        match = re.search(r"\.(\d+)\.partial$|\.restoring-(\d+)$", path.name)
        try:
            if match:
                if pid_alive(int(match.group(1) or match.group(2))):
                    continue
            elif time.time() - path.stat().st_mtime < LEFTOVER_AGE_S:
                continue
            path.unlink()
            Path(f"{path}-journal").unlink(missing_ok=True)
            removed.append(path)
        except OSError:
            continue
    return removed


def _open_destination(path: Path) -> sqlite3.Connection:
    """The new backup file's connection (a seam for tests that simulate a full disk)."""
    return sqlite3.connect(path)


def backup_to_rotation(src: sqlite3.Connection, project_path: Path, reason: str, keep: int = KEEP) -> Path:
    folder = backup_dir(project_path)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    safe_reason = re.sub(r"[^A-Za-z0-9_.-]+", "-", reason)[:60]
    out = folder / f"{project_path.stem}-{stamp}-{safe_reason}.rageval"
    tmp = out.with_suffix(f".{os.getpid()}.partial")      # whose it is: leftovers of dead writers are cleaned
    try:
        folder.mkdir(exist_ok=True)
        dst = _open_destination(tmp)
        try:
            src.backup(dst)
            dst.execute("PRAGMA journal_mode = DELETE")  # a backup is one self-contained file
            # who had the project open is not part of its contents: a restored backup must not look crashed
            dst.execute(f"DELETE FROM meta WHERE {SESSION_KEYS}")
            dst.commit()
        finally:
            dst.close()
        digest = file_sha256(tmp)
        tmp.replace(out)
        checksum_path(out).write_text(f"{digest}  {out.name}\n", encoding="utf-8")
    except (sqlite3.Error, OSError) as exc:
        for leftover in (tmp, Path(f"{tmp}-journal")):
            leftover.unlink(missing_ok=True)
        text = getattr(exc, "strerror", None) or str(exc)
        kind = "full" if "full" in text.lower() or "space" in text.lower() else "io"
        raise WriteFailed(f"could not write a backup to {folder} ({text}); no backup was made"
                          + ("; free some space and try again" if kind == "full" else ""), kind=kind) from None
    for old in list_backups(project_path)[:-keep]:
        old.unlink(missing_ok=True)
        checksum_path(old).unlink(missing_ok=True)
    return out


def checksum_path(backup: Path) -> Path:
    """Where a backup's SHA-256, recorded when it was made, is kept (`NAME.rageval.sha256`, sha256sum's format)."""
    return backup.with_name(backup.name + ".sha256")


def file_sha256(path: Path) -> str:
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def unverified(backup: Path) -> str | None:
    """The warning a backup with no recorded checksum is restored with (None: it has one): nothing shows that it is
    what was saved (issue 74: such a backup restored with no word)."""
    if checksum_path(backup).is_file():
        return None
    return (f"{backup.name} has no recorded checksum ({checksum_path(backup).name} is missing): nothing shows it is "
            "the file that was saved — a backup made before 0.4, a file from elsewhere, or one whose checksum was "
            "removed; it passed the full integrity check")


def checksum_problem(backup: Path) -> str | None:
    """Why a backup cannot be trusted to be what was saved (None: its checksum matches, or it has none — a backup
    made before 0.4, or a file from elsewhere). A flipped data byte passes SQLite's integrity_check; not this."""
    recorded = checksum_path(backup)
    if not recorded.is_file():
        return None
    try:
        expected = recorded.read_text(encoding="utf-8").split()[0].lower()
    except (OSError, UnicodeDecodeError, IndexError):
        return f"its checksum file {recorded.name} cannot be read"
    if file_sha256(backup) != expected:
        return "it changed since it was made (its SHA-256 differs from the one recorded then)"
    return None
