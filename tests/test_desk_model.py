"""The review desk's state and rules (gui/models/desk.py) driven with no window and no Qt: the queue, optimistic
ratings and what a failed write gives back, keys that wait, and the progress line's words (issue 78)."""

from __future__ import annotations

import subprocess
import sys

from rageval_desktop.core.review.quality import Check
from rageval_desktop.core.review.sampling import Sample
from rageval_desktop.gui.models.desk import Action, Desk


def sample(n: int = 5, looks: list[int] | None = None) -> Sample:
    return Sample(7, "v2", "correctness", 1, list(range(100, 100 + n)), [0] * n, [None] * n, looks=looks or [])


def test_the_module_imports_no_qt():
    code = "import sys, rageval_desktop.gui.models.desk; print(any(m.startswith('PySide6') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_opens_on_the_first_unanswered_and_skipped_ones_come_last():
    desk = Desk.open(sample(), {(100, 0): 4.0, (101, 0): None})
    assert desk.index == 2                                   # the first not answered at all
    desk.rate(3.0)
    desk.rate(2.0)
    assert desk.index == 4
    desk.rate(5.0)
    assert desk.index == 1 and desk.targets[desk.index] in desk.mine    # back to the skipped one
    desk.rate(1.0)
    assert desk.complete and desk.next_unrated(desk.index) is None and desk.index == 1


def test_a_rating_moves_on_at_once_and_is_pending_until_committed():
    desk = Desk.open(sample(), {})
    first = desk.rate(4.0, seconds=2.5)
    second = desk.rate(2.0)
    assert desk.index == 2 and set(desk.pending) == {(100, 0), (101, 0)} and desk.saving
    assert desk.rated_count() == 2 and desk.you((100, 0)) == "4 (saving…)"
    desk.committed(first, 4.0)
    assert desk.you((100, 0)) == "4" and set(desk.pending) == {(101, 0)}
    assert (first.index, first.seconds, first.sample_id) == (0, 2.5, 7)
    desk.committed(second, 2.0)
    assert not desk.pending and not desk.saving
    desk.busy = True                    # an undo in flight is saving too
    assert desk.saving


def test_a_failed_write_brings_its_card_back_with_its_comment_and_drops_what_waited():
    desk = Desk.open(sample(), {})
    desk.comment = "unclear question"
    given = desk.rate(4.0)
    assert desk.comment is None
    desk.wait(Action("undo", text="u"))
    dropped = desk.failed(given)
    assert desk.index == 0 and (100, 0) not in desk.mine and desk.comment == "unclear question"
    assert dropped == "'u'" and desk.waiting == []


def test_an_undo_waits_for_ratings_still_saving_and_every_key_waits_while_busy():
    desk = Desk.open(sample(), {})
    given = desk.rate(4.0)
    undo, score = Action("undo", text="u"), Action("score", 3.0, "3")
    assert desk.must_wait(undo) and not desk.must_wait(score)      # a score rates the card shown, at once
    said = desk.wait(undo)
    assert said == "Saving… 'u' will be applied once it is saved."
    assert desk.take() is None                                     # still saving
    desk.committed(given, 4.0)
    assert desk.take() == undo and desk.take() is None
    desk.busy = True
    assert desk.must_wait(score)
    desk.wait(score)
    desk.wait(Action("next", text="j"))
    assert desk.take() is None
    desk.busy = False
    assert [desk.take(), desk.take()] == [score, Action("next", text="j")]      # in the order pressed


def test_a_check_is_shown_blind_in_place_of_the_next_target_and_stepping_off_leaves_it_due():
    desk = Desk.open(sample(), {(100, 0): 4.0})
    desk.check = Check("retest", 100, "correctness", 0, None, 4.0)
    assert desk.target() == (100, 0, None) and desk.shown_rated() == (False, None)
    assert "you: not rated" in desk.progress()[0]
    desk.step(1)
    assert desk.check is None and desk.index == 1               # the position did not move off the check
    desk.undone(0, (100, 0))
    assert desk.index == 0 and desk.shown_rated() == (False, None)
    desk.redone((100, 0), 4.0)
    assert desk.shown_rated() == (True, 4.0)


def test_the_progress_line_in_a_reviewers_words():
    desk = Desk.open(sample(looks=[2, 5]), {(101, 0): None})
    desk.comment = "typo"
    line, tip = desk.progress()
    assert line == ("row 1 of 5 · correctness · you: not rated · 1 skipped · the judge is checked again when the "
                    "first 2 are rated (0 done) · comment: typo")
    assert "the first 2, 5 targets" in tip
    assert desk.progress(pack_mode=True) == ("row 1 of 5 · correctness · you: not rated · 1 skipped · comment: typo",
                                             "")
    for _ in range(4):
        desk.rate(3.0)
    desk.index = 1
    assert desk.progress()[0].endswith("every planned check of the judge reached")


def test_what_a_key_means():
    from rageval_desktop.gui.models.desk import action_for

    scores, actions = {"1": 1.0, "n": 0.0}, {"next": "j", "previous": "k", "next_unrated": "n", "undo": "u"}
    assert action_for("1", "", False, scores, actions) == Action("score", 1.0, "1")
    assert action_for("n", "", False, scores, actions) == Action("score", 0.0, "n")      # a scale's own key wins
    assert action_for("J", "", False, scores, actions) == Action("next", text="J")
    assert action_for("", "Down", False, scores, actions) == Action("next", text="Down")
    assert action_for("", "Z", True, scores, actions) == Action("undo", text="Ctrl+Z")
    assert action_for("1", "", True, scores, actions) is None and action_for("x", "", False, scores, actions) is None


def test_the_words_under_the_card():
    desk = Desk.open(sample(), {(101, 0): None})
    assert desk.card_words("") == "Judge verdicts are hidden until you rate this row."
    assert desk.card_words("", pack_mode=True) == "Rate this row on the scale; your rating is saved in the pack."
    given = desk.rate(4.0)
    assert desk.saved_words(given, 4.0, "you 4 · judge 3") == "Row 1 saved: you 4 · judge 3."
    desk.index = 0
    assert desk.card_words("you 4 · judge 3") == "you 4 · judge 3"
    assert desk.card_words("", pack_mode=True) == "You rated this row 4; saved in the pack."
    desk.index = 1
    assert desk.card_words("") == "You skipped this row; the judges stay hidden until you rate it."
    desk.index = 2
    for _ in range(3):
        last = desk.rate(2.0)
    assert desk.index == 1 and desk.saved_words(last, 2.0, "x", held=True) == (
        "Row 5 saved: x. Back to the skipped: 1 left to rate. Your ratings of correctness are set aside by a lead: "
        "they are saved and do not count until you are brought back (Team page).")
    done = desk.rate(1.0)
    assert desk.saved_words(done, 1.0, "", pack_mode=True) == "Sample complete. Row 2 saved in the pack: you 1."



class Source:
    """A source as the desk reads it (core/ops/sources.py's calls), counting its reads."""

    def __init__(self, samples: dict[int, Sample]) -> None:
        self.by_id, self.reads = samples, []

    def samples(self):
        self.reads.append("samples")
        return [{"id": s.id, "metric": s.metric} for s in self.by_id.values()]

    def sample(self, sample_id):
        self.reads.append(("sample", sample_id))
        return self.by_id[sample_id]

    def my_ratings(self, sample_id, reviewer):
        return {(self.by_id[sample_id].row_ids[0], 0): 3.0}

    def detail(self, row_id):
        self.reads.append(("detail", row_id))
        return f"row {row_id}"

    def scale(self, metric):
        from rageval_desktop.core.review.guidelines import human_rubric

        return human_rubric(metric)

    def guidelines(self, metric):
        return f"{metric} guidelines"


def test_the_desk_reads_a_sample_at_once_off_the_gui_thread():
    """Issue 78: read_desk gives all the desk draws in one read — the sample asked for (one gone: the newest), the
    reviewer's ratings, the scale and guidelines, and each row once (a row rated per passage is one read)."""
    from rageval_desktop.gui.models.desk import read_desk, sample_holding

    per_item = Sample(9, "v2", "passage_relevance", 1, [300, 300, 301], [1, 2, 1], [None] * 3)
    source = Source({7: sample(3), 9: per_item})
    read = read_desk(source, 7, "kim", "correctness")
    assert (read.sample.id, read.metric, read.guidelines, read.mine) == (7, "correctness", "correctness guidelines",
                                                                         {(100, 0): 3.0})
    assert read.details == {100: "row 100", 101: "row 101", 102: "row 102"}
    newest = read_desk(source, 42, "kim", "correctness")
    assert newest.sample.id == 9 and list(newest.details) == [300, 301]
    assert [r for r in source.reads if r == ("detail", 300)] == [("detail", 300)]
    empty = read_desk(Source({}), None, "kim", "faithfulness")
    assert (empty.sample, empty.metric, empty.details) == (None, "faithfulness", {})
    assert read_desk(None, None, "kim", "correctness").scale.points
    assert sample_holding(source, 301, None) == 9 and sample_holding(source, 101, "correctness") == 7
    assert sample_holding(source, 101, "passage_relevance") is None and sample_holding(source, 999, None) is None
