"""A project whose judge stored a key (before its settings refused one) opens with the key removed and a notice
that says so by the setting's name (never its value)."""

from __future__ import annotations

import shutil
import sqlite3

from tests.gui.conftest import close_window, open_window, save_shots

KEY = "sk-proj-AbCdEf1234567890XyZ9876"


def test_opening_removes_a_stored_key_and_says_so(qtbot, demo_file, tmp_path):
    path = tmp_path / "old.rageval"
    shutil.copy(demo_file, path)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE judges SET params = json_set(params, '$.api_key', ?) WHERE id = 1", (KEY,))
    conn.commit()
    conn.close()
    w = open_window(qtbot, path)
    try:
        bar = w.notice_bar
        assert bar.isVisible() and bar.tone == "warning"
        assert bar.label.text().startswith("Removed secrets stored in judges' settings: judge 'minilm-similarity' "
                                           "(api_key).") and KEY not in bar.label.text()
        w.resize(1280, 720)
        save_shots(qtbot, w, "stored-secret-notice")
    finally:
        close_window(qtbot, w)
    assert KEY.encode() not in path.read_bytes()
