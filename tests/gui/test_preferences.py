"""Preferences: yours go to the user settings, the project's (retirement policy, prices) through core ops."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog

from rageval_desktop.core.judges.prices import batch_price, price
from rageval_desktop.core.review.settings import policy
from rageval_desktop.gui.prefs import settings
from rageval_desktop.gui.views.preferences import PreferencesDialog
from tests.gui.conftest import close_window


def test_preferences_round_trip(qtbot, window, monkeypatch):
    w = window

    def fill(dialog: PreferencesDialog) -> int:
        dialog.reviewer.setText("noor")
        dialog.theme.setCurrentIndex(dialog.theme.findData("dark"))
        dialog.font_size.setValue(12)
        dialog.threshold.setValue(0.75)
        dialog.min_n.setValue(40)
        dialog.selective_alpha.setValue(0.05)
        lines = dialog.prices.toPlainText().splitlines()
        # a new live price for a bundled model, its shown (derived) batch prices left as they were
        mini = next(n for n, line in enumerate(lines) if line.split()[0] == "gpt-4o-mini")
        lines[mini] = "gpt-4o-mini  2  4  " + "  ".join(lines[mini].split()[3:5])
        dialog.prices.setPlainText("\n".join(lines) + "\nmy-local-model 0 0\nmy-batch-model 1 2 0.2 0.4\n")
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(PreferencesDialog, "exec", fill)
    with qtbot.waitSignal(w.task_finished, timeout=10_000) as done:
        w.show_preferences()
    assert done.args == ["done"]
    assert settings().value("reviewer") == "noor" and w.reviewer() == "noor"
    assert int(settings().value("font_size")) == 12 and bool(w.window().palette().window().color().lightness() < 100)
    pol = policy(w.project)
    assert (pol.threshold, pol.min_n, pol.selective_alpha, pol.selective_delta) == (0.75, 40, 0.05, 0.1)
    assert price(w.project, "my-local-model") == (0.0, 0.0)
    assert batch_price(w.project, "gpt-4o-mini") == (1.0, 2.0)       # still half the (new) live price
    assert batch_price(w.project, "my-batch-model") == (0.2, 0.4)    # set explicitly
    settings().setValue("theme", "system")
    settings().setValue("font_size", 10)
    from rageval_desktop.gui.appearance import apply_appearance

    apply_appearance()  # the app is shared by the other tests
    close_window(qtbot, w)


def test_command_palette_finds_and_runs_a_command(qtbot, window):
    from PySide6.QtCore import Qt

    w = window
    w.show_palette()
    palette = w.palette_dialog
    names = [palette.list.item(i).text() for i in range(palette.list.count())]
    assert any(n.startswith("Import File") and "Ctrl+I" in n for n in names)
    qtbot.keyClicks(palette.filter, "go jobs")
    assert palette.list.count() == 1 and palette.list.item(0).text().startswith("Go to Jobs")
    qtbot.keyClick(palette.filter, Qt.Key.Key_Return)
    assert w.pages.currentWidget() is w.page("jobs")
    close_window(qtbot, w)


def test_the_palette_runs_page_actions(qtbot, window):
    """Ctrl+K also finds the pages' buttons (run judges, new sample, record audit, golden tools) and runs them."""
    from PySide6.QtCore import Qt

    w = window
    w.show_palette()
    names = [w.palette_dialog.list.item(i).text() for i in range(w.palette_dialog.list.count())]
    for wanted in ("Judges › Run all active judges", "Review › New sample", "Audit › Record audit and apply",
                   "Export Report"):
        assert any(n.startswith(wanted) for n in names), wanted
    assert sum(n.startswith("Golden set › ") for n in names) >= 5
    qtbot.keyClicks(w.palette_dialog.filter, "review new sample")
    assert w.palette_dialog.list.count() == 1
    from rageval_desktop.core.review.sampling import list_samples

    before = len(list_samples(w.project))
    with qtbot.waitSignal(w.task_finished, timeout=20_000):
        qtbot.keyClick(w.palette_dialog.filter, Qt.Key.Key_Return)
    assert w.pages.currentWidget() is w.page("review")
    qtbot.waitUntil(lambda: len(list_samples(w.project)) == before + 1, timeout=10_000)
    qtbot.waitUntil(lambda: w.page("review").sample is not None and w.page("review").sample.id == before + 1,
                    timeout=10_000)
    close_window(qtbot, w)


def test_the_palette_finds_the_run_tables_filters_and_the_theme(qtbot, window):
    """Was: Ctrl+K found neither the triage controls (disagreements, review these, filters) nor the theme
    (issue 31)."""
    from PySide6.QtCore import Qt

    from rageval_desktop.gui.appearance import apply_appearance

    w = window
    w.select(run="v2")
    w.show_palette()
    names = [w.palette_dialog.list.item(i).text() for i in range(w.palette_dialog.list.count())]
    for wanted in ("Run table › Disagreements", "Run table › Review these", "Run table › Clear filters",
                   "Run table › Filter by judge score…", "Theme: Dark", "Compare › Record decision",
                   "Team › "):
        assert any(n.replace("&", "").startswith(wanted) for n in names), wanted
    qtbot.keyClicks(w.palette_dialog.filter, "disagreements")
    qtbot.keyClick(w.palette_dialog.filter, Qt.Key.Key_Return)
    assert w.rows.triage.disagree.isChecked() and w.pages.currentWidget() is w.rows_page
    w.show_palette()
    qtbot.keyClicks(w.palette_dialog.filter, "theme dark")
    qtbot.keyClick(w.palette_dialog.filter, Qt.Key.Key_Return)
    assert settings().value("theme") == "dark" and w.palette().window().color().lightness() < 100
    settings().setValue("theme", "system")
    apply_appearance()
    close_window(qtbot, w)
