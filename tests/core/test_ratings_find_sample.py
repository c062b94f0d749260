"""Ratings made outside the app find their sample (issue 46): a sample drawn with `rageval sample`, rated in a
spreadsheet and imported, was weighed as if unweighted (κ 0.48 for a population κ of 0.88). Imported ratings join
the sample whose targets they rate; ratings that fit none are said and left out of a weighted audit."""

from __future__ import annotations

import json

import pytest

from rageval_desktop.core.base.errors import ImportFailed
from rageval_desktop.core.importers import import_ratings
from rageval_desktop.core.judges.registry import get_judge
from rageval_desktop.core.review import agreement, sampling


def _ratings_file(path, rows, metric="correctness", score=lambda r: 4, **extra):
    path.write_text("".join(json.dumps({"row_id": r, "metric": metric, "reviewer": "ana", "score": score(r),
                                        **extra}) + "\n" for r in rows), encoding="utf-8")
    return path


def test_ratings_of_a_samples_targets_join_it_and_others_are_counted(demo, tmp_path):
    sample = sampling.create_sample(demo, "v2", "correctness_binary", 20, seed=3, mode="uncertain")
    report = import_ratings(demo, _ratings_file(tmp_path / "r.jsonl", sample.row_ids, "correctness_binary",
                                                lambda r: 1))
    assert report.samples == {sample.id: 20} and report.outside == 0
    stored = {r[0] for r in demo.reader().execute("SELECT DISTINCT sample_id FROM human_ratings WHERE metric = "
                                                  "'correctness_binary' AND reviewer = 'ana'")}
    assert stored == {sample.id}
    every = [r for (r,) in demo.reader().execute("SELECT rr.id FROM run_rows rr JOIN runs r ON r.id = rr.run_id "
                                                 "WHERE r.name = 'v2' ORDER BY rr.id")]
    others = [r for r in every if r not in set(sample.row_ids)][:5]
    more = import_ratings(demo, _ratings_file(tmp_path / "o.jsonl", others, "correctness_binary", lambda r: 1))
    assert more.samples == {} and more.outside == 5
    assert "5 belong to no sample (an audit counts them unless" in more.summary()


def test_a_named_sample_must_hold_every_rated_target(demo, tmp_path):
    sample = sampling.create_sample(demo, "v2", "correctness_binary", 10, seed=1, mode="uncertain")
    every = [r for (r,) in demo.reader().execute("SELECT rr.id FROM run_rows rr JOIN runs r ON r.id = rr.run_id "
                                                 "WHERE r.name = 'v2' ORDER BY rr.id")]
    stranger = next(r for r in every if r not in set(sample.row_ids))
    path = _ratings_file(tmp_path / "r.jsonl", [*sample.row_ids[:3], stranger], "correctness_binary", lambda r: 1)
    with pytest.raises(ImportFailed, match=f"is not a target of sample {sample.id}"):
        import_ratings(demo, path, sample_id=sample.id)
    with pytest.raises(ImportFailed, match="there is no review sample 999"):
        import_ratings(demo, path, sample_id=999)


def test_a_weighted_audit_leaves_out_ratings_from_no_sample_and_says_so(demo, tmp_path, capsys):
    judge = get_judge(demo, "answer-recall")
    sample = sampling.create_sample(demo, "v2", judge.metric, 30, seed=5, mode="uncertain")
    judged = dict(demo.reader().execute("SELECT run_row_id, score FROM judgments WHERE judge_id = ? AND status = "
                                        "'ok'", (judge.id,)))
    agree = lambda r: int(judged.get(r, 0) >= 0.5)  # noqa: E731  a reviewer who agrees with the judge
    import_ratings(demo, _ratings_file(tmp_path / "in.jsonl", sample.row_ids, judge.metric, agree,
                                       reviewer_note="x"))
    every = [r for (r,) in demo.reader().execute("SELECT rr.id FROM run_rows rr JOIN runs r ON r.id = rr.run_id "
                                                 "WHERE r.name = 'v2' ORDER BY rr.id")]
    outside = [r for r in every if r not in set(sample.row_ids)][:10]
    import_ratings(demo, _ratings_file(tmp_path / "out.jsonl", outside, judge.metric, lambda r: 1 - agree(r)))
    result = agreement.agreement(demo, get_judge(demo, judge.metric and "answer-recall"))
    assert result.outside_sample >= 10
    assert "left out: rated outside any sample" in agreement.describe(result)
