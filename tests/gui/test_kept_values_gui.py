"""The app keeps a large run's values (core.metrics.values) again after the golden set changed — in the background,
once the edits pause — and when it opens a file whose runs lost them."""

from __future__ import annotations

import shutil

from rageval_desktop.core.metrics import values
from rageval_desktop.core.store.changes import Area
from rageval_desktop.gui import workers
from tests.gui.conftest import close_window, open_window


def _kept(project) -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for rid, part in project.reader().execute("SELECT run_id, part FROM run_values WHERE data IS NOT NULL"):
        out.setdefault(rid, set()).add(part)
    return out


def _runs(project) -> list[int]:
    return [rid for (rid,) in project.reader().execute("SELECT id FROM runs ORDER BY id")]


def test_the_app_keeps_again_what_a_golden_edit_took_away(qtbot, demo_file, tmp_path, monkeypatch):
    monkeypatch.setattr(values, "KEEP_FROM", 1)       # the demo's runs count as large
    copy = tmp_path / "demo.rageval"
    shutil.copy(demo_file, copy)
    w = open_window(qtbot, copy)
    try:
        runs = _runs(w.project)
        everything = {rid: set(values.PARTS) for rid in runs}
        # opened with none kept: the upkeep keeps them once the window is up
        qtbot.waitUntil(lambda: _kept(w.project) == everything and workers.active() == 0, timeout=20_000)
        w.upkeep_timer.setInterval(50)
        golden = w.project.reader().execute("SELECT golden_id FROM run_rows WHERE golden_id IS NOT NULL "
                                            "ORDER BY id LIMIT 1").fetchone()[0]
        with w.project.write("test: a golden edit", changed=(Area.GOLDEN,)) as write:
            write.execute("UPDATE golden_rows SET gold_chunk_ids = '[\"elsewhere\"]' WHERE id = ?", (golden,))
        assert _kept(w.project) != everything        # the edit took the linked runs' parts away ...
        assert w.upkeep_timer.isActive()
        qtbot.waitUntil(lambda: _kept(w.project) == everything and workers.active() == 0, timeout=20_000)
    finally:                                         # ... and the app kept them again
        close_window(qtbot, w)
