"""An undo never overwrites later work and never bypasses a rule (issue 45): what an operation left is kept with its
inverse; an undo finds it still so, or refuses and names who changed it since."""

from __future__ import annotations

import pytest

from rageval_desktop.cli import main
from rageval_desktop.core import ops
from rageval_desktop.core.golden.edits import row
from rageval_desktop.core.importers import import_golden
from rageval_desktop.core.judges.registry import get_judge
from rageval_desktop.core.review import agreement
from rageval_desktop.core.store.project import Project


def _colleague(demo) -> Project:
    return Project.open(demo.path, actor="bea")


def test_undo_refuses_to_write_over_a_colleagues_later_import_of_the_row(demo, tmp_path):
    gid = demo.reader().execute("SELECT id FROM golden_rows ORDER BY id LIMIT 1").fetchone()[0]
    question = row(demo, gid)["question"]
    done = ops.run(demo, ops.EditGoldenRow(id=gid, fields={"gold_answer": "Mine."}, reason="clearer"))
    (tmp_path / "theirs.csv").write_text(f'id,question,gold_answer\n{gid},"{question}",Theirs.\n', encoding="utf-8")
    with _colleague(demo) as bea:
        assert import_golden(bea, tmp_path / "theirs.csv").updated == 1
    with pytest.raises(ops.UndoRefused, match=rf"cannot undo operation {done.operation} .*changed since by bea"):
        ops.undo(demo)
    assert row(demo, gid)["gold_answer"] == "Theirs."                   # their import stands
    assert ops.oplog.get(demo, done.operation).undone_at is None


def test_undo_of_an_edit_nobody_touched_since_still_works(demo):
    gid = demo.reader().execute("SELECT id FROM golden_rows ORDER BY id LIMIT 1").fetchone()[0]
    before = row(demo, gid)["gold_answer"]
    ops.run(demo, ops.EditGoldenRow(id=gid, fields={"gold_answer": "Mine."}, reason="clearer"))
    ops.undo(demo)
    assert row(demo, gid)["gold_answer"] == before


def test_undo_cannot_reinstate_a_judge_an_audit_has_spoken_on_since(demo, capsys):
    ops.run(demo, ops.SetJudgeStatus(name="minilm-similarity", status="retired", reason="noisy"))
    agreement.apply(demo, agreement.agreement(demo, get_judge(demo, "minilm-similarity")))   # an audit since
    with pytest.raises(ops.UndoRefused, match="was changed since"):
        ops.undo(demo)
    assert get_judge(demo, "minilm-similarity").status == "retired"
    path = str(demo.path)
    demo.close()
    assert main(["undo", path, "--yes"]) == 1                 # the CLI says so, exit 1, no traceback
    err = capsys.readouterr().err
    assert "cannot undo operation" in err and "Traceback" not in err


def test_undo_of_a_retirement_just_made_reinstates(demo):
    ops.run(demo, ops.SetJudgeStatus(name="minilm-similarity", status="retired", reason="by mistake"))
    ops.undo(demo)
    assert get_judge(demo, "minilm-similarity").status == "active"


def test_undo_refuses_a_judge_edit_someone_changed_again(demo):
    from rageval_desktop.core.judges.registry import add_judge, update_judge

    add_judge(demo, "gpt", "correctness", "llm", model="m-1", base_url="http://127.0.0.1:9/v1")
    ops.run(demo, ops.EditJudge(name="gpt", changes={"model": "m-2"}))
    with _colleague(demo) as bea:
        update_judge(bea, "gpt", model="m-3")
    with pytest.raises(ops.UndoRefused, match="edit judge by bea"):
        ops.undo(demo)
    assert get_judge(demo, "gpt").model == "m-3"
