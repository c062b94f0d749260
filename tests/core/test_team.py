"""The Team page's numbers: two scripted reviewers rate overlapping packs; their pairwise weighted kappa equals
scikit-learn's, the inter-annotator alpha equals the `krippendorff` package's on the same ratings, each reviewer's
agreement with the judge equals a direct computation, and a disagreement settled by a lead leaves the queue and
becomes the consensus the judges are audited against."""

from __future__ import annotations

import shutil

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.judges.registry import get_judge
from rageval_desktop.core.review import agreement, packs, team
from rageval_desktop.core.store.project import Project
from tests.conftest import pack_ids, team_packs


@pytest.fixture
def rated(demo_file, tmp_path):
    copy = tmp_path / "demo.rageval"
    shutil.copy(demo_file, copy)
    with Project.open(copy) as p:
        sample, made = team_packs(p, tmp_path / "packs", 30)
        rng = np.random.default_rng(3)
        truth = {row: int(rng.integers(1, 6)) for row in sample.row_ids}
        scores = {"ann": {}, "bob": {}}
        for info in made:
            pack, ids = packs.Pack(info.path), pack_ids(p, info)
            for row in sample.row_ids:
                noise = int(rng.choice([-2, -1, 0, 0, 0, 1])) if info.reviewer == "bob" else 0
                s = min(5, max(1, truth[row] + noise))
                scores[info.reviewer][row] = s
                pack.rate(ids[row], 0, float(s), seconds=2.0 if info.reviewer == "ann" else 5.0)
            packs.import_pack(p, info.path)
        yield p, sample, scores


def test_pairwise_kappa_alpha_and_agreement_with_the_judge_equal_the_libraries(rated):
    project, sample, scores = rated
    report = team.team_report(project, "correctness", sample.id)
    rows = sample.row_ids
    a = [scores["ann"][r] for r in rows]
    b = [scores["bob"][r] for r in rows]
    assert report.statistic == "quadratic_kappa" and report.shared_targets == len(rows)
    (pair,) = report.pairwise
    assert (pair["a"], pair["b"], pair["n"]) == ("ann", "bob", len(rows))
    assert pair["value"] == pytest.approx(cohen_kappa_score(a, b, labels=[1, 2, 3, 4, 5], weights="quadratic"))
    assert report.alpha == pytest.approx(krippendorff.alpha(reliability_data=np.array([a, b], dtype=float),
                                                            value_domain=[1, 2, 3, 4, 5],
                                                            level_of_measurement="ordinal"))
    ann = next(r for r in report.reviewers if r.reviewer == "ann")
    assert (ann.rated, ann.median_seconds) == (len(rows), 2.0)
    # with the others' consensus: here the only other reviewer is bob
    assert ann.with_consensus.value == pytest.approx(pair["value"])
    assert ann.with_consensus.ci[0] <= ann.with_consensus.value <= ann.with_consensus.ci[1]
    judge = get_judge(project, "minilm-similarity")
    judged = dict(project.reader().execute(
        "SELECT run_row_id, score FROM judgments WHERE judge_id = ? AND status = 'ok' AND passage_rank = 0",
        (judge.id,)))
    paired = [r for r in rows if r in judged]
    expected = cohen_kappa_score([scores["ann"][r] for r in paired],
                                 [int(min(5, max(1, np.floor(judged[r] + 0.5)))) for r in paired],
                                 labels=[1, 2, 3, 4, 5], weights="quadratic")
    assert ann.with_judges["minilm-similarity"].n == len(paired)
    assert ann.with_judges["minilm-similarity"].value == pytest.approx(expected)


def test_the_queue_lists_wide_disagreements_until_a_lead_settles_them(rated):
    project, sample, scores = rated
    wide = sorted(r for r in sample.row_ids if abs(scores["ann"][r] - scores["bob"][r]) > 1)
    assert wide
    report = team.team_report(project, "correctness", sample.id)
    assert sorted(q["row_id"] for q in report.queue) == wide
    first = next(q for q in report.queue if q["row_id"] == wide[0])
    assert first["ratings"] == {"ann": scores["ann"][wide[0]], "bob": scores["bob"][wide[0]]} and first["question"]
    with pytest.raises(RagevalError, match="needs a reason"):
        team.adjudicate(project, wide[0], "correctness", 3, " ", "lee")
    aid = team.adjudicate(project, wide[0], "correctness", 5, "the reference misses a detail", "lee")
    after = team.team_report(project, "correctness", sample.id)
    assert wide[0] not in [q["row_id"] for q in after.queue] and after.settled == 1
    merged, _ = agreement.pairs(project, get_judge(project, "minilm-similarity"))
    settled = merged[merged["run_row_id"] == wide[0]]
    assert len(settled) == 1                             # the judge is audited against the lead's 5
    assert agreement.scale("correctness")[int(settled["human"].iloc[0])] == 5.0
    team.withdraw_adjudication(project, aid)
    assert wide[0] in [q["row_id"] for q in team.team_report(project, "correctness", sample.id).queue]
    assert project.reader().execute("SELECT COUNT(*) FROM audit_log WHERE action IN ('adjudicate', "
                                    "'undo adjudication')").fetchone()[0] == 2
