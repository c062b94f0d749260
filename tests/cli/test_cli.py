"""The CLI contract later issues and CI rely on: commands, exit codes, first stderr line, info --json."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from rageval_desktop.cli import main
from tests.conftest import table_dump
from tests.core.test_importers import GOLDEN, RUN, write


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rageval_desktop", *args], capture_output=True, text=True,
                          timeout=120)


def test_end_to_end_in_a_subprocess(tmp_path):
    project = tmp_path / "p.rageval"
    assert run_cli("new", str(project)).returncode == 0
    r = run_cli("import", "golden", str(project), str(write(tmp_path / "g.jsonl", GOLDEN)))
    assert r.returncode == 0, r.stderr
    assert "3 added" in r.stdout
    r = run_cli("import", "run", str(project), str(write(tmp_path / "r.jsonl", RUN)), "--run", "v1", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["linked"] == 2
    r = run_cli("info", str(project), "--json")
    info = json.loads(r.stdout)
    assert info["schema_version"] >= 1
    assert info["golden_rows"] == 3
    assert info["runs"] == [{"name": "v1", "rows": 3, "linked": 2, "created_at": info["runs"][0]["created_at"],
                             "values_kept": []}]      # (a run of 3 rows keeps none)
    assert (info["judges"], info["judgments"], info["human_ratings"]) == (0, 0, 0)


def test_bad_input_exits_1_with_plain_first_line_and_no_change(tmp_path, capsys):
    project = tmp_path / "p.rageval"
    assert main(["new", str(project)]) == 0
    bad = tmp_path / "bad.csv"
    bad.write_text("question,answer\nq,a\n")
    before = table_dump(project)
    capsys.readouterr()
    assert main(["import", "run", str(project), str(bad), "--run", "v1"]) == 1
    first = capsys.readouterr().err.splitlines()[0]
    assert first.startswith("error: bad.csv: missing required columns")
    assert table_dump(project) == before


def test_info_on_a_project_without_golden_rows_and_a_one_row_run(tmp_path, capsys):
    project = tmp_path / "p.rageval"
    assert main(["new", str(project)]) == 0
    one = write(tmp_path / "one.jsonl", [{"question": "q", "answer": "a", "retrieved": []}])
    assert main(["import", "run", str(project), str(one), "--run", "v1"]) == 0
    capsys.readouterr()
    assert main(["info", str(project)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "golden rows: 0" in lines          # no empty "()" for the slices it has none of
    assert "runs: v1 (1 row)" in lines


def test_refused_file_exits_1(tmp_path, capsys):
    other = tmp_path / "notes.rageval"
    other.write_text("not a database")
    assert main(["info", str(other)]) == 1
    assert "not a RAGEval project" in capsys.readouterr().err.splitlines()[0]


@pytest.mark.parametrize("argv", [[], ["import", "run", "p.rageval", "f.csv"], ["frobnicate"], ["info"]])
def test_usage_errors_exit_2_with_the_problem_first(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert capsys.readouterr().err.splitlines()[0].startswith("error: ")


def test_new_refuses_wrong_extension_as_usage_error(tmp_path, capsys):
    assert main(["new", str(tmp_path / "p.db")]) == 2
    assert ".rageval" in capsys.readouterr().err


def test_new_refuses_existing_project(tmp_path, capsys):
    project = tmp_path / "p.rageval"
    assert main(["new", str(project)]) == 0
    assert main(["new", str(project)]) == 1
    assert "already exists" in capsys.readouterr().err


def test_demo_command_writes_a_project(tmp_path, capsys):
    assert main(["demo", str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["info", str(tmp_path / "demo.rageval"), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["golden_rows"] >= 60 and len(info["runs"]) == 2
    assert main(["demo", str(tmp_path)]) == 1  # never overwrites without --force
    assert main(["demo", str(tmp_path), "--force"]) == 0


def test_mapping_on_the_command_line(tmp_path, capsys):
    project = tmp_path / "p.rageval"
    main(["new", str(project)])
    capsys.readouterr()
    path = write(tmp_path / "c.csv", [{"q": "Why?", "a": "Because", "ids": "[]"}])
    assert main(["import", "golden", str(project), str(path), "--map", "question=q,gold_answer=a,gold_chunk_ids=ids",
                 "--slice", "edge", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["added"] == 1
    assert main(["import", "golden", str(project), str(path), "--map", "nonsense"]) == 1


def test_guidelines_show_the_scale_and_keep_the_teams_rules(tmp_path, capsys):
    project = tmp_path / "p.rageval"
    assert main(["new", str(project)]) == 0
    rules = tmp_path / "rules.md"
    rules.write_text("# Refusals\n- a refusal scores 1\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["guidelines", str(project), "--metric", "correctness", "--set", str(rules), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [p["key"] for p in data["scale"]] == ["1", "2", "3", "4", "5"] and all(p["anchor"] for p in data["scale"])
    assert data["guidelines"] == "# Refusals\n- a refusal scores 1"
    assert main(["guidelines", str(project), "--metric", "correctness"]) == 0
    assert "a refusal scores 1" in capsys.readouterr().out
    assert main(["guidelines", str(project), "--metric", "correctness", "--set", str(tmp_path / "nope.md")]) == 2
    assert capsys.readouterr().err.startswith("error: cannot read guidelines from")


def test_a_judge_whose_stored_settings_are_damaged_is_named_not_an_internal_error(demo_file, tmp_path, capsys):
    """Found by flipping bits in a project file: the pages were sound, one judge's JSON was not."""
    import shutil
    import sqlite3

    project = tmp_path / "d.rageval"
    shutil.copy(demo_file, project)
    conn = sqlite3.connect(project)
    conn.execute("PRAGMA ignore_check_constraints = ON")      # as damage does: no CHECK (json_valid) saw it
    conn.execute("UPDATE judges SET params = '{\"timeout\": 3' WHERE name = 'answer-recall'")
    conn.commit()
    conn.close()
    capsys.readouterr()
    assert main(["metrics", str(project), "--run", "v2", "--json"]) == 1
    err = capsys.readouterr().err
    assert "judge 'answer-recall': its settings in the project file are damaged" in err
    assert "internal error" not in err
