"""Secrets a project stored before a judge's settings refused them (`--param api_key=sk-…`, a header holding a
bearer key): every display hides them, a read-only open leaves the file as it is and says so, and the first
open to write removes them — from the file's bytes too — recording the settings' names, never their values."""

from __future__ import annotations

import json
import shutil
import sqlite3

from rageval_desktop.cli import main
from rageval_desktop.core.base.secret_shapes import MARK, holds_a_key, stored_secrets, without_secrets
from rageval_desktop.core.judges.registry import judge_summary, list_judges
from rageval_desktop.core.store.project import Project
from tests.conftest import file_digest

KEY = "sk-proj-AbCdEf1234567890XyZ9876"
HASH = "e4ce9877abf3edfe10b0d82785e83bdcb973e22e"      # a commit hash: long, digits and letters, and no secret


def _with_stored_key(demo_file, tmp_path):
    """A copy of the demo whose first judge took a key as release 0.x stored it."""
    path = tmp_path / "old.rageval"
    shutil.copy(demo_file, path)
    conn = sqlite3.connect(path)
    judge_id, params = conn.execute("SELECT id, params FROM judges ORDER BY id LIMIT 1").fetchone()
    settings = json.loads(params)
    settings.update(api_key=KEY, revision=HASH, headers={"Authorization": f"Bearer {KEY}", "X-Team": "eval"},
                    stops=["###", KEY])
    conn.execute("UPDATE judges SET params = ? WHERE id = ?", (json.dumps(settings), judge_id))
    conn.commit()
    conn.close()
    return path


def test_what_is_a_stored_secret():
    settings = {"api_key": KEY, "revision": HASH, "headers": {"Authorization": f"Bearer {KEY}", "X-Team": "eval"},
                "stops": ["###", KEY], "max_tokens": 50, "model": "gpt-4o-mini", "path": "/models/sk-local-model"}
    assert stored_secrets(settings) == ["api_key", "headers.Authorization", "stops"]
    assert without_secrets(settings) == {"revision": HASH, "headers": {"X-Team": "eval"}, "stops": ["###"],
                                         "max_tokens": 50, "model": "gpt-4o-mini", "path": "/models/sk-local-model"}
    assert not holds_a_key(HASH) and not holds_a_key("sk-short") and holds_a_key(f"Bearer {KEY}")
    assert not holds_a_key("api-gateway-production-east") and not holds_a_key("key-value-store-for-caching")


def test_a_read_only_open_hides_them_and_changes_nothing(demo_file, tmp_path):
    path = _with_stored_key(demo_file, tmp_path)
    digest = file_digest(path)
    with Project.open(path, read_only=True) as project:
        assert "judge 'minilm-similarity' (api_key, headers.Authorization, stops)" in project.opening_notes[0]
        shown = judge_summary(list_judges(project)[0])
        assert KEY not in json.dumps(shown)
        assert shown["params"]["api_key"] == MARK and shown["params"]["revision"] == HASH
    assert file_digest(path) == digest


def test_opening_to_write_removes_them_from_the_file(demo_file, tmp_path):
    path = _with_stored_key(demo_file, tmp_path)
    with Project.open(path) as project:
        note = project.opening_notes[0]
        assert note.startswith("removed secrets stored in judges' settings: judge 'minilm-similarity' (api_key, "
                               "headers.Authorization, stops)") and KEY not in note
        params = list_judges(project)[0].params
        assert params["revision"] == HASH and params["headers"] == {"X-Team": "eval"} and "api_key" not in params
        audit = project.reader().execute(
            "SELECT details FROM audit_log WHERE action = 'remove stored secret'").fetchall()
        assert [json.loads(d) for (d,) in audit] == [{"settings": ["api_key", "headers.Authorization", "stops"]}]
    assert KEY.encode() not in path.read_bytes()           # not left in the file's free space either
    with Project.open(path) as project:
        assert project.opening_notes == []                  # nothing left to remove: nothing written, nothing said


def test_the_python_api_says_it(demo_file, tmp_path):
    from rageval_desktop import api

    path = _with_stored_key(demo_file, tmp_path)
    with api.open(path, read_only=True) as project:
        assert "opening the project to write removes them" in project.opening_notes[0]
    with api.open(path) as project:
        assert project.opening_notes[0].startswith("removed secrets stored in judges' settings")


def test_the_cli_says_it_and_never_prints_the_key(demo_file, tmp_path, capsys):
    path = _with_stored_key(demo_file, tmp_path)
    assert main(["judges", "list", str(path), "--json"]) == 0
    out, err = capsys.readouterr()
    assert KEY not in out + err and MARK in out and "opening the project to write removes them" in err
    assert main(["backup", str(path)]) == 0                 # opened to write: removed, and said
    out, err = capsys.readouterr()
    assert "removed secrets stored in judges' settings" in err and KEY not in out + err
    assert main(["judges", "list", str(path), "--json"]) == 0
    out, err = capsys.readouterr()
    assert MARK not in out and err == ""
