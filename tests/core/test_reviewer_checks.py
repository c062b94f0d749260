"""Reviewers checked (core.review.quality): gold items settled by others come into a reviewer's queue and are kept
apart from every audit; a reviewer who fails them is set aside (their ratings stop counting, ratings made while held
are held too) and brought back by undo; retests bring back the reviewer's own earlier target; the accuracy's
confidence sequence keeps its error rate when looked at after every check."""

from __future__ import annotations

import numpy as np
import pytest

from rageval_desktop.core import ops
from rageval_desktop.core.base.errors import NotFound, RagevalError
from rageval_desktop.core.judges.registry import get_judge
from rageval_desktop.core.review import agreement, evidence, quality, ratings, sampling


def _standing(project, reviewer=None):
    sql = "SELECT COUNT(*) FROM human_ratings WHERE metric = 'correctness' AND withdrawn_at IS NULL"
    return project.reader().execute(sql + (" AND reviewer = ?" if reviewer else ""),
                                    (reviewer,) if reviewer else ()).fetchone()[0]


@pytest.fixture
def team(demo):
    """ann and bob rate 20 targets of a v1 sample alike (the gold items); carol gets a sample of v2 to rate."""
    with demo.write("only this team's ratings") as w:
        w.execute("DELETE FROM human_ratings")
    first = sampling.create_sample(demo, "v1", "correctness", size=20, seed=1)
    truth = {row: float(1 + (row % 5)) for row in first.row_ids}
    for row in first.row_ids:
        for who in ("ann", "bob"):
            ratings.rate(demo, row, "correctness", who, truth[row], sample_id=first.id)
    quality.set_settings(demo, gold_rate=0.5, retest_rate=0.0)
    carols = sampling.create_sample(demo, "v2", "correctness", size=30, seed=2)
    return demo, truth, carols


def _rate_with_checks(project, sample, reviewer, answer, n):
    """Rate n targets of the sample, answering every check that comes due with answer(check)."""
    answered = []
    for row, item in sample.targets[:n]:
        ratings.rate(project, row, "correctness", reviewer, 3.0, sample_id=sample.id, seconds=4.0, item=item)
        check = quality.due(project, sample.id, reviewer)
        while check is not None:
            quality.record(project, sample.id, reviewer, check, answer(check), seconds=3.0)
            answered.append(check)
            check = quality.due(project, sample.id, reviewer)
    return answered


def test_gold_items_come_due_and_never_count_in_an_audit(team):
    project, truth, carols = team
    assert {c.row_id: c.expected for c in quality.gold_items(project, "correctness", "carol")} == truth
    assert quality.gold_items(project, "correctness", "ann") == []      # ann rated every settled target herself
    judge = get_judge(project, "minilm-similarity")
    before = agreement.agreement(project, judge).n
    answered = _rate_with_checks(project, carols, "carol", lambda c: c.expected, 16)
    assert 4 <= len(answered) <= 12 and all(c.kind == "gold" for c in answered)
    assert len({c.row_id for c in answered}) == len(answered)            # never the same gold item twice
    assert all(c.row_id in truth and c.expected == truth[c.row_id] for c in answered)
    # the checks are kept apart: the audit counts carol's 16 sample ratings, none of her checks
    assert agreement.agreement(project, judge).n == before + 16
    report = quality.quality_report(project, "correctness")
    carol = next(r for r in report.reviewers if r.reviewer == "carol")
    assert (carol.gold.n, carol.gold.agreed) == (len(answered), len(answered))
    assert carol.verdict in ("passes", "cannot tell") and carol.rated == 16 and carol.fast == 0
    # deterministic: the same reviewer, sample and history bring the same check
    assert quality.due(project, carols.id, "carol") == quality.due(project, carols.id, "carol")


def test_a_failing_reviewer_is_set_aside_and_brought_back(team):
    project, truth, carols = team
    answered = _rate_with_checks(project, carols, "carol", lambda c: 1.0 if c.expected >= 3 else 5.0, 30)
    report = quality.quality_report(project, "correctness")
    carol = next(r for r in report.reviewers if r.reviewer == "carol")
    wrong = sum(1 for c in answered if not quality.agrees(1.0 if c.expected >= 3 else 5.0, c.expected,
                                                            "correctness"))
    assert carol.gold.n == len(answered) and carol.gold.agreed == len(answered) - wrong
    assert carol.verdict == "fails", quality.describe(carol, 0.7)
    assert "set their ratings aside" in quality.describe(carol, 0.7)

    judge = get_judge(project, "minilm-similarity")
    counted = agreement.agreement(project, judge).n
    assert _standing(project, "carol") == 30
    with pytest.raises(RagevalError, match="needs a reason"):
        quality.set_aside(project, "carol", "correctness", " ", "lead")
    done = ops.run(project, ops.SetReviewerAside(reviewer="carol", metric="correctness",
                                                     reason="failed gold checks", lead="lee"))
    assert _standing(project, "carol") == 0 and _standing(project, "ann") == 20
    assert agreement.agreement(project, judge).n == counted - 30
    # a rating made while held is saved, held, and shown to her as rated
    extra = sampling.extend_sample(project, carols.id, 1)
    row, item = extra.targets[-1]
    made = ratings.rate(project, row, "correctness", "carol", 2.0, sample_id=carols.id, item=item)
    assert made.held and _standing(project, "carol") == 0
    assert (row, item) in ratings.my_ratings(project, carols.id, "carol")
    # one she takes back while held stays taken back
    ratings.withdraw(project, made.id)
    held = quality.quality_report(project, "correctness")
    assert next(r for r in held.reviewers if r.reviewer == "carol").held["reason"] == "failed gold checks"
    ops.undo(project, done.operation)                                   # brought back
    assert _standing(project, "carol") == 30
    assert agreement.agreement(project, judge).n == counted
    assert quality.hold_of(project, "carol", "correctness") is None
    with pytest.raises(NotFound, match="not set aside"):
        quality.bring_back(project, "carol", "correctness")


def test_retests_bring_back_the_reviewers_own_earlier_target(team):
    project, _, carols = team
    quality.set_settings(project, gold_rate=0.0, retest_rate=0.3)
    seen = []
    for n, (row, item) in enumerate(carols.targets[:20]):
        ratings.rate(project, row, "correctness", "carol", float(1 + n % 5), sample_id=carols.id, item=item)
        check = quality.due(project, carols.id, "carol")
        if check is not None:
            quality.record(project, carols.id, "carol", check, check.expected)
            seen.append((check, n))
    assert seen and all(c.kind == "retest" for c, _ in seen)
    order = [t for t in carols.targets[:20]]
    for check, n in seen:
        first = order.index((check.row_id, check.item))
        assert n - first >= quality.RETEST_AFTER and check.expected == float(1 + first % 5)
    report = quality.quality_report(project, "correctness")
    carol = next(r for r in report.reviewers if r.reviewer == "carol")
    assert carol.retest.n == len(seen) == carol.retest.agreed and carol.gold.n == 0


def test_checks_and_settings_refuse_bad_values(team):
    project, _, carols = team
    with pytest.raises(RagevalError, match="gold rate is a number from 0 to 0.5"):
        quality.set_settings(project, gold_rate=0.9)
    check = quality.Check("gold", carols.row_ids[0], "correctness", 0, None, 3.0)
    with pytest.raises(RagevalError, match="whole number from 1 to 5"):
        quality.record(project, carols.id, "carol", check, 7.0)
    with pytest.raises(NotFound, match="rated nothing"):
        quality.set_aside(project, "nobody", "correctness", "why", "lead")


def test_the_accuracy_sequence_holds_its_error_rate_under_looks_after_every_check():
    rng = np.random.default_rng(11)
    misses, paths, length, p = 0, 150, 60, 0.7
    for _ in range(paths):
        hits = np.cumsum(rng.random(length) < p)
        for n in range(1, length + 1):
            low, high = evidence.proportion_sequence(int(hits[n - 1]), n, alpha=0.05)
            if not low <= p <= high:
                misses += 1
                break
    assert misses / paths <= 0.05
    # the verdict's one-sided test: a reviewer exactly at the floor is failed, looked at after every check, at most
    # about alpha of the time; one at 30% is failed within 30 checks nearly always
    alarms = caught = 0
    for _ in range(paths):
        hits = np.cumsum(rng.random(length) < p)
        alarms += any(evidence.beyond_floor(int(hits[n - 1]), n, 0.7) == "below" for n in range(1, length + 1))
        poor = np.cumsum(rng.random(30) < 0.3)
        caught += any(evidence.beyond_floor(int(poor[n - 1]), n, 0.7) == "below" for n in range(1, 31))
    assert alarms / paths <= 0.05 and caught / paths >= 0.9
    # and it is wider than a single look's exact interval, never narrower
    low, high = evidence.proportion_sequence(35, 50)
    assert low < 0.5539 and high > 0.8214


def test_gold_items_from_the_samples_own_run_come_first(team):
    """The card's title names the row's run: a gold item from another run would give the check away."""
    project, truth, carols = team
    settled_here = [r for r in sampling.create_sample(project, "v2", "correctness", size=40, seed=7).row_ids
                    if r not in carols.row_ids][:3]
    for row in settled_here:
        for who in ("ann", "bob"):
            ratings.rate(project, row, "correctness", who, 4.0)
    answered = _rate_with_checks(project, carols, "carol", lambda c: c.expected, 8)
    assert len(answered) >= 4          # v2's three first, then (with none left there) the other run's
    assert sorted(c.row_id for c in answered[:3]) == sorted(settled_here)
    assert all(c.row_id in truth for c in answered[3:])
    assert len(quality.gold_items(project, "correctness", "carol")) == len(truth) + 3 - len(answered)   # each once


def test_review_packs_hide_gold_items_and_retests_that_come_back_as_checks(team, tmp_path):
    """Issue 47: a pack carries checks as the desk does — gold items settled by others and retests of the reviewer's
    own earlier ratings, at the project's rates — indistinguishable in the file; on import their answers become
    checks (one per position, the latest), never ratings; importing again, or after a re-rating, counts none twice."""
    import sqlite3

    from rageval_desktop.core.review import packs

    project, truth, carols = team
    earlier = sampling.create_sample(project, "v2", "correctness", size=10, seed=9)
    for row in earlier.row_ids:                                   # carol's own ratings: the retest pool
        ratings.rate(project, row, "correctness", "carol", 2.0, sample_id=earlier.id)
    quality.set_settings(project, gold_rate=0.2, retest_rate=0.1)
    mine = [(r, i) for r, i in carols.targets if r not in set(earlier.row_ids)]
    sample = sampling.sample_of_rows(project, "v2", "correctness", [r for r, _ in mine][:20], "carol's pack")
    info = packs.export_packs(project, sample.id, ["carol"], tmp_path / "carol.ragevalpack")[0]
    assert info.checks == 6 and info.targets == 26                # 20 targets, 4 gold items, 2 retests
    assert (info.gold, info.retests) == (4, 2) and info.hidden() == "4 gold items and 2 retests hidden among them"
    assert packs.expected_checks(20, 1, 1, 0.2, 0.1) == (20, 4, 2)      # what the export dialog says beforehand
    hidden = dict(project.reader().execute("SELECT position, kind FROM review_pack_checks WHERE pack_id = ?",
                                           (info.pack_id,)).fetchall())
    assert sorted(hidden.values()) == ["gold"] * 4 + ["retest"] * 2
    assert min(hidden) > 0 or max(hidden) < 25                    # mixed in, not all at one end
    with sqlite3.connect(info.path) as f:                         # nothing in the file tells a check apart
        text = "\n".join(r[0] or "" for r in f.execute("SELECT sql FROM sqlite_master"))
        assert "kind" not in text and "expected" not in text
        assert not f.execute("SELECT 1 FROM pack_meta WHERE value LIKE '%gold%' OR value LIKE '%retest%'").fetchall()
    pack = packs.Pack(info.path)
    by_position = {p: (r, i) for p, r, i, _ in pack.targets}
    real = dict(project.reader().execute("SELECT local_id, run_row_id FROM review_pack_rows WHERE pack_id = ?",
                                         (info.pack_id,)))        # the pack names its rows by ids of its own
    standing = _standing(project, "carol")
    for position, (row, item) in by_position.items():
        if hidden.get(position) == "gold":
            score = truth[real[row]] if position != min(p for p, k in hidden.items() if k == "gold") else \
                (5.0 if truth[real[row]] <= 2 else 1.0)           # one gold item answered wrong
        else:
            score = 2.0 if hidden.get(position) == "retest" else 4.0
        pack.rate(row, item, score)
    result = packs.import_pack(project, info.path)
    assert (result["added"], result["checks"]) == (20, 6)
    assert _standing(project, "carol") == standing + 20           # the checks are not ratings
    carol = next(r for r in quality.quality_report(project, "correctness").reviewers if r.reviewer == "carol")
    assert (carol.gold.n, carol.gold.agreed, carol.retest.n, carol.retest.agreed) == (4, 3, 2, 2)
    again = packs.import_pack(project, info.path)
    assert (again["added"], again["checks_changed"], again["already_imported"]) == (0, 0, 20)
    retest = next(p for p, k in hidden.items() if k == "retest")
    last = pack.rate(*by_position[retest], 5.0)                   # the reviewer changes their mind on a retest
    assert packs.import_pack(project, info.path)["checks_changed"] == 1
    carol = next(r for r in quality.quality_report(project, "correctness").reviewers if r.reviewer == "carol")
    assert (carol.retest.n, carol.retest.agreed) == (2, 1)        # replaced, not added
    pack.withdraw(last.id)                                        # undone in the pack: the first answer stands
    assert packs.import_pack(project, info.path)["checks_changed"] == 1
    carol = next(r for r in quality.quality_report(project, "correctness").reviewers if r.reviewer == "carol")
    assert (carol.retest.n, carol.retest.agreed) == (2, 2)
    first = next(rid for rid, pos, *_ in pack.ratings() if pos == retest)
    pack.withdraw(first)                                          # and undone too: no answer for that position
    assert packs.import_pack(project, info.path)["checks_changed"] == 1
    carol = next(r for r in quality.quality_report(project, "correctness").reviewers if r.reviewer == "carol")
    assert carol.retest.n == 1


def test_nothing_in_a_pack_tells_its_checks_from_its_targets(team, tmp_path, monkeypatch):
    """Issue 74: retests come from another run, so their row ids fell outside the run's range — "every row below
    the smallest target id is a check" found 2 of 2. A pack names its rows by ids of its own, drawn at random; the
    attacker's moves: id ranges, the ids themselves (the project's), the run, positions."""
    import random
    import sqlite3

    from rageval_desktop.core.review import packs

    project, truth, carols = team
    monkeypatch.setattr(packs.random, "SystemRandom", lambda: random.Random(7))     # the draw, repeatable here
    first = project.reader().execute("SELECT s.id FROM review_samples s WHERE s.run_id = (SELECT id FROM runs "
                                     "WHERE name = 'v1') ORDER BY s.id").fetchone()[0]
    v1 = sampling.get_sample(project, first)
    for row in v1.row_ids[:10]:                                   # carol rated v1 before: retests from another run
        ratings.rate(project, row, "correctness", "carol", 2.0, sample_id=v1.id)
    quality.set_settings(project, gold_rate=0.2, retest_rate=0.2)
    info = packs.export_packs(project, carols.id, ["carol"], tmp_path / "carol.ragevalpack")[0]
    hidden = {p for (p,) in project.reader().execute("SELECT position FROM review_pack_checks WHERE pack_id = ?",
                                                     (info.pack_id,))}
    real = dict(project.reader().execute("SELECT local_id, run_row_id FROM review_pack_rows WHERE pack_id = ?",
                                         (info.pack_id,)))
    runs = dict(project.reader().execute("SELECT rr.id, r.name FROM run_rows rr JOIN runs r ON r.id = rr.run_id"))
    with sqlite3.connect(info.path) as f:
        targets = f.execute("SELECT position, run_row_id FROM pack_targets ORDER BY position").fetchall()
        columns = {r[1] for t in ("pack_rows", "pack_targets", "pack_passages")
                   for r in f.execute(f"PRAGMA table_info({t})")}
    checks = [r for p, r in targets if p in hidden]
    plain = [r for p, r in targets if p not in hidden]
    assert len(checks) >= 4 and {runs[real[r]] for r in checks} == {"v1"} and {runs[real[r]] for r in plain} == {"v2"}
    # the project's ids are not in the file (the ranges that told the runs apart)
    assert not set(real) & set(runs) and all(r >= 1000 for r in real)
    below, above = min(plain), max(plain)
    assert not all(r < below for r in checks) and not all(r > above for r in checks)
    assert sum(below <= r <= above for r in checks) >= len(checks) // 2    # inside the targets' own spread
    assert "run" not in columns and "run_id" not in columns       # no row says which run it comes from
    positions = sorted(hidden)
    assert positions[0] < len(targets) / 2 < positions[-1]        # mixed in, not at one end
    # and the pack still comes back whole: its own ids mapped back to the project's
    pack = packs.Pack(info.path)
    for _, row, item, _ in pack.targets:
        pack.rate(row, item, 3.0)
    assert packs.import_pack(project, info.path)["added"] == len(plain)


def test_a_reviewer_who_flips_threes_and_fours_fails_the_check_the_decisions_would():
    """Issue 75: a check counted any answer within one point as agreement, so a reviewer turning every failing 3
    into a passing 4 (and back) passed QC, though the licences and the gate decide on the pass mark."""
    assert not quality.agrees(4.0, 3.0, "correctness") and not quality.agrees(3.0, 4.0, "correctness")
    assert quality.agrees(5.0, 4.0, "correctness") and quality.agrees(1.0, 2.0, "correctness")
    assert not quality.agrees(1.0, 0.0, "correctness_binary") and quality.agrees(0.0, 0.0, "correctness_binary")
    flips = [(4.0, 3.0), (3.0, 4.0)] * 10 + [(5.0, 5.0)] * 10
    assert sum(quality.agrees(s, e, "correctness") for s, e in flips) == 10     # a third: no reviewer to keep
