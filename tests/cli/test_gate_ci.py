"""`rageval gate --junit FILE --summary [FILE]`: the decision where CI systems show test results and job summaries.
One test case per gated cell — a regression fails, a cell not decision-grade is skipped with what would settle it —
and names from data stay text."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from rageval_desktop import api
from rageval_desktop.cli import main

GATE = ["--baseline", "v1", "--candidate", "v2"]


def _suite(path):
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    return root, root.find("testsuite")


def test_a_gate_that_cannot_tell_skips_its_undecided_cells_and_says_so_in_the_summary(demo, tmp_path, monkeypatch):
    path = str(demo.path)
    demo.close()
    junit, summary = tmp_path / "gate.xml", tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert main(["gate", path, *GATE, "--junit", str(junit), "--summary"]) == 3
    root, suite = _suite(junit)
    decision, *cases = suite.findall("testcase")
    skipped = [c for c in cases if c.find("skipped") is not None]
    assert int(root.get("tests")) == len(cases) + 1 == 27 and int(root.get("skipped")) == len(skipped) == 22
    assert root.get("failures") == "1" and decision.find("failure").get("type") == "not_decision_grade"
    props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert props["decision"] == "not_decision_grade" and props["shared_questions"] == "72"
    messages = [c.find("skipped").get("message") for c in skipped]
    assert any(m.startswith("not evaluated: not licensed to gate") and "to fix:" in m for m in messages)
    assert any(m.startswith("not decision-grade: not shown within 2 points") for m in messages)
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n") and "RAG evaluation gate" in text and "exit code: 3" in text


def test_a_passing_gate_is_a_green_suite(demo, tmp_path):
    path = str(demo.path)
    demo.close()
    junit, summary = tmp_path / "gate.xml", tmp_path / "summary.md"
    assert main(["gate", path, *GATE, "--metrics", "hit@10", "--max-slice-drop", "60", "--max-aggregate-drop", "60",
                 "--junit", str(junit), "--summary", str(summary)]) == 0
    root, suite = _suite(junit)
    assert root.get("failures") == "0" and root.get("skipped") == "0" and int(root.get("tests")) >= 6
    decision, *cells = suite.findall("testcase")
    assert decision.find("failure") is None and decision.get("name") == "the decision: may v2 replace v1?"
    assert all(c.find("system-out").text.startswith("shown safe") for c in cells)
    assert "exit code: 0" in summary.read_text(encoding="utf-8")


def test_summary_without_a_file_outside_github_is_a_usage_error_before_any_work(demo, monkeypatch, capsys):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    assert main(["gate", str(demo.path), *GATE, "--summary"]) == 2
    assert "$GITHUB_STEP_SUMMARY" in capsys.readouterr().err


def test_hostile_run_names_stay_text_in_the_xml(demo, tmp_path):
    files = api.demo_files(tmp_path / "files")
    outputs = next(f for f in files if f.name == "outputs-v2.jsonl")
    hostile = "pr <&>\"]]></testsuite>"     # (control and bidi characters are refused in run names at import)
    with api.open(demo.path) as project:
        project.import_run(outputs, hostile)
    demo.close()
    junit = tmp_path / "gate.xml"
    code = main(["gate", str(demo.path), "--baseline", "v1", "--candidate", hostile, "--metrics", "hit@10",
                 "--junit", str(junit)])
    assert code in (0, 1, 3)
    root, suite = _suite(junit)          # parses: the name is escaped
    assert suite.get("name") == f"rageval gate: {hostile} vs v1" and len(root.findall("testsuite")) == 1
