"""The Judges page shows each judge's licence, read off the GUI thread (issue 30)."""

from __future__ import annotations

import shutil

from rageval_desktop.core.judges.registry import list_judges
from rageval_desktop.core.review import agreement
from rageval_desktop.core.review.licence import record_audit
from rageval_desktop.core.store.project import Project
from tests.gui.conftest import close_window, open_window, save_shots


def test_the_judges_page_shows_each_licence(qtbot, demo_file, tmp_path):
    path = tmp_path / "d.rageval"
    shutil.copy(demo_file, path)
    with Project.open(path) as p:      # the audits recorded, as `rageval agreement --apply` does
        for judge in list_judges(p):
            record_audit(p, agreement.agreement(p, judge))
    w = open_window(qtbot, path)
    with qtbot.waitSignal(w.read_finished, timeout=20_000):
        w.select_nav("judges")
    view = w.page("judges")
    qtbot.waitUntil(lambda: all(r["licence"] != "licence: reading…" for r in view.model.records), timeout=20_000)
    shown = {r["name"]: r["licence"] for r in view.model.records}
    said = {r["name"]: r["licence__tip"] for r in view.model.records}
    # κ 0.49: retired as a whole, but kept for the rows it is sure of; κ 0.90 and sure of every row: a selective
    # level deciding every row is a whole-run licence, held to the whole run's bar (issue 75)
    assert shown["minilm-similarity"] == "selective · decides 45% of rated rows (confidence ≥ 0.42)"
    assert shown["answer-recall"] == "monitor · decides (nearly) every row: held to the whole-run bar"
    assert said["minilm-similarity"].startswith("selective: gates only the rows it decides — confidence ≥ 0.42")
    assert said["answer-recall"].endswith("decides 100% of the rated rows: that is a licence for the whole run, held "
                                          "to the whole run's bar)")
    for width, height in ((1280, 720), (1024, 768)):
        w.resize(width, height)
        save_shots(qtbot, w, f"judges-licences-{width}")
    close_window(qtbot, w)
