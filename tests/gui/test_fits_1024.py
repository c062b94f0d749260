"""Every page fits a 1024×768 window (issue 31: the review page forced the window to 1,093 px, the Judges page's run
bar to 1,058 px): no page's minimum width is wider than the window."""

from __future__ import annotations

import shutil

import pytest

from rageval_desktop.gui.pages import PAGES
from tests.gui.conftest import close_window, open_window, settle


@pytest.mark.slow      # visits every page (about 4 s)
def test_every_page_fits_a_1024_px_window(qtbot, demo_file, tmp_path):
    path = tmp_path / "d.rageval"
    shutil.copy(demo_file, path)
    w = open_window(qtbot, path)
    try:
        w.resize(1024, 768)
        wide = {}
        for key in ["golden", *[p.key for p in PAGES]]:
            w.select_nav(key)
            qtbot.wait(100)
            if w.minimumSizeHint().width() > 1024 or w.width() > 1024:
                wide[key] = (w.minimumSizeHint().width(), w.width())
        w.select(run="v2")
        settle(qtbot, w)
        qtbot.wait(100)
        if w.minimumSizeHint().width() > 1024:
            wide["run table"] = (w.minimumSizeHint().width(), w.width())
        assert wide == {}
    finally:
        close_window(qtbot, w)
