"""The gate's outcomes as a release manager meets them (issue 44): every metric asked to gate is accounted for,
an impossible one is a usage error, a configuration planned from the data decides, and the API's result is typed
and true only for a pass. Each case failed on the code before: an unjudged candidate passed (exit 0), `--metrics
correctness` on it crashed with a KeyError (exit 1), and `assert project.gate(...)` always held."""

from __future__ import annotations

import json

import pytest

import rageval_desktop as rv
from rageval_desktop.cli import main

GATE = ["--baseline", "v1", "--candidate", "v3"]


@pytest.fixture
def unjudged(demo, tmp_path):
    """The demo with a run v3: v2's retrieval, every answer "I do not know.", not judged."""
    files = rv.demo_files(tmp_path / "files")
    source = next(f for f in files if f.name == "outputs-v2.jsonl")
    rows = [json.loads(line) for line in source.read_text().splitlines()]
    (tmp_path / "v3.jsonl").write_text("".join(json.dumps({**r, "answer": "I do not know."}) + "\n" for r in rows))
    path = str(demo.path)
    demo.close()
    assert main(["import", "run", path, str(tmp_path / "v3.jsonl"), "--run", "v3"]) == 0
    return path


def test_an_unjudged_candidate_is_not_decision_grade_never_a_pass(unjudged, capsys, tmp_path):
    capsys.readouterr()
    waive = ["--allow-unlicensed", "judges under test"]
    assert main(["gate", unjudged, *GATE, *waive, "--json"]) == 3
    out = json.loads(capsys.readouterr().out)
    missing = {u["metric"]: u for u in out["not_evaluated"]}
    assert set(missing) == {"correctness", "correctness_binary"}
    assert missing["correctness"]["why"] == "not judged on 'v3' (scored on 'v1' by minilm-similarity)"
    assert "rageval judge PROJECT --run v3" in missing["correctness"]["fix"]
    assert out["decision"] == "not_decision_grade" and out["passed"] is False
    assert main(["gate", unjudged, *GATE, *waive, "--metrics", "correctness", "--markdown",
                 str(tmp_path / "pr.md")]) == 3
    said = capsys.readouterr()
    assert "Traceback" not in said.err and "KeyError" not in said.err
    assert "NOT EVALUATED  every slice      correctness          not judged on 'v3'" in said.out
    with rv.open(unjudged, read_only=True) as p:
        decided = p.gate("v1", "v3", metrics=["correctness"], allow_unlicensed="judges under test")
        assert decided.decision is rv.Decision.NOT_DECISION_GRADE and not decided and decided.exit_code == 3
        with pytest.raises(rv.UsageError, match="no metric named correctnes can be compared"):
            p.gate("v1", "v3", metrics=["correctnes"])
    assert main(["gate", unjudged, *GATE, "--metrics", "correctnes"]) == 2
    assert "no metric named correctnes can be compared" in capsys.readouterr().err
    # a plan made like the unjudged run cannot plan its judge metrics, and says so rather than leave them out
    assert main(["gate", "plan", unjudged, "--baseline", "v1", "--like", "v3", "--metrics", "hit@5", "correctness",
                 "--json"]) == 0
    planned = json.loads(capsys.readouterr().out)
    assert [x["metric"] for x in planned["left_out"]] == ["correctness"]
    assert {c["metric"] for c in planned["config"]["cells"]} == {"hit@5", "coverage"}   # coverage: always planned


def test_a_partly_judged_candidate_or_one_judged_by_other_judges_is_named(demo, capsys):
    with demo.write("half of v2's correctness judgments lost") as w:
        w.execute("DELETE FROM judgments WHERE judge_id = (SELECT id FROM judges WHERE name = 'minilm-similarity') "
                  "AND run_row_id IN (SELECT rr.id FROM run_rows rr JOIN runs r ON r.id = rr.run_id "
                  "WHERE r.name = 'v2' AND rr.position % 2 = 0)")
    path = str(demo.path)
    demo.close()
    assert main(["gate", path, "--baseline", "v1", "--candidate", "v2", "--metrics", "correctness",
                 "--allow-unlicensed", "t", "--json"]) == 3
    [missing] = json.loads(capsys.readouterr().out)["not_evaluated"]
    assert missing["why"].startswith("scored on one run only for 36 of 72 shared questions (36 scored on 'v1' only")


def test_the_api_decision_is_typed_and_true_only_for_a_pass(demo):
    p = rv.Project(demo)
    undecided = p.gate("v1", "v2")
    assert undecided.decision is rv.Decision.NOT_DECISION_GRADE and undecided.decision == "not_decision_grade"
    assert not undecided and undecided.exit_code == 3
    with pytest.raises(AssertionError):
        assert undecided, undecided.markdown()
    shown = p.gate("v1", "v2", metrics=["hit@5"], max_slice_drop=60)
    assert shown.decision is rv.Decision.PASS and shown and shown.exit_code == 0
    failed = p.gate("v1", "v2", metrics=["hit@5"], rule="point")
    assert failed.decision is rv.Decision.REGRESSION and not failed and failed.exit_code == 1
    assert set(failed.frame["status"]) >= {"regression"}


def test_a_planned_configuration_is_saved_used_and_refused_when_it_cannot_be_read(demo, tmp_path, capsys):
    path = str(demo.path)
    demo.close()
    assert main(["gate", "plan", path, "--baseline", "v1", "--like", "v2", "--metrics", "hit@5", "mrr",
                 "--max-tolerance", "45", "--out", str(tmp_path / "gate.json"), "--json"]) == 0
    planned = json.loads(capsys.readouterr().out)
    cells = {(c["slice"], c["metric"]): c for c in planned["cells"]}
    assert cells[("all", "hit@5")]["gated"] and cells[("all", "hit@5")]["tolerance"] >= \
        cells[("all", "hit@5")]["detectable"]
    assert cells[("all", "hit@5")]["needed"] > 68           # the questions a 5-point tolerance would need
    written = json.loads((tmp_path / "gate.json").read_text())
    assert written["format"] == "rageval-gate-config" and written["cells"]
    assert main(["gate", path, "--baseline", "v1", "--candidate", "v2", "--config", str(tmp_path / "gate.json"),
                 "--json"]) == 0
    decided = json.loads(capsys.readouterr().out)
    assert decided["decision"] == "pass" and decided["config"]["source"] == str(tmp_path / "gate.json")
    assert all(c["status"] in ("within", "powered") for c in decided["safe"])
    # saved in the project: `gate` uses it by default, --no-config leaves it aside, limits beside it are refused
    assert main(["gate", "plan", path, "--baseline", "v1", "--like", "v2", "--metrics", "hit@5", "mrr",
                 "--max-tolerance", "45", "--save"]) == 0
    capsys.readouterr()
    assert main(["gate", path, "--baseline", "v1", "--candidate", "v2"]) == 0
    assert "the gate's configuration (the project's gate configuration)" in capsys.readouterr().out
    assert main(["gate", path, "--baseline", "v1", "--candidate", "v2", "--no-config"]) == 3
    assert main(["gate", path, "--baseline", "v1", "--candidate", "v2", "--max-slice-drop", "5"]) == 2
    assert "--max-slice-drop would be ignored" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text('{"format": "rageval-gate-config", "version": 1, "cells": '
                                       '[{"slice": "all", "metric": "hit@5", "tolerance": 3, "allowed": 5}]}')
    assert main(["gate", path, "--baseline", "v1", "--candidate", "v2", "--config", str(tmp_path / "bad.json")]) == 2
    assert "the allowed drop (5) must be below the tolerance (3)" in capsys.readouterr().err
    assert main(["gate", "plan", path, "--baseline", "v1", "--tolerance", "50", "--max-tolerance", "20"]) == 2


def test_gate_help_documents_every_exit_code(capsys):
    with pytest.raises(SystemExit) as done:
        main(["gate", "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    for code in range(5):
        assert f"\n  {code}  " in text
    assert "rageval gate plan" in text
    with pytest.raises(SystemExit):
        main(["gate", "plan", "--help"])
    assert "usage: rageval gate plan" in capsys.readouterr().out


def test_a_reader_that_leaves_early_does_not_turn_a_verdict_into_a_pass(demo, monkeypatch):
    """`rageval gate … | head`: a broken pipe exited 0 (the code for success), whatever the verdict."""
    from rageval_desktop.cli import gate_cmds

    path = str(demo.path)
    demo.close()

    def gone(*_):
        raise BrokenPipeError

    monkeypatch.setattr(gate_cmds, "say", gone)
    assert main(["gate", path, "--baseline", "v1", "--candidate", "v2", "--metrics", "hit@5", "--rule", "point"]) == 1
    assert main(["gate", path, "--baseline", "v1", "--candidate", "v2", "--metrics", "hit@5"]) == 3


def test_retrieval_metrics_without_gold_ids_are_not_evaluated_never_a_silent_pass(tmp_path, capsys):
    """Was (issue 45): a golden re-import that erased every gold chunk id left the gate 0 cells, and it passed."""
    from tests.core.test_gate_decisions import build

    path = build(tmp_path, {"easy": 30}, set(), no_gold={f"easy-{i}" for i in range(30)})
    assert main(["gate", path, "--baseline", "v1", "--candidate", "v2", "--max-slice-drop", "100", "--json"]) == 3
    out = json.loads(capsys.readouterr().out)
    assert out["gated_cells"] == 0 and {u["metric"] for u in out["not_evaluated"]} == {"hit@5", "hit@10", "mrr",
                                                                                      "ndcg@10"}
    assert all("no shared question has gold chunk ids" in u["why"] for u in out["not_evaluated"])
