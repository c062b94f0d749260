"""Reviewers rate what the gold-free judges judged: a passage (UMBRELA 0-3), a nugget's support, a citation's
support. Samples of such targets, ratings on each metric's own scale, agreement per target (a nugget matched by
its text, never by a number that moved), and ratings files that name the nugget or citation."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from rageval_desktop.core.base.errors import ImportFailed, RagevalError
from rageval_desktop.core.golden import nuggets as nugget_lists
from rageval_desktop.core.importers import import_ratings
from rageval_desktop.core.jobs.judge_job import run_judge_job
from rageval_desktop.core.jobs.spec import JobSpec
from rageval_desktop.core.judges.registry import get_judge
from rageval_desktop.core.review import agreement, card, ratings, sampling, targets
from rageval_desktop.core.review.settings import RetirementPolicy
from rageval_desktop.core.store.queries import run_row_detail
from tests.core.test_gold_free import Script, add_gold_free_judges, ore  # noqa: F401  (the fixture)
from tests.support.fake_openai import FakeOpenAI

POINTS = [0.0, 0.5, 1.0]


@pytest.fixture
def judged(ore):  # noqa: F811
    with FakeOpenAI(Script()) as server:
        add_gold_free_judges(ore, server)
        stats = run_judge_job(ore, JobSpec(run="ore"))
        assert (stats.errors, stats.unparsed) == (0, 0)
    return ore


def subs(project, judge):
    """(row, key) -> the judge's score, from its sub-judgments, read independently of core.review."""
    out = {}
    for row, rationale, detail, score in project.reader().execute(
            "SELECT x.run_row_id, x.rationale, x.detail, x.score FROM judgments x JOIN judges j ON j.id = x.judge_id "
            "WHERE j.name = ? AND x.passage_rank > 0 AND x.status = 'ok'", (judge,)):
        key = json.loads(detail)["text"] if judge == "nug" else rationale
        out[row, " ".join(key.split())] = score
    return out


def contiguous(row_ids):
    seen, last = set(), None
    for r in row_ids:
        if r != last and r in seen:
            return False
        seen.add(r)
        last = r
    return True


def test_a_nugget_sample_holds_judged_nuggets_by_text_a_row_s_nuggets_together(judged):
    judged_nuggets = subs(judged, "nug")
    sample = sampling.create_sample(judged, "ore", "nuggets", size=12, seed=3)
    assert sample.unit == "nugget" and len(sample.row_ids) == min(12, len(judged_nuggets))
    assert all(i >= 1 for i in sample.items)
    assert all((r, k) in judged_nuggets for r, k in zip(sample.row_ids, sample.keys, strict=True))
    assert len(set(sample.targets)) == len(sample.targets) and contiguous(sample.row_ids)
    # reproducible from the seed; extending adds targets it does not hold yet
    again = sampling.create_sample(judged, "ore", "nuggets", size=12, seed=3)
    assert again.targets == sample.targets and again.keys == sample.keys
    small = sampling.create_sample(judged, "ore", "nuggets", size=3, seed=1)
    grown = sampling.extend_sample(judged, small.id, 4)
    assert grown.targets[:3] == small.targets and len(set(grown.targets)) == 7
    listed = next(s for s in sampling.list_samples(judged) if s["id"] == sample.id)
    assert (listed["unit"], listed["rows"]) == ("nugget", len(sample.row_ids))


def test_citation_and_passage_samples_name_what_is_rated(judged):
    cites = sampling.create_sample(judged, "ore", "citation_support", size=50, seed=0)
    assert set(zip(cites.row_ids, cites.keys, strict=True)) == set(subs(judged, "cit"))
    row, item, key = cites.row_ids[0], cites.items[0], cites.keys[0]
    shown = targets.card(run_row_detail(judged, row), "citation_support", item, key)
    number = int(key[1:key.index("]")])
    assert shown.text == key.split("] ", 1)[1] and shown.context_title == f"PASSAGE [{number}]"
    passages = judged.reader().execute("SELECT p.rank, p.chunk_id, p.text FROM retrieved_passages p WHERE "
                                       "p.run_row_id = ?", (row,)).fetchall()
    assert shown.context in {t for _, cid, t in passages if cid.endswith(f"[{number}]")} or "not among" in shown.context

    graded = sampling.create_sample(judged, "ore", "passage_relevance", size=8, seed=0)
    assert graded.unit == "passage" and all(k is None for k in graded.keys)
    ranks = {(r, k) for r, k in judged.reader().execute(
        "SELECT x.run_row_id, x.passage_rank FROM judgments x JOIN judges j ON j.id = x.judge_id WHERE j.name = "
        "'umbrela'")}
    assert set(graded.targets) <= ranks and len(graded.targets) == 8
    shown = targets.card(run_row_detail(judged, graded.row_ids[0]), "passage_relevance", graded.items[0], None)
    assert shown.title == f"Passage #{graded.items[0]}"


def test_a_sample_of_unjudged_nuggets_says_what_to_do(ore):  # noqa: F811
    with pytest.raises(RagevalError, match="run a nuggets judge on it first"):
        sampling.create_sample(ore, "ore", "nuggets", size=5)


def test_ratings_use_the_metric_s_scale_and_name_their_target(judged):
    sample = sampling.create_sample(judged, "ore", "nuggets", size=4, seed=0)
    row, item, key = sample.row_ids[0], sample.items[0], sample.keys[0]
    with pytest.raises(RagevalError, match="rated 0, 0.5, 1, not 0.7"):
        ratings.rate(judged, row, "nuggets", "ann", 0.7, item=item, item_key=key)
    with pytest.raises(RagevalError, match="rated per nugget"):
        ratings.rate(judged, row, "nuggets", "ann", 1.0)          # the row is not what a nugget judge judged
    with pytest.raises(RagevalError, match="whole number from 0 to 3"):
        ratings.rate(judged, row, "passage_relevance", "ann", 0.5, item=1)
    r = ratings.rate(judged, row, "nuggets", "ann", 0.5, item=item, item_key=key, sample_id=sample.id)
    assert ratings.my_ratings(judged, sample.id, "ann") == {(row, item): 0.5}
    assert ratings.progress(judged, sample.id, "ann") == {"done": 1, "total": 4}
    # side by side after the rating: the judge's verdict on the same nugget, with the scale's labels
    line = card.side_by_side(run_row_detail(judged, row), "nuggets", r.score, item=item, key=key)
    judge_score = subs(judged, "nug")[row, key]
    label = {0.0: "not_support", 0.5: "partial_support", 1.0: "support"}[judge_score]
    assert line == f"you 0.5 partial_support · nug {judge_score:g} {label}"


def test_agreement_on_nuggets_is_the_weighted_kappa_of_the_three_point_scale(judged):
    judge_scores = subs(judged, "nug")
    rng = np.random.default_rng(7)
    human = {}
    for (row, key), score in sorted(judge_scores.items()):
        # a reviewer who agrees mostly, and sometimes says partial where the judge said support or not
        human[row, key] = score if rng.random() < 0.6 else 0.5
    number = {c.key: c.item for c in targets.candidates(judged.reader(), "nuggets", run_id=1)}
    for (row, key), score in human.items():
        ratings.rate(judged, row, "nuggets", "ann", score, item=number[key], item_key=key)
    result = agreement.agreement(judged, get_judge(judged, "nug"), RetirementPolicy(min_n=5))
    h = [POINTS.index(human[k]) for k in sorted(human)]
    j = [POINTS.index(judge_scores[k]) for k in sorted(human)]
    assert result.n == len(human) and result.statistic == "quadratic_kappa"
    assert result.value == pytest.approx(cohen_kappa_score(h, j, labels=[0, 1, 2], weights="quadratic"))
    assert result.confusion["labels"] == POINTS
    assert np.array(result.confusion["matrix"]).sum() == len(human)
    assert result.ci[0] is not None and result.ci[0] <= result.value <= result.ci[1]

    # a person rewrites query_2's list and the judge re-judges against it: ratings of nuggets that are gone
    # compare with nothing (never with whatever now has their number)
    rid = judged.reader().execute("SELECT id FROM run_rows WHERE external_id = 'query_2'").fetchone()[0]
    gone = sum(1 for (row, _) in human if row == rid)
    assert gone
    nugget_lists.edit(judged, "query_2", "vital: A brand new nugget\n", reason="rewritten")
    with FakeOpenAI(Script()) as server:
        with judged.write("point the judges at the new server") as w:
            w.execute("UPDATE judges SET base_url = ?", (server.url,))
        run_judge_job(judged, JobSpec(run="ore", judges=["nug"]))
    after = agreement.agreement(judged, get_judge(judged, "nug"), RetirementPolicy(min_n=5))
    assert after.n == len(human) - gone


def test_two_reviewers_consensus_rounds_down_to_a_point_of_the_scale(judged):
    (row, key), score = next(iter(sorted(subs(judged, "nug").items())))
    item = next(c.item for c in targets.candidates(judged.reader(), "nuggets", run_id=1) if c.key == key)
    ratings.rate(judged, row, "nuggets", "ann", 0.5, item=item, item_key=key)
    ratings.rate(judged, row, "nuggets", "bob", 1.0, item=item, item_key=key)
    merged, _ = agreement.pairs(judged, get_judge(judged, "nug"))
    got = merged.set_index("target").loc[key]
    assert (POINTS[int(got["human"])], int(got["reviewers"])) == (0.5, 2)    # median 0.75 -> partial
    assert POINTS[int(got["judge"])] == score


def test_a_ratings_file_names_a_nugget_by_its_text_or_its_number(judged, tmp_path):
    listed = targets.candidates(judged.reader(), "nuggets", run_id=1)
    first, second = listed[0], listed[1]
    path = tmp_path / "ratings.csv"
    path.write_text("row_id,metric,reviewer,score,item,passage_rank\n"
                    f"{first.row_id},nuggets,ann,1,\"{first.key}\",\n"
                    f"{second.row_id},nuggets,ann,0.5,,{second.item}\n", encoding="utf-8")
    assert import_ratings(judged, path).imported == 2
    stored = judged.reader().execute("SELECT run_row_id, passage_rank, item_key, score FROM human_ratings "
                                     "ORDER BY id").fetchall()
    assert stored == [(first.row_id, first.item, first.key, 1.0), (second.row_id, second.item, second.key, 0.5)]
    bad = tmp_path / "bad.csv"
    bad.write_text("row_id,metric,reviewer,score,item\n"
                   f"{first.row_id},nuggets,ann,1,A nugget nobody judged\n", encoding="utf-8")
    with pytest.raises(ImportFailed) as err:
        import_ratings(judged, bad)
    assert "bad.csv" in str(err.value) and "row 1" in str(err.value) and "item" in str(err.value)
    none = tmp_path / "none.csv"
    none.write_text(f"row_id,metric,reviewer,score\n{first.row_id},nuggets,ann,1\n", encoding="utf-8")
    with pytest.raises(ImportFailed, match="name it by its text"):
        import_ratings(judged, none)
    assert judged.reader().execute("SELECT COUNT(*) FROM human_ratings").fetchone()[0] == 2   # all or nothing


def test_the_judge_prompt_for_a_target_is_the_one_the_judge_receives(judged):
    sample = sampling.create_sample(judged, "ore", "nuggets", size=1, seed=0)
    text = card.judge_prompt(judged, "nuggets", sample.row_ids[0], sample.items[0], sample.keys[0])
    assert "nugget_assignment" in text and json.dumps([sample.keys[0]]) in text
    cites = sampling.create_sample(judged, "ore", "citation_support", size=1, seed=0)
    text = card.judge_prompt(judged, "citation_support", cites.row_ids[0], cites.items[0], cites.keys[0])
    assert cites.keys[0].split("] ", 1)[1] in text
    assert "local model" in card.judge_prompt(judged, "hallucination", sample.row_ids[0])
