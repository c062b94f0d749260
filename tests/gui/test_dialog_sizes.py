"""Issue 48: at 1024x768 the import wizard was 1,040 px wide and the shortcuts sheet 757 px tall — off the screen.
Every dialog opens within 1000x700 and within the window it opens over; what does not fit scrolls inside it."""

from __future__ import annotations

from rageval_desktop.core.demo import write_demo_files
from rageval_desktop.core.judges.rubrics import library
from rageval_desktop.gui.views.common import DIALOG_MOST, TextDialog
from rageval_desktop.gui.views.import_dialog import ImportDialog
from rageval_desktop.gui.views.rubric_editor import RubricEditor


def fits(dialog, window) -> bool:
    size = dialog.size()
    return size.width() <= min(DIALOG_MOST.width(), window.width()) and \
        size.height() <= min(DIALOG_MOST.height(), window.height())


def test_every_dialog_fits_a_1024_by_768_window(window, qtbot, tmp_path):
    window.resize(1024, 768)
    qtbot.waitUntil(lambda: window.width() == 1024, timeout=5_000)
    window.files.show_shortcuts()
    assert fits(window.files.shortcut_sheet, window), window.files.shortcut_sheet.size()
    window.files.shortcut_sheet.reject()
    run_file = next(p for p in write_demo_files(tmp_path) if p.name == "outputs-v2.jsonl")
    for dialog in (ImportDialog(run_file, set(), window, window.project),
                   RubricEditor(next(iter(library().values())), {}, window),
                   TextDialog("chart", "text", window, png=b"")):
        qtbot.addWidget(dialog)
        assert fits(dialog, window), (type(dialog).__name__, dialog.size())
    big = TextDialog("chart", "text", window, png=b"x")     # with a chart it asked for 900x720
    qtbot.addWidget(big)
    assert fits(big, window), big.size()
