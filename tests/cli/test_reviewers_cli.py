"""`rageval reviewers` and `rageval transport` from the command line: reports in words and JSON, a hold set and
taken back by `rageval undo`, a clear error for a run that does not exist."""

from __future__ import annotations

import json

from rageval_desktop.cli import main


def test_reviewers_sets_aside_and_undo_brings_back(demo, capsys):
    path = str(demo.path)
    reviewer = demo.reader().execute("SELECT reviewer FROM human_ratings LIMIT 1").fetchone()[0]
    demo.close()
    assert main(["reviewers", path, "--metric", "correctness", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert [r["reviewer"] for r in found["reviewers"]] == [reviewer] and found["reviewers"][0]["held"] is None
    assert main(["reviewers", path, "--metric", "correctness", "--set-aside", reviewer, "--reason", "gold",
                 "--lead", "lee"]) == 0
    out = capsys.readouterr().out
    assert "144 rating(s) of correctness set aside" in out and "SET ASIDE (gold, by lee)" in out
    assert main(["reviewers", path, "--metric", "correctness", "--set-aside", reviewer]) == 2
    assert "needs --reason and --lead" in capsys.readouterr().err
    assert main(["undo", path, "--yes"]) == 0
    capsys.readouterr()
    assert main(["reviewers", path, "--metric", "correctness", "--json", "--gold-rate", "0.2"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["reviewers"][0]["held"] is None and found["settings"]["gold_rate"] == 0.2


def test_transport_reads_each_judge_and_refuses_an_unknown_run(demo, capsys):
    path = str(demo.path)
    demo.close()
    assert main(["transport", path, "--run", "v2", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert {f["judge"] for f in found} == {"minilm-similarity", "answer-recall"}
    assert all(f["n_run"] == 72 and f["status"] in ("holds", "cannot tell", "suspended") for f in found)
    assert main(["transport", path, "--run", "v9"]) == 2
    assert "no run named 'v9'" in capsys.readouterr().err
