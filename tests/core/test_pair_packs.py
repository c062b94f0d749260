"""Pairwise review packs (issue 77.7: "the review pack carries pairwise items"): a pair sample rated without a server,
blind in the file (which run wrote which side stays in the project), brought back by `rageval pack import` with the
score packs, all or nothing; a tampered, foreign or forged pack changes nothing."""

from __future__ import annotations

import shutil
import sqlite3

import pytest

from rageval_desktop.cli import main
from rageval_desktop.core.review import packs, pairwise, sampling
from rageval_desktop.core.review.packs import PackRefused
from rageval_desktop.core.review.pair_packs import PairPack, export_pair_packs, import_review_packs, is_pair_pack

SAMPLE = 1     # the demo's pair sample of v1 and v2


def standing(project) -> list[tuple]:
    return project.reader().execute("SELECT position, reviewer, preference, skipped, origin IS NOT NULL FROM "
                                    "pair_ratings WHERE withdrawn_at IS NULL ORDER BY position, reviewer").fetchall()


def test_two_reviewers_rate_their_packs_blind_and_the_preferences_come_back_in_the_runs_terms(demo, tmp_path, capsys):
    assert main(["pairs", "export-packs", str(demo.path), "--sample", str(SAMPLE), "--reviewer", "ann",
                 "--reviewer", "bob", "--out", str(tmp_path / "packs")]) == 0
    ann, bob = tmp_path / "packs" / "pairs1-ann.ragevalpack", tmp_path / "packs" / "pairs1-bob.ragevalpack"
    assert is_pair_pack(ann) and is_pair_pack(bob) and "30 pairs" in capsys.readouterr().out
    pack = PairPack(ann)
    assert not {"v1", "v2"} & set(pack.meta.values()) and not {"run", "run_a", "run_b"} & set(pack.meta)   # blind
    raw = ann.read_bytes()
    assert b"a_left" not in raw and b"run_a" not in raw and b"row_a" not in raw
    items = {i.position: i for i in pairwise.pair_items(demo, SAMPLE)}
    assert pack.reviewer == "ann" and len(pack.items()) == 30
    shown = {i.position: i for i in pack.items()}
    assert all((shown[p].answer_a, shown[p].answer_b) == items[p].sides() for p in items)    # left, right as shown
    a_left = next(p for p in items if items[p].a_left)
    b_left = next(p for p in items if not items[p].a_left)
    pack.rate(a_left, "b")                     # the right answer, for ann (pack terms: 'b' is the right side)
    pack.rate(b_left, "a")                     # the left answer: run B's here
    pack.rate(b_left, "a")                     # said again: one standing rating
    skipped = pack.rate(3 if 3 not in (a_left, b_left) else 4, None)
    pack.withdraw(skipped)
    bob_said = PairPack(bob).rate(a_left, "b")
    assert main(["pack", "import", str(demo.path), str(ann), str(bob)]) == 0
    assert "4 rating(s) added from ann" in capsys.readouterr().out      # its history: 2 standing, 2 withdrawn
    assert standing(demo) == sorted([(a_left, "ann", "a" if not items[a_left].a_left else "b", 0, 1),
                                     (a_left, "bob", "b", 0, 1), (b_left, "ann", "b", 0, 1)])
    assert pairwise.human_preferences(demo, SAMPLE)[0] == {a_left: "b", b_left: "b"}
    # again: nothing added; a rating withdrawn in the pack since is withdrawn in the project
    PairPack(bob).withdraw(bob_said)
    found = import_review_packs(demo, [ann, bob])
    assert [r["added"] for r in found] == [0, 0] and found[1]["withdrawn_since"] == 1
    assert all(r[1] != "bob" for r in standing(demo))


def test_a_pack_rating_is_kept_once_under_its_origin(demo, tmp_path):
    """A pack's rating ids are its own: the project keeps them as each rating's origin, once."""
    made = export_pair_packs(demo, SAMPLE, ["cy"], tmp_path / "cy.ragevalpack")
    pack = PairPack(made[0].path)
    rid = pack.rate(1, "tie")
    assert [i.rating_id for i in pack.items() if i.position == 1] == [rid]
    import_review_packs(demo, [made[0].path])
    assert demo.reader().execute("SELECT origin FROM pair_ratings").fetchall() == [(f"pairpack:{made[0].pack_id}:"
                                                                                     f"{rid}",)]


def test_a_tampered_foreign_or_forged_pack_is_refused_and_changes_nothing(demo, demo_file, tmp_path):
    made = export_pair_packs(demo, SAMPLE, ["ann", "bob"], tmp_path / "out")
    good, bad = (made[0].path, made[1].path)
    PairPack(good).rate(1, "a")
    conn = sqlite3.connect(bad)
    conn.execute("UPDATE pack_pairs SET left = 'a better answer, says the reviewer' WHERE position = 2")
    conn.commit()
    conn.close()
    with pytest.raises(PackRefused, match="changed after it was exported.*none of the 2 packs was imported"):
        import_review_packs(demo, [good, bad])
    assert standing(demo) == []                                          # all or nothing across the files
    forged = tmp_path / "forged.ragevalpack"
    shutil.copy(good, forged)
    conn = sqlite3.connect(forged)
    conn.execute("INSERT INTO pack_pair_ratings (position, side, skipped, created_at) VALUES (2, 'banana', 0, "
                 "'2026-01-01T00:00:00')")
    conn.execute("INSERT INTO pack_pair_ratings (position, side, skipped, created_at) VALUES (999, 'left', 0, "
                 "'2026-01-01T00:00:00')")
    conn.commit()
    conn.close()
    with pytest.raises(PackRefused, match="has no side"):
        import_review_packs(demo, [forged])
    other = tmp_path / "other.rageval"
    shutil.copy(demo_file, other)
    from rageval_desktop.core.store.project import Project

    with Project.open(other) as elsewhere, pytest.raises(PackRefused, match="another project|never exported"):
        import_review_packs(elsewhere, [good])
    newer = tmp_path / "newer.ragevalpack"
    shutil.copy(good, newer)
    conn = sqlite3.connect(newer)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(PackRefused, match="made by a newer RAGEval Desktop"):
        PairPack(newer)
    (tmp_path / "junk.ragevalpack").write_bytes(b"SQLite format 3\x00" + b"\x00" * 200)
    with pytest.raises(PackRefused):
        PairPack(tmp_path / "junk.ragevalpack")
    assert standing(demo) == []


def test_score_packs_and_pairwise_packs_come_back_in_one_import(demo, tmp_path):
    pairs = export_pair_packs(demo, SAMPLE, ["ann"], tmp_path / "pairs")[0]
    sample = sampling.create_sample(demo, "v2", "correctness", size=6, seed=3)
    scores = packs.export_packs(demo, sample.id, ["ann"], tmp_path / "scores")[0]
    PairPack(pairs.path).rate(5, "tie")
    score_pack = packs.Pack(scores.path)
    row, item, _ = score_pack.targets[0][1], score_pack.targets[0][2], None
    score_pack.rate(row, item, 1.0)
    found = import_review_packs(demo, [scores.path, pairs.path])
    assert [r["added"] for r in found] == [1, 1] and standing(demo)[0][:3] == (5, "ann", "tie")
