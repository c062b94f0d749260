"""Issue 77: the README lists judge status and ratings as undoable, but `agreement --apply` (a judge's status decided
by its audit) left nothing for `undo` to take back. It is an operation now: undone, the audit is off the record and
the judge's status is what it was."""

from __future__ import annotations

import json

from rageval_desktop.cli import main


def test_an_applied_audit_is_undone_by_rageval_undo(demo, capsys):
    path = str(demo.path)
    demo.close()
    assert main(["judges", "list", path]) == 0
    assert "minilm-similarity" in capsys.readouterr().out
    assert main(["agreement", path, "--judge", "answer-recall", "--apply", "--json"]) == 0
    assert main(["agreement", path, "--judge", "minilm-similarity", "--apply", "--json"]) == 0
    capsys.readouterr()
    assert main(["undo", path, "--list"]) == 0
    listed = capsys.readouterr().out
    assert "record the audit of judge minilm-similarity" in listed
    assert "record the audit of judge answer-recall" in listed
    assert main(["judges", "list", path, "--json"]) == 0
    before = {j["name"]: j for j in json.loads(capsys.readouterr().out)}
    assert before["minilm-similarity"]["licence"]["tier"] == "selective"       # kept for the rows it decides
    assert main(["undo", path, "--yes"]) == 0                                  # the newest: minilm-similarity's
    assert "undone: record the audit of judge minilm-similarity" in capsys.readouterr().out
    assert main(["judges", "list", path, "--json"]) == 0
    after = {j["name"]: j for j in json.loads(capsys.readouterr().out)}
    assert after["minilm-similarity"]["licence"]["reasons"] == ["no recorded audit"]
    assert after["answer-recall"]["licence"] == before["answer-recall"]["licence"]   # the other audit stands
    assert after["minilm-similarity"]["status"] == "active"


def test_an_import_of_ratings_is_undone_by_rageval_undo(demo, tmp_path, capsys):
    import csv

    rows = demo.reader().execute("SELECT id FROM run_rows ORDER BY id LIMIT 5").fetchall()
    path = str(demo.path)
    demo.close()
    file = tmp_path / "r.csv"
    with file.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["row_id", "metric", "reviewer", "score"])
        out.writerows([row, "correctness", "zed", 3] for (row,) in rows)
    assert main(["ratings", "import", path, str(file)]) == 0
    assert main(["undo", path, "--list"]) == 0
    assert "import ratings from r.csv" in capsys.readouterr().out
    assert main(["undo", path, "--yes"]) == 0
    capsys.readouterr()
    from rageval_desktop.core.store.project import Project

    with Project.open(path, read_only=True) as p:
        standing = p.reader().execute("SELECT COUNT(*) FROM human_ratings WHERE reviewer = 'zed' AND withdrawn_at IS "
                                      "NULL").fetchone()[0]
        kept = p.reader().execute("SELECT COUNT(*) FROM human_ratings WHERE reviewer = 'zed'").fetchone()[0]
    assert (standing, kept) == (0, 5)                 # withdrawn, not deleted: the file keeps what happened


def test_a_promotion_to_the_golden_set_is_undone_by_rageval_undo(demo, tmp_path, capsys):
    from rageval_desktop.core.demo import write_demo_files
    from rageval_desktop.core.store.project import Project

    path = str(demo.path)
    demo.close()
    production = next(f for f in write_demo_files(tmp_path / "files") if f.name == "production.jsonl")
    assert main(["import", "run", path, str(production), "--run", "prod"]) == 0
    capsys.readouterr()
    with Project.open(path, read_only=True) as p:
        row = p.reader().execute("SELECT rr.id FROM run_rows rr JOIN runs r ON r.id = rr.run_id WHERE r.name = "
                                 "'prod' ORDER BY rr.id LIMIT 1").fetchone()[0]
    assert main(["golden", "promote", path, "--row-id", str(row), "--slice", "adversarial", "--json"]) == 0
    made = json.loads(capsys.readouterr().out)["id"]
    assert main(["undo", path, "--list"]) == 0
    assert f"promote run row {row} to the golden set" in capsys.readouterr().out
    assert main(["undo", path, "--yes"]) == 0
    with Project.open(path, read_only=True) as p:
        status = p.reader().execute("SELECT status FROM golden_rows WHERE id = ?", (made,)).fetchone()[0]
    assert status == "retired"                    # the draft it made is retired: its history stays
