"""Decisions on record (issues 30 and 44): `gate --record` keeps the verdict with what it rested on, signed and
chained; `decisions --verify` checks each record's signature and signer, its chain, each file, and recomputes what
it used from the project — an edited file, record or input fails, naming it (exit 1); a tool failure is 4."""

from __future__ import annotations

import hashlib
import json
import sqlite3

from rageval_desktop.cli import main

GATE = ["--baseline", "v1", "--candidate", "v2"]


def _record(path, out, capsys, *extra) -> dict:
    code = main(["gate", path, *GATE, "--record", str(out), "--json", *extra])
    made = json.loads(capsys.readouterr().out)
    assert code == made["exit_code"]
    return made


def test_a_recorded_gate_is_verified_edited_and_refused(demo, tmp_path, capsys):
    path = str(demo.path)
    demo.close()
    out = tmp_path / "records"
    for number in (1, 2):
        made = _record(path, out, capsys)["record"]
        assert made["id"] == number and len(made["hash"]) == 64 and made["signer"]
    first, second = json.loads((out / "decision-1.json").read_text()), json.loads((out / "decision-2.json").read_text())
    assert second["previous"] == first["hash"] and first["previous"] is None              # a chain
    assert first["runs"]["candidate"]["rows"] == 72 and first["decision"] == "not_decision_grade"
    assert {j["name"] for j in first["judges"]} == {"minilm-similarity", "answer-recall"}
    assert all("tier" in j["licence"] and j["fingerprint"] for j in first["judges"])
    assert {"candidate.rows", "candidate.passages", "candidate.judgments", "golden", "ratings", "judges"} <= \
        set(first["inputs"])
    assert first["signature"]["algorithm"] == "ed25519" and first["app_version"]
    assert (out / "decision-1.md").read_text().startswith("# Decision 1: not_decision_grade")
    files = [str(out / "decision-1.json"), str(out / "decision-2.json")]
    assert main(["decisions", path, "--verify", *files]) == 0
    assert "every signature, link and input holds" in capsys.readouterr().out

    edited = json.loads((out / "decision-1.json").read_text())
    edited["decision"] = "pass"
    (out / "decision-1.json").write_text(json.dumps(edited))
    assert main(["decisions", path, "--verify", *files]) == 1
    err = capsys.readouterr().err
    assert "decision-1.json: differs from decision 1 (edited)" in err and "decision-2.json" not in err

    with sqlite3.connect(path) as conn:                                  # the stored record edited behind its back
        conn.execute("UPDATE decisions SET record = json_set(record, '$.decision', 'pass') WHERE id = 1")
    assert main(["decisions", path, "--verify"]) == 1
    assert "decision 1: its content does not match its hash (edited)" in capsys.readouterr().err
    assert main(["decisions", path, "--json"]) == 0
    assert [d["id"] for d in json.loads(capsys.readouterr().out)] == [1, 2]


def _rehash(record: dict) -> str:
    """What an actor with sqlite3, hashlib and json only can compute: the record's hash, without the key."""
    body = {k: v for k, v in record.items() if k not in ("hash", "signature")}
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                                     default=str).encode()).hexdigest()


def test_a_fail_rewritten_as_a_pass_and_rehashed_without_the_key_is_refused(demo, tmp_path, capsys):
    """Was (issue 44): another actor rewrote a recorded fail as a pass, rehashed the chain and the JSON files with
    sqlite3, hashlib and json only, and `decisions --verify` exited 0."""
    path = str(demo.path)
    demo.close()
    out = tmp_path / "records"
    made = _record(path, out, capsys, "--rule", "point")
    assert made["decision"] == "regression"
    with sqlite3.connect(path) as conn:
        record = json.loads(conn.execute("SELECT record FROM decisions WHERE id = 1").fetchone()[0])
        record.update(decision="pass", passed=True)
        record["verdicts"]["regressions"] = []
        record["hash"] = _rehash(record)
        conn.execute("UPDATE decisions SET record = ?, hash = ? WHERE id = 1", (json.dumps(record), record["hash"]))
    (out / "decision-1.json").write_text(json.dumps(record))
    assert main(["decisions", path, "--verify", str(out / "decision-1.json")]) == 1
    err = capsys.readouterr().err
    assert "decision 1: its signature is not" in err and "(forged or edited)" in err

    del record["signature"]                                   # nor does removing the signature help
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE decisions SET record = ? WHERE id = 1", (json.dumps(record),))
    assert main(["decisions", path, "--verify"]) == 1
    assert "decision 1: it is not signed" in capsys.readouterr().err


def test_a_record_signed_by_a_key_the_repository_does_not_list_is_refused(demo, tmp_path, capsys, monkeypatch):
    """A forger with a key of their own can sign and even add themselves to the project's list: the allowed
    signers kept in the repository are what decides who signed."""
    path = str(demo.path)
    demo.close()
    assert main(["keys", "new", "--signer", "release-bot"]) == 0
    assert main(["keys", "export"]) == 0
    honest = capsys.readouterr().out.strip().splitlines()[-1]
    (tmp_path / "allowed_signers").write_text(f"# the team\n{honest}\n")
    _record(path, tmp_path / "records", capsys)
    assert main(["decisions", path, "--verify", "--allowed-signers", str(tmp_path / "allowed_signers")]) == 0
    capsys.readouterr()
    monkeypatch.setenv("RAGEVAL_DATA_DIR", str(tmp_path / "forger"))          # another person's machine
    assert main(["keys", "new", "--signer", "release-bot"]) == 0              # the same name, another key
    capsys.readouterr()
    _record(path, tmp_path / "records", capsys)                               # their key joins the project's list
    assert main(["decisions", path, "--verify"]) == 1    # their own key holds for them; the honest one, listed by
    assert "decision 1: it is signed by release-bot, whose key only the project itself lists" in \
        capsys.readouterr().err                          # the project alone, no longer does (issue 73)
    assert main(["decisions", path, "--verify", "--allowed-signers", str(tmp_path / "allowed_signers")]) == 1
    err = capsys.readouterr().err                                             # ...the repository's list does not
    assert "decision 2: it is signed by release-bot, whose key only the project itself lists" in err
    assert "decision 1" not in err


def test_an_input_changed_after_recording_is_named_and_an_honest_record_verifies_elsewhere(demo, tmp_path, capsys,
                                                                                         monkeypatch):
    """Was (issue 44): after recording, every candidate judgment was set to 5 and `--verify` still passed (the
    record bound run rows by id, question and answer only)."""
    path = str(demo.path)
    demo.close()
    _record(path, tmp_path / "records", capsys)
    assert main(["keys", "export"]) == 0
    line = capsys.readouterr().out.strip()
    (tmp_path / "allowed_signers").write_text(line + "\n")
    monkeypatch.setenv("RAGEVAL_DATA_DIR", str(tmp_path / "another-machine"))   # no keys of its own there
    allowed = ["--allowed-signers", str(tmp_path / "allowed_signers")]
    assert main(["decisions", path, "--verify", *allowed]) == 0
    assert main(["decisions", path, "--verify"]) == 1          # the project's own list alone vouches for no one
    capsys.readouterr()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE judgments SET score = 5 WHERE run_row_id IN (SELECT rr.id FROM run_rows rr JOIN runs r "
                     "ON r.id = rr.run_id WHERE r.name = 'v2')")
    assert main(["decisions", path, "--verify", *allowed]) == 1
    err = capsys.readouterr().err
    assert "decision 1: the judgments of candidate run 'v2' changed since it was recorded" in err
    assert "baseline" not in err and "signature" not in err
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE golden_rows SET slice_tag = 'easy'")
    assert main(["decisions", path, "--verify", "--json", *allowed]) == 1
    found = json.loads(capsys.readouterr().out)
    assert found["verified"] is False and found["records"][0]["changed"] == ["candidate.judgments", "golden"]


def test_verdict_commands_that_fail_exit_4_never_a_verdicts_code(tmp_path, capsys):
    assert main(["decisions", str(tmp_path / "nosuch.rageval"), "--verify"]) == 4
    assert main(["gate", str(tmp_path / "nosuch.rageval"), *GATE]) == 4
    (tmp_path / "bad.rageval").write_bytes(b"not a project" * 100)
    assert main(["gate", str(tmp_path / "bad.rageval"), *GATE]) == 4
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("error:") == 3, err
    assert main(["check", str(tmp_path / "nosuch.rageval")]) == 4
    assert main(["metrics", str(tmp_path / "nosuch.rageval"), "--run", "v2"]) == 1     # no verdict: its own 1


def _ci_key(tmp_path, monkeypatch) -> bytes:
    """A CI's signing key: its private text (returned), RAGEVAL_SIGNER ci-bot, and tmp_path/allowed_signers naming
    it as the repository's file would."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode()
    monkeypatch.setenv("RAGEVAL_SIGNER", "ci-bot")
    (tmp_path / "allowed_signers").write_text(f"ci-bot {public}\n")
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH,
                             serialization.NoEncryption())


def test_ci_signs_with_a_key_from_an_environment_variable_named_never_given(demo, tmp_path, capsys, monkeypatch):
    """docs/ci.md's job: the CI's private key lives in a secret, read by the variable's name (`--key env:VAR`); the
    allowed-signers file in the repository names it."""
    text = _ci_key(tmp_path, monkeypatch)
    monkeypatch.setenv("RAGEVAL_SIGNING_KEY", text.decode())
    path = str(demo.path)
    demo.close()
    made = _record(path, tmp_path / "records", capsys, "--key", "env:RAGEVAL_SIGNING_KEY")
    assert made["record"]["signer"] == "ci-bot"
    assert not (tmp_path / "data" / "keys").exists()
    assert main(["decisions", path, "--verify", "--allowed-signers", str(tmp_path / "allowed_signers")]) == 0
    monkeypatch.delenv("RAGEVAL_SIGNING_KEY")
    assert main(["gate", path, *GATE, "--record", str(tmp_path / "r2"), "--key", "env:RAGEVAL_SIGNING_KEY"]) == 4
    assert "the environment variable RAGEVAL_SIGNING_KEY holds no key" in capsys.readouterr().err


def test_a_key_base64_encoded_on_one_line_signs_as_gitlab_can_mask_it(demo, tmp_path, capsys, monkeypatch):
    """Issue 74: GitLab masks only one-line variables, and the key's text base64-encoded on one line (`base64 -w0`)
    was refused (exit 4)."""
    import base64

    text = _ci_key(tmp_path, monkeypatch)
    monkeypatch.setenv("RAGEVAL_SIGNING_KEY", base64.b64encode(text).decode() + "\n")
    path = str(demo.path)
    demo.close()
    made = _record(path, tmp_path / "records", capsys, "--key", "env:RAGEVAL_SIGNING_KEY")
    assert made["record"]["signer"] == "ci-bot"
    assert main(["decisions", path, "--verify", "--allowed-signers", str(tmp_path / "allowed_signers")]) == 0
    monkeypatch.setenv("RAGEVAL_SIGNING_KEY", base64.b64encode(b"not a key at all").decode())
    assert main(["gate", path, *GATE, "--record", str(tmp_path / "r2"), "--key", "env:RAGEVAL_SIGNING_KEY"]) == 4
    err = capsys.readouterr().err
    assert "is not an unencrypted private key" in err and "Traceback" not in err


def test_hostile_decision_files_end_in_a_clear_error_never_an_internal_one_or_a_hang(demo, tmp_path, capsys):
    """Issue 45: 3 internal errors and 1 hang over 13 hostile files (deep nesting, a hash that is a list, a lone
    surrogate, a pipe)."""
    import os

    path = str(demo.path)
    demo.close()
    good = _record(path, tmp_path / "rec", capsys)["record"]
    good = json.loads((tmp_path / "rec" / "decision-1.json").read_text())
    cases = {"deep.json": b"[" * 100000 + b"]" * 100000, "hashlist.json": b'{"hash": ["x"]}',
             "hashdict.json": b'{"hash": {"a": 1}}', "binary.json": bytes(range(256)) * 4,
             "surrogate.json": json.dumps({**good, "note": "\ud800"}).encode(),
             "big.json": b'{"hash": "' + b"a" * (17 * 2**20) + b'"}',
             "upto.json": json.dumps({**good, "inputs": {"upto": {"a": "x"}}}).encode(),
             # a signature whose key is of no type cryptography knows (found by fuzzing: UnsupportedAlgorithm)
             "keytype.json": json.dumps({**good, "signature": {**good["signature"], "key": "[1, 2]"}}).encode()}
    files = []
    for name, body in cases.items():
        (tmp_path / name).write_bytes(body)
        files.append(str(tmp_path / name))
    os.mkfifo(tmp_path / "pipe.json")
    (tmp_path / "folder.json").mkdir()
    files += [str(tmp_path / "pipe.json"), str(tmp_path / "folder.json")]
    capsys.readouterr()
    assert main(["decisions", path, "--verify", *files]) == 1
    err = capsys.readouterr().err
    assert "internal error" not in err
    for name in [*cases, "pipe.json", "folder.json"]:
        assert f"{name}: " in err, name
    assert main(["decisions", path, "--verify", "--allowed-signers", str(tmp_path / "pipe.json")]) == 4
    assert "not a regular file" in capsys.readouterr().err


def _ci_machine(monkeypatch, tmp_path, name: str) -> None:
    monkeypatch.setenv("RAGEVAL_DATA_DIR", str(tmp_path / name))       # a machine with no keys of its own


def test_a_key_the_attacker_trusts_in_the_project_never_verifies_in_ci(demo, tmp_path, capsys, monkeypatch):
    """Issue 73: an attacker made a key under the CI's signer name and added it with `rageval keys trust` (the
    allowed signers lived in the project): `decisions --verify` exited 0 unless --allowed-signers was passed. The
    repository's `.rageval/allowed_signers`, found beside the project, is what decides."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    path = str(repo / "eval.rageval")
    demo.close()
    (repo / "eval.rageval").write_bytes(demo.path.read_bytes())
    assert main(["keys", "new", "--signer", "ci-bot"]) == 0
    assert main(["keys", "export"]) == 0
    honest = capsys.readouterr().out.strip().splitlines()[-1]
    (repo / ".rageval").mkdir()
    (repo / ".rageval" / "allowed_signers").write_text(honest + "\n")
    _record(path, repo / "decisions", capsys)
    _ci_machine(monkeypatch, tmp_path, "ci")
    assert main(["decisions", path, "--verify"]) == 0                 # the repository's file, found by default
    assert f"signers trusted from {repo / '.rageval' / 'allowed_signers'}" in capsys.readouterr().out
    _ci_machine(monkeypatch, tmp_path, "attacker")
    assert main(["keys", "new", "--signer", "ci-bot"]) == 0           # the attacker's own key, the CI's name
    assert main(["keys", "export"]) == 0
    forged = capsys.readouterr().out.strip().splitlines()[-1]
    assert main(["keys", "trust", path, forged]) == 0                  # into the project's list
    capsys.readouterr()
    _record(path, repo / "decisions", capsys)
    _ci_machine(monkeypatch, tmp_path, "ci")
    assert main(["decisions", path, "--verify"]) == 1
    err = capsys.readouterr().err
    assert "decision 2: it is signed by ci-bot, whose key only the project itself lists" in err
    assert "decision 1" not in err


def test_deleting_the_newest_record_is_caught_by_the_head_kept_outside(demo, tmp_path, capsys):
    """Issue 73: deleting the newest (failing) record with its files left a chain that verified (exit 0)."""
    path = str(demo.path)
    demo.close()
    out = tmp_path / "records"
    _record(path, out, capsys)
    second = _record(path, out, capsys)["record"]
    assert (out / "HEAD").read_text().split()[0] == second["hash"]
    md = tmp_path / "pr.md"
    assert main(["gate", path, *GATE, "--record", str(out), "--markdown", str(md), "--junit",
                 str(tmp_path / "gate.xml")]) == 3
    third = json.loads((out / "decision-3.json").read_text())["hash"]
    assert f"--head {third}" in md.read_text()                                  # kept in the pull request
    assert f'name="decision_record" value="{third}"' in (tmp_path / "gate.xml").read_text()
    capsys.readouterr()
    assert main(["decisions", path, "--verify", str(out / "decision-1.json")]) == 0
    assert "head: the chain reaches the head kept outside the project (decision 3)" in capsys.readouterr().out
    with sqlite3.connect(path) as conn:                                         # the attacker's move
        conn.execute("DELETE FROM decisions WHERE id = 3")
    conn.close()
    (out / "decision-3.json").unlink()
    (out / "decision-3.md").unlink()
    assert main(["decisions", path, "--verify", str(out / "decision-1.json")]) == 1
    assert "head: the newest record kept outside the project" in capsys.readouterr().err
    assert main(["decisions", path, "--verify", "--head", third]) == 1           # the hash from the PR comment
    assert f"({third}: {third[:12]}…) is not in the project's chain" in capsys.readouterr().err
    assert main(["decisions", path, "--verify", "--head", second["hash"]]) == 0


def test_a_deciding_setting_changed_after_recording_is_named(demo, tmp_path, capsys):
    """Issue 73: lowering the project's retirement threshold after recording verified (exit 0) naming nothing."""
    path = str(demo.path)
    demo.close()
    _record(path, tmp_path / "records", capsys)
    assert main(["decisions", path, "--verify"]) == 0
    capsys.readouterr()
    assert main(["settings", "set", path, "--threshold", "0.5"]) == 0
    capsys.readouterr()
    assert main(["decisions", path, "--verify"]) == 1
    err = capsys.readouterr().err
    assert ("decision 1: the project's settings that decide verdicts changed since it was recorded: "
            "retirement.threshold 0.7 -> 0.5") in err


def test_a_signing_key_is_never_made_or_replaced_silently_nor_used_unsaid_when_others_can_read_it(demo, capsys):
    """Issue 74: a lost signing key was replaced silently (records then signed by someone new), and a key file
    others could read (0644) was used without a word."""
    import os

    from rageval_desktop.core.reports import signing

    path = str(demo.path)
    demo.close()
    key = signing.key_dir() / "default"
    assert not key.exists()
    code = main(["gate", path, *GATE, "--record", str(demo.path.parent / "r1")])
    err = capsys.readouterr().err
    assert code in (0, 1, 3) and "warning: made your signing key 'default'" in err and key.exists()
    os.chmod(key, 0o644)
    main(["gate", path, *GATE, "--record", str(demo.path.parent / "r2")])
    assert f"warning: the signing key {key} can be read by other users (mode 644)" in capsys.readouterr().err
    public = key.read_bytes()
    key.unlink()                                     # lost; its public half stays
    assert main(["gate", path, *GATE, "--record", str(demo.path.parent / "r3")]) == 4
    err = capsys.readouterr().err
    assert "your signing key 'default' is missing" in err and not key.exists()
    assert not (demo.path.parent / "r3").exists() and public
