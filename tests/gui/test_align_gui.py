"""The Audit page's "Align on ratings": cross-validated on a loopback server, then the aligned judge on request."""

from __future__ import annotations

import re
import shutil

from PySide6.QtWidgets import QMessageBox

from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.judges.registry import add_judge
from rageval_desktop.core.store.project import Project
from tests.gui.conftest import close_window, open_window
from tests.support.fake_openai import FakeOpenAI, Reply, question_of


def test_align_on_ratings_from_the_audit_page(qtbot, demo_file, tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY", "sk-test-not-stored-123456")
    copy = tmp_path / "demo.rageval"
    shutil.copy(demo_file, copy)
    with Project.open(copy) as p:
        humans = {q: s for q, s in p.reader().execute(
            "SELECT rr.question, MAX(h.score) FROM human_ratings h JOIN run_rows rr ON rr.id = h.run_row_id "
            "WHERE h.metric = 'correctness' AND h.withdrawn_at IS NULL GROUP BY rr.question")}
        rated = p.reader().execute("SELECT DISTINCT h.run_row_id, rr.question FROM human_ratings h JOIN run_rows rr "
                                   "ON rr.id = h.run_row_id WHERE h.metric = 'correctness'").fetchall()

    def responder(body: dict, n: int) -> Reply:
        q = question_of(body)
        human = next(s for question, s in humans.items() if " ".join(question.split()) == " ".join(q.split()))
        shown = "<examples>" in body["messages"][-1]["content"]
        return Reply(f"[RESULT] {int(human if shown else min(5, human + 1))}")

    with FakeOpenAI(responder) as server:
        with Project.open(copy) as p:
            judge = add_judge(p, "gpt-judge", "correctness", "llm", model="gpt-4o-mini", base_url=server.url,
                              api_key_ref="JUDGE_KEY", params={"timeout": 5.0, "max_retries": 1})
            with p.write("judgments") as w:
                w.executemany("INSERT INTO judgments (judge_id, run_row_id, idem_key, status, score, created_at) "
                              "VALUES (?, ?, ?, 'ok', ?, ?)", [(judge.id, r, f"k{r}", min(5.0, humans[q] + 1),
                                                                utcnow()) for r, q in rated])
        window = open_window(qtbot, copy)
        try:
            with qtbot.waitSignal(window.read_finished, timeout=30_000, check_params_cb=lambda page: page == "audit"):
                window.select_nav("audit")
            audit = window.page("audit")
            names = [audit.model.record(r)["judge"] for r in range(audit.model.rowCount())]
            audit.table.selectRow(names.index("gpt-judge"))
            shown: list[str] = []
            monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)

            def choose(box: QMessageBox) -> int:
                shown.append(box.windowTitle() + "\n" + box.informativeText())
                next(b for b in box.buttons() if b.text() == "Create aligned judge").click()
                return 0

            monkeypatch.setattr(QMessageBox, "exec", choose)
            with qtbot.waitSignal(window.task_finished, timeout=60_000):
                audit.align_button.click()
            qtbot.waitUntil(lambda: window.project.reader().execute(
                "SELECT COUNT(*) FROM judges WHERE name = 'gpt-judge-aligned'").fetchone()[0] == 1, timeout=20_000)
            assert shown and "improved" in shown[0] and re.search(r"before \d\.\d{3}", shown[0])
            assert server.calls == len(rated)
        finally:
            close_window(qtbot, window)
