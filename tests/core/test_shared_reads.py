"""Reads shared for one question asked of a project (issue 50): `rageval agreement` read the same ratings, designs and
pairs once per judge and per use (537 statements for 20 judges); within core.store.reads.shared each is read once,
and a write inside the block is seen by the next read."""

from __future__ import annotations

import rageval_desktop.api as rv
from rageval_desktop.core.judges.registry import add_judge
from rageval_desktop.core.review import ratings
from rageval_desktop.core.review.agreement import human_frame
from rageval_desktop.core.store import reads
from tests.core.test_judging import make_project


def traced(project):
    seen: list[str] = []
    project.reader().set_trace_callback(seen.append)
    return seen


def test_a_read_is_made_once_inside_the_block_and_every_time_outside(tmp_path):
    project = make_project(tmp_path / "r.rageval", n=6)
    ratings.rate(project, 1, "correctness", "ann", 4.0)
    seen = traced(project)
    human_frame(project, "correctness")
    human_frame(project, "correctness")
    outside = sum("FROM human_ratings" in s for s in seen)
    seen.clear()
    with reads.shared(project):
        first = human_frame(project, "correctness")
        again = human_frame(project, "correctness")
        with reads.shared(project):                                   # nested: the outer store
            human_frame(project, "correctness")
    inside = sum("FROM human_ratings" in s for s in seen)
    assert (outside, inside) == (2, 1) and again is first
    project.close()


def test_a_write_inside_the_block_is_seen_by_the_next_read(tmp_path):
    project = make_project(tmp_path / "w.rageval", n=6)
    with reads.shared(project):
        assert len(human_frame(project, "correctness")) == 0
        ratings.rate(project, 2, "correctness", "ann", 5.0)
        assert len(human_frame(project, "correctness")) == 1
    project.close()


def test_another_projects_reads_are_not_kept(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one, other = make_project(tmp_path / "a" / "a.rageval", n=4), make_project(tmp_path / "b" / "b.rageval", n=4)
    with reads.shared(one):
        assert len(human_frame(other, "correctness")) == 0
        ratings.rate(other, 1, "correctness", "ann", 3.0)        # (a write of `other` clears nothing of `one`)
        assert len(human_frame(other, "correctness")) == 1
    one.close()
    other.close()


def test_an_audit_of_many_judges_reads_the_ratings_once(tmp_path):
    """Five judges of one metric: the reviewers' ratings are read once, not once per judge and per use (15 before)."""
    project = make_project(tmp_path / "m.rageval", n=12)
    for k in range(5):
        add_judge(project, f"lex-{k}", "correctness", "lexical")
    from rageval_desktop.core.jobs.judge_job import run_judge_job
    from rageval_desktop.core.jobs.spec import JobSpec

    run_judge_job(project, JobSpec(run="v1"))
    for row in range(1, 13):
        ratings.rate(project, row, "correctness", "ann", float(1 + row % 5))
    path = project.path
    project.close()
    api = rv.open(path, read_only=True)
    seen = traced(api.core)
    found = api.agreement()
    assert len(found) == 5 and all(f["n"] == 12 for f in found)
    assert sum("SELECT h.id, h.run_row_id" in s for s in seen) == 1
    api.close()


def test_two_blocks_on_one_project_each_forget_on_a_write(tmp_path):
    """Blocks on two threads at once (the Audit page's read beside a report): a write clears both, and the one that
    ends first does not take the other's store off the list (two empty stores compare equal)."""
    import threading

    project = make_project(tmp_path / "t.rageval", n=6)
    inner_done, outer_may_go = threading.Event(), threading.Event()
    seen: list[int] = []

    def other() -> None:
        with reads.shared(project):
            inner_done.set()
            outer_may_go.wait(10)
        # (ends while the main thread's block is open)

    thread = threading.Thread(target=other)
    with reads.shared(project):
        thread.start()
        inner_done.wait(10)
        outer_may_go.set()
        thread.join(10)
        seen.append(len(human_frame(project, "correctness")))
        ratings.rate(project, 3, "correctness", "ann", 2.0)
        seen.append(len(human_frame(project, "correctness")))
    assert seen == [0, 1]
    project.close()


def test_an_audit_reads_every_judges_verdicts_at_once_and_each_judge_sees_its_own(tmp_path):
    """Within a block, the verdicts of every judge of a row metric on the rated rows are one read (an audit of 20
    judges made 20); each judge's frame equals the one read for it alone."""
    from rageval_desktop.core.jobs.judge_job import run_judge_job
    from rageval_desktop.core.jobs.spec import JobSpec
    from rageval_desktop.core.judges.registry import get_judge
    from rageval_desktop.core.review.agreement import judged_frame

    project = make_project(tmp_path / "j.rageval", n=12)
    for k, measure in enumerate(("f1", "recall", "rougeL")):
        add_judge(project, f"lex-{k}", "correctness", "lexical", params={"measure": measure})
    run_judge_job(project, JobSpec(run="v1"))
    for row in range(1, 13):
        ratings.rate(project, row, "correctness", "ann", float(1 + row % 5))
    judges = [get_judge(project, f"lex-{k}") for k in range(3)]
    alone = [judged_frame(project, j) for j in judges]
    seen = traced(project)
    with reads.shared(project):
        together = [judged_frame(project, j) for j in judges]
    assert sum("SELECT x.judge_id, x.run_row_id" in s for s in seen) == 1
    assert not any("+x.judge_id = " in s for s in seen)
    for a, b in zip(alone, together, strict=True):
        assert len(a) == 12 and a.equals(b) and list(a.dtypes) == list(b.dtypes)
    assert not alone[0]["judge_score"].equals(alone[1]["judge_score"])        # three judges, three readings
    project.close()
