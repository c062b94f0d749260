"""Decisions on record (issue 30): `gate --record` keeps the verdict with what it rested on, chained by hash;
`decisions --verify` checks the chain and each file — an edited file or record fails, naming it (exit 1)."""

from __future__ import annotations

import json
import sqlite3

from rageval_desktop.cli import main


def test_a_recorded_gate_is_verified_edited_and_refused(demo, tmp_path, capsys):
    path = str(demo.path)
    demo.close()
    out = tmp_path / "records"
    for number in (1, 2):
        assert main(["gate", path, "--baseline", "v1", "--candidate", "v2", "--record", str(out), "--json"]) == 0
        made = json.loads(capsys.readouterr().out)["record"]
        assert made["id"] == number and len(made["hash"]) == 64
    first, second = json.loads((out / "decision-1.json").read_text()), json.loads((out / "decision-2.json").read_text())
    assert second["previous"] == first["hash"] and first["previous"] is None              # a chain
    assert first["runs"]["candidate"]["rows"] == 72 and first["decision"] == "pass"
    assert {j["name"] for j in first["judges"]} == {"minilm-similarity", "answer-recall"}
    assert all("tier" in j["licence"] and j["fingerprint"] for j in first["judges"])
    assert (out / "decision-1.md").read_text().startswith("# Decision 1: pass")
    files = [str(out / "decision-1.json"), str(out / "decision-2.json")]
    assert main(["decisions", path, "--verify", *files]) == 0
    assert "the chain and every file hold" in capsys.readouterr().out

    edited = json.loads((out / "decision-1.json").read_text())
    edited["decision"] = "fail"
    (out / "decision-1.json").write_text(json.dumps(edited))
    assert main(["decisions", path, "--verify", *files]) == 1
    err = capsys.readouterr().err
    assert "decision-1.json: differs from decision 1 (edited)" in err and "decision-2.json" not in err

    with sqlite3.connect(path) as conn:                                  # the stored record edited behind its back
        conn.execute("UPDATE decisions SET record = json_set(record, '$.decision', 'fail') WHERE id = 1")
    assert main(["decisions", path, "--verify"]) == 1
    assert "decision 1: its content does not match its hash (edited)" in capsys.readouterr().err
    assert main(["decisions", path, "--json"]) == 0
    assert [d["id"] for d in json.loads(capsys.readouterr().out)] == [1, 2]
