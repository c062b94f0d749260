"""Read paths never write (issue 45): `metrics`, `compare`, `gate`, `report`, `failures`, `agreement` and
`rv.open(read_only=True)` read a project of an older schema through a migrated temporary copy — the file, its
sidecars and its backups folder stay as they were; `rageval migrate` upgrades it on purpose, after a backup."""

from __future__ import annotations

import json
import sqlite3

import pytest

from rageval_desktop import api
from rageval_desktop.cli import main
from rageval_desktop.core.store import backup as backups
from rageval_desktop.core.store.files import APPLICATION_ID
from rageval_desktop.core.store.schema import MIGRATIONS, SCHEMA_VERSION
from tests.conftest import file_digest


def _old_project(path):
    """A schema-1 project with a golden row and two runs of it, written as release 0.1 wrote them."""
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.executescript(MIGRATIONS[0].sql + "\nPRAGMA user_version = 1;")
    conn.execute("INSERT INTO meta VALUES ('name', 'old')")
    conn.execute("INSERT INTO golden_rows (id, question, question_norm, gold_answer, gold_chunk_ids, slice_tag, "
                 "created_at, updated_at) VALUES ('g1', 'What is 2+2?', 'what is 2+2', '4', '[\"c1\"]', 'easy', "
                 "'2025-01-01T00:00:00', '2025-01-01T00:00:00')")
    for rid, name in ((1, "v1"), (2, "v2")):
        conn.execute("INSERT INTO runs (id, name, created_at) VALUES (?, ?, '2025-01-01T00:00:00')", (rid, name))
        conn.execute("INSERT INTO run_rows (run_id, position, external_id, golden_id, question, answer) "
                     "VALUES (?, 0, 'g1', 'g1', 'What is 2+2?', '4')", (rid,))
    conn.commit()
    conn.close()
    return path


def _untouched(path, digest):
    assert file_digest(path) == digest
    assert not backups.list_backups(path)
    assert not any(p.name != path.name for p in path.parent.iterdir()), list(path.parent.iterdir())


def test_rv_open_read_only_reads_an_older_file_through_a_migrated_copy(tmp_path):
    path = _old_project(tmp_path / "old.rageval")
    digest = file_digest(path)
    with api.open(path, read_only=True) as project:
        assert project.read_copy_of == path and project.path == path
        assert project.core.schema_version() == SCHEMA_VERSION
        assert project.runs() == ["v1", "v2"]
        copy = project.core.path
        assert copy != path and copy.exists()
    assert not copy.parent.exists()                        # the copy goes with the project
    _untouched(path, digest)


@pytest.mark.parametrize("argv", [["metrics", "{p}", "--run", "v1", "--json"],
                                  ["compare", "{p}", "--baseline", "v1", "--candidate", "v2", "--json"],
                                  ["gate", "{p}", "--baseline", "v1", "--candidate", "v2"],
                                  ["failures", "{p}", "--run", "v1"],
                                  ["report", "{p}", "--run", "v1", "--out", "{out}"],
                                  ["info", "{p}"],
                                  # listing and showing only read, beside the actions that write
                                  ["judges", "list", "{p}", "--json"], ["settings", "show", "{p}"],
                                  ["prices", "list", "{p}"], ["guidelines", "{p}", "--metric", "correctness"],
                                  ["golden", "versions", "{p}"], ["golden", "balance", "{p}"]])
def test_read_commands_never_migrate_the_file(tmp_path, capsys, argv):
    folder = tmp_path / "repo"
    folder.mkdir()
    path = _old_project(folder / "old.rageval")
    digest = file_digest(path)
    code = main([a.format(p=path, out=tmp_path / "r.md") for a in argv])
    err = capsys.readouterr().err
    assert code in (0, 1, 3), err                          # a verdict or a result, never a tool failure
    assert "Traceback" not in err and "internal error" not in err
    _untouched(path, digest)
    if argv[0] in ("metrics", "compare", "gate", "failures", "report"):
        assert "read through a migrated temporary copy, the file is unchanged" in err


def test_migrate_upgrades_on_purpose_after_a_backup(tmp_path, capsys):
    path = _old_project(tmp_path / "old.rageval")
    assert main(["migrate", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == {"path": str(path), "from": 1, "to": SCHEMA_VERSION, "migrated": True, "values_kept_for": []}
    saved = backups.list_backups(path)
    assert len(saved) == 1 and "pre-migration-v1" in saved[0].name
    assert main(["migrate", str(path)]) == 0
    assert "already at schema" in capsys.readouterr().out
