"""The gate counts only judges that hold a gate licence (issue 30): a judge metric without one — named or chosen by
default — is not evaluated, which makes the gate not decision-grade (exit 3, issue 44: it was left out and the
gate exited 0), and a waiver gates it and is kept on record."""

from __future__ import annotations

import json

from rageval_desktop.cli import main
from rageval_desktop.core.judges.registry import get_judge
from rageval_desktop.core.review import agreement
from rageval_desktop.core.review.licence import licence
from rageval_desktop.core.review.settings import set_policy
from rageval_desktop.core.store.project import Project

GATE = ["--baseline", "v1", "--candidate", "v2", "--json"]


def test_default_gate_cannot_pass_on_unlicensed_judges_and_says_why(demo, capsys):
    path = str(demo.path)
    demo.close()
    assert main(["gate", path, *GATE, "--metrics", "hit@5", "correctness", "correctness_binary",
                 "--max-slice-drop", "100"]) == 3          # every retrieval cell shown within 100: only the judges
    out = json.loads(capsys.readouterr().out)
    assert out["decision"] == "not_decision_grade" and out["undecided"] == [] and out["regressions"] == []
    left = {u["metric"]: u for u in out["unlicensed"]}
    assert set(left) == {"correctness", "correctness_binary"}
    assert left["correctness"]["judges"] == [{"judge": "minilm-similarity", "tier": "explore",
                                              "reasons": ["no recorded audit"]}]
    assert {u["metric"] for u in out["not_evaluated"]} == set(left)
    cells = {(r["slice"], r["metric"]) for r in out["safe"]}
    assert cells and not {m for _, m in cells} & set(left)          # no cell of an unlicensed metric is gated
    assert out["waivers"] == []
    assert main(["gate", path, *GATE[:-1]]) == 3                      # the default metrics: the same reasons
    said = capsys.readouterr()
    assert "NOT EVALUATED  every slice      correctness          not licensed to gate: minilm-similarity: " \
           "explore (no recorded audit)" in said.out
    assert said.err.startswith("gate: not decision-grade (exit 3)")


def test_a_named_unlicensed_metric_is_not_evaluated_and_a_waiver_is_recorded(demo, tmp_path, capsys):
    path = str(demo.path)
    demo.close()
    assert main(["gate", path, *GATE[:-1], "--metrics", "hit@5", "correctness"]) == 3
    said = capsys.readouterr()
    assert "correctness          not licensed to gate: minilm-similarity: explore (no recorded audit)" in said.out
    assert "--allow-unlicensed REASON" in said.out and "Traceback" not in said.err
    assert main(["gate", path, *GATE, "--metrics", "correctness", "--allow-unlicensed", " "]) == 2
    assert "a waiver needs a reason" in capsys.readouterr().err

    assert main(["gate", path, *GATE, "--metrics", "hit@5", "correctness", "--allow-unlicensed",
                 "audit booked for Monday", "--record", str(tmp_path / "rec")]) == 3
    out = json.loads(capsys.readouterr().out)
    assert out["unlicensed"] == []
    [waiver] = out["waivers"]
    assert (waiver["metric"], waiver["reason"]) == ("correctness", "audit booked for Monday")
    assert waiver["who"] and waiver["when"] and "explore (no recorded audit)" in waiver["why_unlicensed"]
    assert any(c["metric"] == "correctness" for c in out["undecided"])   # gated, not left out
    record = json.loads((tmp_path / "rec" / f"decision-{out['record']['id']}.json").read_text())
    assert record["waivers"] == out["waivers"]
    assert "Gated under a waiver" in (tmp_path / "rec" / f"decision-{out['record']['id']}.md").read_text()
    assert main(["decisions", path, "--verify", str(tmp_path / "rec" / f"decision-{out['record']['id']}.json")]) == 0


def test_a_judge_with_a_gate_licence_gates_and_loses_it_when_changed(demo, capsys):
    judge = get_judge(demo, "answer-recall")
    result = agreement.agreement(demo, judge)
    agreement.apply(demo, result)
    set_policy(demo, threshold=round(result.anytime_ci[0] - 0.05, 2))
    assert licence(demo, judge).tier == "gate"
    path = str(demo.path)
    demo.close()
    wide = ["--max-slice-drop", "100"]                    # 12-question slices settle nothing closer
    assert main(["gate", path, *GATE, "--metrics", "correctness_binary", *wide]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["unlicensed"] == [] and out["waivers"] == [] and out["gated_cells"] > 0 and out["decision"] == "pass"
    with Project.open(path) as p, p.write("change the measure behind the audit's back") as w:
        w.execute("UPDATE judges SET params = json_set(params, '$.measure', 'f1') WHERE name = 'answer-recall'")
    assert main(["gate", path, *GATE, "--metrics", "correctness_binary", *wide]) == 3
    out = json.loads(capsys.readouterr().out)
    assert out["gated_cells"] == 0
    assert "answer-recall: explore (changed since audit: model, measure)" in out["not_evaluated"][0]["why"]
