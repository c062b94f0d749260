"""A golden import in the app saves the rows at once; the near-duplicate check follows in the background and its
finding comes back as a notice with "Review near-duplicates" (issue 15)."""

from __future__ import annotations

from rageval_desktop.core.golden import dedupe
from rageval_desktop.core.importers import import_golden
from tests.core.test_dedupe_incremental import BagOfWords, _golden
from tests.gui.conftest import close_window, open_window


def test_import_then_notice_then_review(qtbot, tmp_path, monkeypatch):
    from rageval_desktop.core.judges import embedded
    from rageval_desktop.core.store.project import Project
    from rageval_desktop.gui.views.common import TextDialog

    fake = BagOfWords()
    monkeypatch.setattr(embedded, "load_model", lambda model_id=embedded.MINILM_ID: fake)
    path = tmp_path / "p.rageval"
    with Project.create(path) as p:
        import_golden(p, _golden(tmp_path / "a.jsonl", ["How do I reverse a list in python?", "Largest ocean?"]))
        dedupe.check_new(p)
    w = open_window(qtbot, path)
    with qtbot.waitSignal(w.read_finished, timeout=20_000, check_params_cb=lambda page: page == "near-duplicates"):
        w.files.import_file(_golden(tmp_path / "b.jsonl", ["please reverse a list in python?", "How tall is Everest?"]),
                      ask=False, kind="golden")
    assert w.project.reader().execute("SELECT COUNT(*) FROM golden_rows").fetchone()[0] == 4
    bar = w.notice_bar
    assert bar.isVisible() and bar.tone == "warning" and bar.topic == "near-duplicates"
    assert "1 of the 2 new question(s) nearly repeat golden rows (1 pair(s), cosine ≥ 0.9)" in bar.label.text()
    assert [b.text() for b in bar.buttons] == ["Review near-duplicates"]
    assert dedupe.unchecked(w.project) == []
    w.resize(1280, 720)
    w.grab().save(str(tmp_path / "notice.png"))
    bar.buttons[0].click()
    dialog = next(d for d in w.findChildren(TextDialog) if d.isVisible())
    from PySide6.QtWidgets import QPlainTextEdit

    shown = dialog.findChild(QPlainTextEdit).toPlainText()
    assert "please reverse a list in python?" in shown and "How do I reverse a list in python?" in shown
    dialog.close()
    with qtbot.waitSignal(w.read_finished, timeout=20_000, check_params_cb=lambda page: page == "near-duplicates"):
        w.files.import_file(_golden(tmp_path / "c.jsonl", ["Copy a file?"]), ask=False, kind="golden")
    assert not bar.isVisible()                                  # nothing found: no notice, a status message
    assert "no near-duplicates among the 1 new question(s)" in w.statusBar().currentMessage()
    close_window(qtbot, w)
