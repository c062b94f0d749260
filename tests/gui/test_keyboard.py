"""Keyboard reachability: every button of every page takes Tab focus and has a mnemonic (Alt+letter), and every
page is reachable from the Go menu / navigation without a mouse."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton

from tests.gui.conftest import close_window

PAGES = ("dashboard", "compare", "failures", "judges", "jobs", "review", "audit")



def test_every_button_is_reachable_by_keyboard(qtbot, window):
    w = window
    go = {a.text().replace("&", "") for a in w.menuBar().actions()[3].menu().actions()}
    assert {f"Go to {p.title()}" for p in PAGES} <= go
    missing = []
    for kind in PAGES:
        page = w.page(kind)
        for button in page.findChildren(QPushButton):
            if not button.focusPolicy() & Qt.FocusPolicy.TabFocus:
                missing.append(f"{kind}: '{button.text()}' takes no Tab focus")
            if "&" not in button.text():
                missing.append(f"{kind}: '{button.text()}' has no mnemonic")
    for button in w.rows.golden_bar.findChildren(QPushButton):
        if "&" not in button.text():
            missing.append(f"golden: '{button.text()}' has no mnemonic")
    assert missing == []
    # the navigation list takes focus with Ctrl+1 and moves with the arrow keys
    qtbot.keyClick(w, Qt.Key.Key_1, Qt.KeyboardModifier.ControlModifier)
    assert w.nav.hasFocus() or w.focusWidget() is w.nav
    close_window(qtbot, w)
