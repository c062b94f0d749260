"""Undoable operations in core (issue 29): each with its inverse, logged in the same transaction as the edit; an
undo is an operation too; the CLI undoes the last one (what it will undo shown first)."""

from __future__ import annotations

import json

import pytest

from rageval_desktop.cli import main
from rageval_desktop.core import ops
from rageval_desktop.core.base.errors import NotFound
from rageval_desktop.core.golden.edits import history, row
from rageval_desktop.core.judges.registry import get_judge
from rageval_desktop.core.store import oplog
from rageval_desktop.core.store.changes import Area


def first_golden(project) -> str:
    return project.reader().execute("SELECT id FROM golden_rows ORDER BY id LIMIT 1").fetchone()[0]


def test_an_edit_its_undo_and_its_redo_are_each_logged(demo):
    gid = first_golden(demo)
    before = row(demo, gid)["gold_answer"]
    done = ops.run(demo, ops.EditGoldenRow(id=gid, fields={"gold_answer": "New."}, reason="clearer"),
                   initiator="gui")
    assert row(demo, gid)["gold_answer"] == "New." and done.areas == {Area.GOLDEN, Area.OPERATIONS}
    logged = oplog.get(demo, done.operation)
    assert (logged.initiator, logged.label, logged.inverse["fields"]) == ("gui", f"edit golden row {gid}",
                                                                          {"gold_answer": before})
    undone = ops.undo(demo)
    assert row(demo, gid)["gold_answer"] == before and undone.undid == done.operation
    assert oplog.get(demo, done.operation).undone_by == undone.operation
    assert [h["reason"] for h in history(demo, gid)][-2:] == ["clearer", "undo"]
    redone = ops.redo(demo, undone.operation)
    assert row(demo, gid)["gold_answer"] == "New." and redone.operation > undone.operation
    assert oplog.last_undoable(demo).id == redone.operation


@pytest.mark.parametrize("args, check", [
    (lambda p: ops.SetGoldenStatus(first_golden(p), "retired", "dup"), lambda p: row(p, first_golden(p))["status"]),
    (lambda p: ops.EditJudge("answer-recall", {"concurrency": 3}),
     lambda p: get_judge(p, "answer-recall").params.get("concurrency")),
    (lambda p: ops.SetJudgeStatus("answer-recall", "retired", "weak"), lambda p: get_judge(p, "answer-recall").status),
    (lambda p: ops.Rate(1, "correctness", "zed", 2),
     lambda p: p.reader().execute("SELECT COUNT(*) FROM human_ratings WHERE reviewer = 'zed' AND "
                                  "withdrawn_at IS NULL").fetchone()[0]),
    (lambda p: ops.AddGoldenRow("What does ops.undo do?", slice_tag="easy"),
     lambda p: p.reader().execute("SELECT status FROM golden_rows WHERE question = 'What does ops.undo do?'")
     .fetchone()),
])
def test_every_operation_is_undone_by_its_inverse(demo, args, check):
    before = check(demo)
    op = args(demo)
    ops.run(demo, op, initiator="api")
    after = check(demo)
    assert after != before
    ops.undo(demo)
    restored = check(demo)
    if isinstance(op, ops.AddGoldenRow):          # rows are retired, never deleted
        assert restored == ("retired",)
    else:
        assert restored == before


def test_an_operations_arguments_are_typed_and_kept_as_their_fields(demo):
    """Anki's typed operation arguments: the log keeps the fields under the operation's name, and a redo reads them
    back into the same class. A name and a dict are not an operation (issue 78)."""
    op = ops.SetJudgeStatus("answer-recall", "retired", "weak")
    done = ops.run(demo, op)
    logged = oplog.get(demo, done.operation)
    assert (logged.name, logged.args) == ("set judge status", {"name": "answer-recall", "status": "retired",
                                                               "reason": "weak", "force": False})
    assert ops.SPECS[logged.name].load(logged.args) == op
    assert ops.SPECS["rate"].load({"row": 1, "metric": "m", "reviewer": "r"}) == ops.Rate(1, "m", "r")  # older logs
    with pytest.raises(TypeError):
        ops.run(demo, "set judge status", {"name": "answer-recall"})          # type: ignore[arg-type,call-arg]
    assert {spec.name for spec in ops.SPECS.values()} == set(ops.SPECS) and all(
        name == spec.args.NAME for name, spec in ops.SPECS.items())


def test_an_operation_that_changes_nothing_logs_nothing(demo):
    gid = first_golden(demo)
    same = row(demo, gid)["gold_answer"]
    result = ops.run(demo, ops.EditGoldenRow(id=gid, fields={"gold_answer": same}, reason="none"))
    assert result.operation is None and oplog.recent(demo) == []


def test_a_failed_operation_logs_nothing(demo):
    with pytest.raises(Exception, match="say why"):
        ops.run(demo, ops.SetJudgeStatus(name="answer-recall", status="retired", reason=" "))
    assert oplog.recent(demo) == []
    with pytest.raises(NotFound, match="nothing to undo"):
        ops.undo(demo)


def test_the_cli_undoes_the_last_operation_and_says_what_first(demo, capsys, monkeypatch):
    path = str(demo.path)
    assert main(["retire", path, "answer-recall", "--reason", "weak"]) == 0
    demo.close()
    capsys.readouterr()
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    assert main(["undo", path]) == 2                       # not at a terminal: asks for --yes, undoes nothing
    err = capsys.readouterr().err
    assert "will undo operation 1: retire judge answer-recall" in err and "from the command line" in err
    assert "add --yes" in err
    assert main(["undo", path, "--yes", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["undid"] == 1 and out["label"] == "undo: retire judge answer-recall"
    assert main(["undo", path, "--list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [o["label"] for o in listed] == ["undo: retire judge answer-recall", "retire judge answer-recall"]
    assert listed[1]["undone_by"] == listed[0]["id"]
    assert main(["undo", path, "--yes"]) == 2                # the undo itself is not the next thing to undo
    assert "nothing to undo" in capsys.readouterr().err
