"""Review packs in the app: File → Export Review Packs… writes one file per reviewer; the reviewer's window rates
a pack with the same keys (blind for good: a pack has no judge) and saves into the pack; File → Import Review
Packs… merges the ratings. With RAGEVAL_SCREENSHOT_DIR set, the pack window is saved there, light and dark."""

from __future__ import annotations

from types import SimpleNamespace

from PySide6.QtCore import Qt

from rageval_desktop.core.review.packs import Pack
from rageval_desktop.core.review.sampling import create_sample
from rageval_desktop.core.store.project import Project
from rageval_desktop.gui import workers
from rageval_desktop.gui.pack_window import PackWindow
from tests.conftest import pack_ids
from tests.gui.conftest import save_shots


def test_export_rate_in_the_pack_window_and_import(window, qtbot, tmp_path):
    with Project.open(window.project.path) as other:   # a second connection, as another process would
        sample = create_sample(other, "v2", "correctness", size=6, seed=2)
    window.menus.pack_export_action.trigger()
    dialog = window.files.pack_dialog
    from PySide6.QtWidgets import QLabel

    labels = [label.text() for label in dialog.findChildren(QLabel)]
    folder = next(label for label in dialog.findChildren(QLabel) if label.text() == "&Folder:")
    assert folder.buddy() is dialog.folder and "&Folder:" in labels      # a mnemonic, not a literal "&"
    dialog.sample_box.setCurrentIndex(dialog.sample_box.findData(sample.id))
    dialog.reviewers.setText("ann, bob")
    dialog.overlap.setValue(2)
    dialog.folder.setText(str(tmp_path / "packs"))
    # what each pack hides, said before the export (issue 77): the project's rates, 1 in 10 gold and 1 in 20 retests
    assert dialog.hides.text().startswith("Each pack holds up to 6 rows of the sample, and hides among them about 1 "
                                          "gold item(s) and 0 retest(s) (one row in 10 a gold item, one in 20 a ")
    save_shots(qtbot, dialog, "pack-export")
    with qtbot.waitSignal(window.task_finished, timeout=20_000):
        dialog.buttons.accepted.emit()
    paths = sorted((tmp_path / "packs").glob("*.ragevalpack"))
    assert [p.name for p in paths] == [f"sample{sample.id}-ann.ragevalpack", f"sample{sample.id}-bob.ragevalpack"]

    pack_window = PackWindow(paths[0])
    qtbot.addWidget(pack_window)
    pack_window.show()
    view = pack_window.review_view
    qtbot.waitUntil(lambda: view.sample is not None, timeout=20_000)        # read on the read lane
    ids = pack_ids(window.project, SimpleNamespace(pack_id=Pack(paths[0]).meta["pack_id"]))
    assert view.sample is not None and view.sample.row_ids == [ids[r] for r in sample.row_ids]
    assert not view.new_button.isVisible() and not view.prompt_button.isVisible()   # rate only
    view.setFocus()
    with qtbot.waitSignal(view.rated, timeout=10_000):
        qtbot.keyClicks(view, "4")
    assert "saved in the pack: you 4" in view.reveal.text() and "JUDGMENTS" not in view.detail.toPlainText()
    with qtbot.waitSignal(view.rated, timeout=10_000):
        qtbot.keyClicks(view, "2")
    with qtbot.waitSignal(view.rated, timeout=10_000):
        qtbot.keyClick(view, Qt.Key.Key_U)                 # undo the 2
    assert [(r[2], r[7] is not None) for r in Pack(paths[0]).ratings()] == [(4.0, False), (2.0, True)]
    save_shots(qtbot, pack_window, "review-pack")
    pack_window.close()
    qtbot.waitUntil(lambda: workers.active() == 0, timeout=10_000)

    with qtbot.waitSignal(window.task_finished, timeout=20_000):
        window.files.import_packs([str(paths[0])])
    got = window.project.reader().execute(
        "SELECT reviewer, score, withdrawn_at IS NOT NULL FROM human_ratings WHERE origin LIKE 'pack:%' ORDER BY id"
    ).fetchall()
    assert got == [("ann", 4.0, 0), ("ann", 2.0, 1)]


def test_a_file_that_is_not_a_pack_is_refused_by_the_pack_window(tmp_path):
    import pytest

    from rageval_desktop.core.review.packs import PackRefused

    bad = tmp_path / "x.ragevalpack"
    bad.write_text("not a pack")
    with pytest.raises(PackRefused, match="not a review pack"):
        PackWindow(bad)
