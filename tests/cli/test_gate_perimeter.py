"""Issue 73: a green check that hides nothing. Every case here passed (exit 0) on the code before: a candidate that
skipped a third of the questions, a judge metric added after planning, a slice only the candidate answered — and a
pass said neither its tolerances nor the slices it left ungated that had dropped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rageval_desktop.cli import main
from rageval_desktop.core.metrics import gate_config

GATE = ["--baseline", "v1", "--candidate", "v2"]


def _plan(path: str, tmp_path, *metrics: str) -> str:
    """The README's plan: like v2, tolerances up to 45 points, written to gate.json."""
    out = tmp_path / "gate.json"
    args = ["gate", "plan", path, "--baseline", "v1", "--like", "v2", "--max-tolerance", "60", "--out", str(out)]
    assert main([*args, *(["--metrics", *metrics] if metrics else [])]) == 0
    return str(out)


def _gate(path: str, config: str, capsys, *extra: str) -> tuple[int, dict]:
    capsys.readouterr()
    code = main(["gate", path, *GATE, "--config", config, "--json", *extra])
    return code, json.loads(capsys.readouterr().out)


@pytest.fixture
def planned(demo, tmp_path, capsys):
    """The demo and the README's planned retrieval gate (made while v2 was whole)."""
    path = str(demo.path)
    demo.close()
    return path, _plan(path, tmp_path, "hit@5", "mrr")


def _sql(path: str, statement: str) -> None:
    import sqlite3

    with sqlite3.connect(path) as conn:
        conn.execute(statement)
    conn.close()


V2_ROWS = "SELECT rr.id FROM run_rows rr JOIN runs r ON r.id = rr.run_id WHERE r.name = 'v2'"


def test_a_candidate_that_skips_a_third_of_the_questions_fails(planned, capsys):
    path, config = planned
    assert _gate(path, config, capsys)[0] == 0          # whole, it passes (an amber pass: see below)
    _sql(path, f"DELETE FROM run_rows WHERE position % 3 = 0 AND id IN ({V2_ROWS})")
    code, out = _gate(path, config, capsys)
    assert code == 1, out["covers"]                     # was 0: "48 shared questions", every gated cell safe
    assert out["perimeter"]["unanswered"] == 24 and out["perimeter"]["no_row"] == 24
    failed = {(r["slice"], r["metric"]) for r in out["regressions"]}
    assert ("all", "coverage") in failed
    coverage = out["comparison"]["slices"]["all"]["coverage"]
    assert coverage["candidate"] == pytest.approx(200 / 3) and coverage["n"] == 72
    assert any("did not answer 24 of the baseline's 72 questions (24 with no row" in w for w in out["warnings"])
    # counted as failures: hit@5 on 'all' is the whole baseline's against the candidate with misses for the lost
    assert out["comparison"]["slices"]["all"]["hit@5"]["n"] == 68


def test_rows_with_no_answer_count_as_unanswered(planned, capsys):
    path, config = planned
    _sql(path, f"UPDATE run_rows SET answer = NULL WHERE position % 2 = 0 AND id IN ({V2_ROWS})")
    code, out = _gate(path, config, capsys)
    assert out["perimeter"]["no_answer"] == 36 and out["perimeter"]["no_row"] == 0
    assert code == 1 and ("all", "coverage") in {(r["slice"], r["metric"]) for r in out["regressions"]}


def test_leave_out_is_a_rule_the_configuration_names(planned, capsys, tmp_path):
    path, config = planned
    _sql(path, f"DELETE FROM run_rows WHERE position % 3 = 0 AND id IN ({V2_ROWS})")
    data = json.loads(Path(config).read_text())
    data["missing"] = "leave out"
    other = tmp_path / "leave.json"
    other.write_text(json.dumps(data))
    code, out = _gate(path, str(other), capsys)
    assert out["comparison"]["slices"]["all"]["hit@5"]["n"] == 46     # the lost are left out of hit@5 ...
    failed = {(r["slice"], r["metric"]) for r in out["regressions"]}
    assert code == 1 and ("all", "coverage") in failed                 # ... not out of coverage
    assert "left out" in out["covers"]
    data["missing"] = "ignore"
    other.write_text(json.dumps(data))
    assert main(["gate", path, *GATE, "--config", str(other)]) == 2
    assert "missing must be one of 'fail', 'leave out'" in capsys.readouterr().err


def test_a_metric_judged_but_not_planned_cannot_tell(planned, capsys, tmp_path):
    path, _ = planned
    bare = tmp_path / "bare.json"     # a configuration from before the judges scored correctness
    gate_config.write_file(gate_config.from_dict({"format": "rageval-gate-config", "version": 1, "cells": [
        {"slice": "all", "metric": "hit@5", "tolerance": 45}, {"slice": "all", "metric": "mrr", "tolerance": 40}]}),
        bare)
    code, out = _gate(path, str(bare), capsys)
    assert code == 3
    unplanned = {u["metric"] for u in out["not_evaluated"] if u["kind"] == "unplanned"}
    assert unplanned == {"correctness", "correctness_binary"}
    assert "gate plan again" in out["not_evaluated"][0]["fix"]
    # the README's plan names them as not gated on purpose: the gate passes and every output lists them
    code, out = _gate(path, _plan(path, tmp_path, "hit@5", "mrr"), capsys)
    assert code == 0 and [m["metric"] for m in out["not_gated_metrics"]] == ["correctness", "correctness_binary"]
    assert "metrics not gated: correctness (not asked for when the gate was planned (--metrics))" in out["covers"]


def test_a_slice_only_the_candidate_has_cannot_tell_until_the_configuration_names_it(planned, capsys, tmp_path):
    path, config = planned
    _sql(path, "DELETE FROM run_rows WHERE id IN (SELECT rr.id FROM run_rows rr JOIN runs r ON r.id = rr.run_id "
               "JOIN golden_rows g ON g.id = rr.golden_id WHERE r.name = 'v1' AND g.slice_tag = 'easy')")
    code, out = _gate(path, config, capsys)
    assert code == 3 and out["new_slices"] == ["easy"]
    [new] = [u for u in out["not_evaluated"] if u["kind"] == "new slice"]
    assert new["slice"] == "easy" and "only the candidate has questions of 'easy' (12)" in new["why"]
    data = json.loads(Path(config).read_text())
    data["new_slices"] = "named"
    named = tmp_path / "named.json"
    named.write_text(json.dumps(data))
    code, out = _gate(path, str(named), capsys)
    assert code == 0 and "slices only the candidate has: easy" in out["covers"]


def test_a_pass_says_its_tolerances_and_the_ungated_slices_that_dropped(planned, capsys, tmp_path):
    path, config = planned
    md, junit = tmp_path / "gate.md", tmp_path / "gate.xml"
    capsys.readouterr()
    assert main(["gate", path, *GATE, "--config", config, "--markdown", str(md), "--junit", str(junit)]) == 0
    text = capsys.readouterr().out
    said = ("not gated, shown to drop: time-sensitive hit@5 -33.3 [-64.6, -2.0], time-sensitive mrr -31.9 "
            "[-59.0, -4.7], keyword-heavy hit@5 -33.3 [-64.6, -2.0]")
    assert said in text.splitlines()[0]
    covered = next(line for line in text.splitlines() if line.startswith("covered: "))
    assert "gated within tolerances (points): 'all' hit@5 56.5, mrr 52.5, coverage 37" in covered
    assert "not gated: 6 slice(s) — 'easy', 'edge', 'adversarial', 'time-sensitive', 'multi-hop', 'keyword-heavy'" \
        in covered
    assert "What it covered: gated within tolerances" in md.read_text()
    xml = junit.read_text()
    assert 'name="covers" value="gated within tolerances' in xml and "covered: gated within" in xml
    assert 'name="not_gated_shown_to_drop" value="4"' in xml


def test_a_pull_requests_attempts_are_counted_from_the_ci_and_the_ledger(planned, capsys, tmp_path, monkeypatch):
    """Issue 73: nothing remembered earlier attempts, so re-running a pull request's gate until green was free."""
    path, config = planned
    ledger = tmp_path / "cache" / "attempts.jsonl"
    ledger.parent.mkdir()
    for key, value in {"GITHUB_ACTIONS": "true", "GITHUB_REF": "refs/pull/42/merge", "GITHUB_REPOSITORY": "acme/rag",
                       "GITHUB_RUN_ATTEMPT": "1"}.items():
        monkeypatch.setenv(key, value)
    seen = []
    for _ in range(3):
        code, out = _gate(path, config, capsys, "--attempts", str(ledger))
        seen.append((out["attempt"]["pr"], out["attempt"]["number"], round(out["alpha"], 5)))
    assert seen == [("github:acme/rag#42", k, round(0.05 * 6 / (3.14159265 ** 2 * k * k), 5)) for k in (1, 2, 3)]
    assert [json.loads(line)["attempt"] for line in ledger.read_text().splitlines()] == [1, 2, 3]
    assert "attempt 3 of github:acme/rag#42 (2 earlier in" in out["rule_text"]
    code, out = _gate(path, config, capsys, "--attempts", str(ledger), "--pr", "other#1")
    assert out["attempt"]["number"] == 1                                  # another pull request's own count
    data = json.loads(Path(config).read_text())
    del data["retries"]                                                   # a configuration from before 0.9
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data))
    code, out = _gate(path, str(old), capsys, "--attempts", str(ledger))
    assert out["alpha"] == 0.05 and "retries are not spent" in out["rule_text"]


def test_corrected_cells_read_the_answered_questions_and_coverage_counts_the_rest(planned, capsys):
    """A floor filled in for an unanswered question is no judge score for PPI to correct: its cells read the answered
    questions (the rectifier of the answered would otherwise shift the floors), and coverage counts the rest."""
    path, _ = planned
    _sql(path, f"DELETE FROM run_rows WHERE position % 3 = 0 AND id IN ({V2_ROWS})")
    capsys.readouterr()
    assert main(["compare", path, *GATE, "--estimator", "ppi", "--json"]) == 0
    whole = json.loads(capsys.readouterr().out)["slices"]["all"]
    assert whole["correctness"]["n"] == 48 and whole["coverage"]["n"] == 72 and whole["hit@5"]["n"] == 68


def test_a_metric_listed_as_not_gated_that_collapses_is_named_not_hidden(planned, capsys):
    """A metric the configuration lists as deliberately not gated was not even compared: had it dropped to the floor
    on every row, the pass would not have said so. It is compared beside the gated cells, and its drop is named."""
    path, config = planned
    _sql(path, "UPDATE judgments SET score = 1 WHERE judge_id = (SELECT id FROM judges WHERE metric = 'correctness') "
               f"AND run_row_id IN ({V2_ROWS})")
    code, out = _gate(path, config, capsys)
    assert code == 0 and not out["not_evaluated"]        # not gated, as the configuration says ...
    dropped = {(h["slice"], h["metric"]) for h in out["hidden_drops"]}
    assert ("all", "correctness") in dropped                # ... yet shown to drop, by name, in the headline
    assert main(["gate", path, *GATE, "--config", config]) == 0
    assert "all correctness -" in capsys.readouterr().out.splitlines()[0]


def test_control_characters_in_a_slice_name_act_nowhere_the_gate_writes(demo, tmp_path, capsys):
    """Issue 74: ESC (ANSI colour and cursor codes) and a carriage return in a slice name reached stdout and the
    Markdown step summary raw; the XML already showed them as code points."""
    from rageval_desktop.cli import main

    evil = "\x1b[2J\x1b[31mall good\rPASS\x07\x9b"
    with demo.write("a hostile slice name") as conn:
        conn.execute("UPDATE golden_rows SET slice_tag = ? WHERE slice_tag = (SELECT MIN(slice_tag) FROM golden_rows)",
                     (evil,))
    path = str(demo.path)
    demo.close()
    md, summary, xml = tmp_path / "gate.md", tmp_path / "summary.md", tmp_path / "gate.xml"
    code = main(["gate", path, "--baseline", "v1", "--candidate", "v2", "--markdown", str(md), "--summary",
                 str(summary), "--junit", str(xml)])
    out, err = capsys.readouterr()
    assert code in (0, 1, 3)
    for text in (out, err, md.read_text(), summary.read_text(), xml.read_text()):
        assert not any(c in text for c in "\x1b\r\x07\x9b"), repr(text[:200])
    assert "[U+001B]" in out and "U\\+001B" in md.read_text(), out[-600:]
    for words in (["metrics", path, "--run", "v2"], ["compare", path, "--baseline", "v1", "--candidate", "v2"]):
        main(words)
        out, err = capsys.readouterr()
        assert "\x1b" not in out + err and "[U+001B]" in out
