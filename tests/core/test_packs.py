"""Review packs: a sample split among reviewers (overlap K, even loads), blind files of their own kind, rated
elsewhere and merged back with provenance; importing again adds nothing; a tampered, foreign or orphaned pack is
refused and the project is left exactly as it was."""

from __future__ import annotations

import shutil
import sqlite3
from collections import Counter

import pytest

from rageval_desktop.core.review import packs, sampling
from rageval_desktop.core.review.packs import Pack, PackRefused
from rageval_desktop.core.store.project import Project
from tests.conftest import pack_ids

TEAM = ["ann", "bob", "cyd"]


def dump(project):
    return list(project.reader().iterdump())


def test_assign_gives_each_row_k_different_reviewers_and_even_loads():
    given = packs.assign(list(range(10)), TEAM, 2)
    per_row = Counter(r for rows in given.values() for r in rows)
    assert set(per_row.values()) == {2} and len(per_row) == 10
    assert all(len(set(rows)) == len(rows) for rows in given.values())      # never the same row twice
    assert sorted(len(rows) for rows in given.values()) == [6, 7, 7]
    with pytest.raises(Exception, match="1 to 3"):
        packs.assign([1], TEAM, 4)


def test_two_reviewers_rate_their_packs_and_the_ratings_come_back_with_provenance(demo, tmp_path):
    sample = sampling.create_sample(demo, "v2", "correctness", size=12, seed=4)
    made = packs.export_packs(demo, sample.id, ["ann", "bob"], tmp_path / "out", overlap=2)
    assert [m.reviewer for m in made] == ["ann", "bob"] and all(m.targets == 12 for m in made)
    # a pack is blind: no judge, no verdict, no rationale, no keys
    raw = (tmp_path / "out" / f"sample{sample.id}-ann.ragevalpack").read_bytes()
    for secret in (b"minilm-similarity", b"answer-recall", b"judgments", b"latency", b"api_key"):
        assert secret not in raw, secret
    ann, bob = (Pack(m.path) for m in made)
    la, lb = pack_ids(demo, made[0]), pack_ids(demo, made[1])
    assert ann.reviewer == "ann" and ann.sample().row_ids == [la[r] for r in sample.row_ids]
    assert ann.detail(la[sample.row_ids[0]]).question
    for i, row in enumerate(sample.row_ids):       # scripted reviewers: ann says 4, bob says 2 on odd rows
        ann.rate(la[row], 0, 4.0, seconds=1.5)
        bob.rate(lb[row], 0, 2.0 if i % 2 else 4.0, comment="too short" if i % 2 else None)
    undone = ann.rate(la[sample.row_ids[0]], 0, 1.0)
    ann.withdraw(undone.id)                        # ann's undo in the pack stays an undo in the project
    bob.rate(lb[sample.row_ids[1]], 0, 3.0)        # a re-rating: both kept, the latest counts
    results = [packs.import_pack(demo, m.path) for m in made]
    assert [(r["reviewer"], r["added"]) for r in results] == [("ann", 13), ("bob", 13)]
    rows = demo.reader().execute(
        "SELECT reviewer, COUNT(*), SUM(withdrawn_at IS NOT NULL), COUNT(DISTINCT origin) FROM human_ratings "
        "WHERE origin LIKE 'pack:%' GROUP BY reviewer ORDER BY reviewer").fetchall()
    assert rows == [("ann", 13, 1, 13), ("bob", 13, 0, 13)]
    latest = dict(demo.reader().execute(
        "SELECT reviewer, score FROM human_ratings WHERE run_row_id = ? AND withdrawn_at IS NULL ORDER BY id",
        (sample.row_ids[1],)).fetchall())
    assert latest["bob"] == 3.0
    times = {t for (t,) in demo.reader().execute("SELECT created_at FROM human_ratings WHERE origin LIKE 'pack:%'")}
    assert times == {r[6] for p in (ann, bob) for r in p.ratings()}     # the time it was rated, not imported
    # the same packs again: nothing added, the project unchanged but for the import's own record
    before = demo.reader().execute("SELECT COUNT(*) FROM human_ratings").fetchone()[0]
    again = packs.import_pack(demo, made[0].path)
    assert (again["added"], again["already_imported"]) == (0, 13)
    assert demo.reader().execute("SELECT COUNT(*) FROM human_ratings").fetchone()[0] == before
    # an undo made after the first import arrives with the next one
    ann.withdraw(ann.ratings()[1][0])
    assert packs.import_pack(demo, made[0].path)["withdrawn_since"] == 1


def _tamper(path, sql):
    conn = sqlite3.connect(path)
    conn.execute(sql)
    conn.commit()
    conn.close()


def test_a_tampered_foreign_or_orphaned_pack_is_refused_and_changes_nothing(demo, demo_file, tmp_path):
    sample = sampling.create_sample(demo, "v2", "correctness", size=5, seed=1)
    (made,) = packs.export_packs(demo, sample.id, ["ann"], tmp_path / "ann.ragevalpack")
    Pack(made.path).rate(pack_ids(demo, made)[sample.row_ids[0]], 0, 5.0)
    snapshot = dump(demo)

    def refused(path, match):
        with pytest.raises(PackRefused, match=match):
            packs.import_pack(demo, path)
        assert dump(demo) == snapshot

    for name, sql, match in (
            ("moved", "UPDATE pack_targets SET run_row_id = run_row_id + 1 WHERE position = 0", "changed after export"),
            ("score", "UPDATE pack_ratings SET score = 9", "whole number from 1 to 5, not 9"),
            ("stray", "INSERT INTO pack_ratings (position, score, created_at) VALUES (99, 3, '2026-01-01T00:00:00')",
             "names no target"),
            ("other", "UPDATE pack_meta SET value = 'another' WHERE key = 'reviewer'", "changed after export"),
            # values and a schema no export writes: refused, never a traceback (found by fuzzing packs)
            ("blob", "UPDATE pack_targets SET item_key = x'00ff' WHERE position = 0", "changed after export"),
            ("column", "ALTER TABLE pack_ratings RENAME COLUMN created_at TO made_at",
             "pack_ratings has no created_at"),
            ("sample id", "UPDATE pack_meta SET value = 'x' WHERE key = 'sample_id'", "sample id is damaged"),
            ("bytes", "UPDATE pack_meta SET value = x'00ff' WHERE key = 'reviewer'", "settings are damaged")):
        copy = tmp_path / f"{name}.ragevalpack"
        shutil.copy(made.path, copy)
        _tamper(copy, sql)
        refused(copy, match)
    not_pack = tmp_path / "x.ragevalpack"
    not_pack.write_bytes(b"SQLite format 3\x00" + b"\x00" * 200)
    refused(not_pack, "not a review pack")
    refused(demo.path, "not a review pack")        # a project file is not a pack
    # a pack from another project
    with Project.open(shutil.copy(demo_file, tmp_path / "second.rageval")) as second:
        s2 = sampling.create_sample(second, "v2", "correctness", size=3, seed=0)
        (foreign,) = packs.export_packs(second, s2.id, ["ann"], tmp_path / "foreign.ragevalpack")
    refused(foreign.path, "another project")
    # the sample is gone
    with demo.write("drop the sample") as w:
        w.execute("DELETE FROM review_samples WHERE id = ?", (sample.id,))
    snapshot = dump(demo)
    refused(made.path, "no longer exists")


def test_a_pack_whose_cells_are_not_text_still_opens_for_its_reviewer_and_shows_them_as_text(demo, tmp_path):
    sample = sampling.create_sample(demo, "v2", "correctness", size=3, seed=1)
    (made,) = packs.export_packs(demo, sample.id, ["ann"], tmp_path / "ann.ragevalpack")
    row = pack_ids(demo, made)[sample.row_ids[0]]
    _tamper(made.path, f"UPDATE pack_rows SET question = x'e282ac41', answer = 42 WHERE run_row_id = {row}")
    _tamper(made.path, f"UPDATE pack_passages SET text = 3.5, chunk_id = x'41' WHERE run_row_id = {row}")
    detail = Pack(made.path).detail(row)
    assert (detail.question, detail.answer) == ("\u20acA", "42")
    assert {(p.text, p.chunk_id) for p in detail.passages} == {("3.5", "A")}


def test_export_refuses_to_overwrite_a_pack_and_records_nothing_then(demo, tmp_path):
    sample = sampling.create_sample(demo, "v2", "correctness", size=4, seed=0)
    target = tmp_path / "ann.ragevalpack"
    target.write_bytes(b"ratings live here")
    with pytest.raises(Exception, match="already exists"):
        packs.export_packs(demo, sample.id, ["ann"], target)
    assert target.read_bytes() == b"ratings live here" and packs.list_packs(demo) == []


def test_a_nugget_sample_travels_with_its_item_texts(tmp_path, monkeypatch):
    from tests.core.test_review_targets import Script, add_gold_free_judges  # noqa: F401
    from tests.gui.test_gold_free_views import judged_project

    monkeypatch.setenv("JUDGE_KEY", "sk-test")
    with Project.open(judged_project(tmp_path / "ore.rageval")) as project:
        sample = sampling.create_sample(project, "ore", "nuggets", size=5, seed=0)
        (made,) = packs.export_packs(project, sample.id, ["ann"], tmp_path / "n.ragevalpack")
        pack = Pack(made.path)
        assert [p.key for p in pack.scale.points] == ["n", "p", "f"]
        got = pack.sample()
        assert (got.items, got.keys) == (sample.items, sample.keys)
        pack.rate(got.row_ids[0], got.items[0], 0.5)
        packs.import_pack(project, made.path)
        assert project.reader().execute("SELECT passage_rank, item_key, score FROM human_ratings").fetchall() == [
            (got.items[0], got.keys[0], 0.5)]


def test_importing_several_packs_is_all_or_nothing(demo, demo_file, tmp_path, capsys):
    """Was (issue 28): `pack import P good bad` exited 1 after merging the good pack, without saying so."""
    from rageval_desktop.cli import main

    sample = sampling.create_sample(demo, "v2", "correctness", size=6, seed=2)
    good, other = packs.export_packs(demo, sample.id, ["ann", "bob"], tmp_path / "out", overlap=1)
    for pack in (good, other):
        Pack(pack.path).rate(Pack(pack.path).sample().row_ids[0], 0, 4.0)
    bad = tmp_path / "bad.ragevalpack"
    shutil.copy(other.path, bad)
    _tamper(bad, "UPDATE pack_ratings SET score = 9")
    query = "SELECT (SELECT COUNT(*) FROM human_ratings), (SELECT COUNT(imported_at) FROM review_packs)"
    before = demo.reader().execute(query).fetchone()
    demo.close()
    assert main(["pack", "import", str(demo.path), str(good.path), str(bad)]) != 0
    err = capsys.readouterr().err
    assert "bad.ragevalpack" in err and "none of the 2 packs was imported" in err
    with Project.open(demo.path) as again:
        assert again.reader().execute(query).fetchone() == before
    assert main(["pack", "import", str(demo.path), str(good.path), str(other.path)]) == 0
