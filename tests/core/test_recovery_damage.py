"""Recovery does not depend on the damaged file (issue 45): a schema whose text is not UTF-8 is a damaged file, not
an internal error, for check, info and restore; a backup's checksum, recorded when it was made, is verified before
it is restored (a flipped data byte passes SQLite's integrity_check)."""

from __future__ import annotations

import shutil
import sqlite3

import pytest

from rageval_desktop.cli import main
from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.store import backup as backups
from rageval_desktop.core.store.restore import restore


def _flip(path, marker: bytes, offset: int, mask: int = 0x01) -> None:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    raw = bytearray(path.read_bytes())
    at = raw.find(marker)
    assert at > 0
    raw[at + offset] ^= mask
    path.write_bytes(bytes(raw))


@pytest.fixture
def saved(demo_file, tmp_path):
    path = tmp_path / "p.rageval"
    shutil.copy(demo_file, path)
    assert main(["backup", str(path)]) == 0
    return path, backups.list_backups(path)[0]


def test_a_schema_name_that_is_not_utf8_is_damage_and_a_good_backup_restores_it(saved, capsys):
    path, good = saved
    _flip(path, b"tablegolden_editsgolden_edits", 8, 0xFF)   # 'd' -> 0x9b: not UTF-8
    capsys.readouterr()
    assert main(["check", str(path)]) == 1
    assert main(["info", str(path)]) == 1
    err = capsys.readouterr().err
    assert "not valid UTF-8" in err and "internal error" not in err
    assert main(["restore", str(path), str(good)]) == 0
    assert main(["check", str(path)]) == 0


def test_a_backup_carries_its_checksum_and_a_changed_one_is_refused(saved):
    path, good = saved
    assert backups.checksum_path(good).read_text().split()[0] == backups.file_sha256(good)
    changed = good.with_name(good.name.replace(".rageval", "-copy.rageval"))
    shutil.copy(good, changed)
    shutil.copy(backups.checksum_path(good), backups.checksum_path(changed))
    conn = sqlite3.connect(changed)
    question = conn.execute("SELECT question FROM golden_rows ORDER BY id LIMIT 1").fetchone()[0]
    conn.close()
    _flip(changed, question.encode(), 2)              # one byte of one row: integrity_check cannot see it
    from rageval_desktop.core.store import integrity

    assert integrity.check(changed, full=True).ok
    with pytest.raises(RagevalError, match="changed since it was made"):
        restore(path, changed)
    report = restore(path, good)                       # the untouched one restores
    assert report is not None


def test_a_backup_without_a_checksum_restores_only_with_a_warning_naming_it(saved, capsys):
    """Issue 74: a backup whose .sha256 was missing restored with no word."""
    path, good = saved
    assert restore(path, good).warnings == []                  # with its checksum: nothing to say
    backups.checksum_path(good).unlink()
    report = restore(path, good)
    assert len(report.warnings) == 1 and good.name in report.warnings[0] and "no recorded checksum" in \
        report.warnings[0]
    capsys.readouterr()
    assert main(["restore", str(path), str(good)]) == 0
    assert f"warning: {good.name} has no recorded checksum" in capsys.readouterr().err


def test_rotation_removes_the_checksum_with_its_backup(tmp_path):
    from rageval_desktop.core.store.project import Project

    with Project.create(tmp_path / "r.rageval") as project:
        for i in range(4):
            backups.backup_to_rotation(project.reader(), project.path, f"n{i}", keep=2)
    left = sorted(p.name for p in backups.backup_dir(tmp_path / "r.rageval").iterdir())
    assert len(left) == 4 and sum(n.endswith(".sha256") for n in left) == 2
