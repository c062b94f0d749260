"""The Judges page shows each judge's licence, read off the GUI thread (issue 30)."""

from __future__ import annotations

import shutil

from rageval_desktop.core.judges.registry import list_judges
from rageval_desktop.core.review import agreement
from rageval_desktop.core.store.project import Project
from tests.gui.conftest import close_window, open_window


def test_the_judges_page_shows_each_licence(qtbot, demo_file, tmp_path):
    path = tmp_path / "d.rageval"
    shutil.copy(demo_file, path)
    with Project.open(path) as p:      # the audits recorded, as `rageval agreement --apply` does
        for judge in list_judges(p):
            agreement.apply(p, agreement.agreement(p, judge))
    w = open_window(qtbot, path)
    with qtbot.waitSignal(w.read_finished, timeout=20_000):
        w.select_nav("judges")
    view = w.judges_view
    qtbot.waitUntil(lambda: all(r["licence"] != "…" for r in view.model.records), timeout=20_000)
    shown = {r["name"]: r["licence"] for r in view.model.records}
    assert shown["minilm-similarity"] == "explore (retired)"
    assert shown["answer-recall"].startswith("monitor (lower bound 0.6")
    close_window(qtbot, w)
