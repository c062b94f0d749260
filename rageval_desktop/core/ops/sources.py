"""Where the review screen reads its samples and writes its ratings: the project, or a review pack a reviewer
received (core.review.packs). One interface, so the card, its keys and its undo are the same code in both."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rageval_desktop.core import ops
from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.review import quality
from rageval_desktop.core.review.card import judge_prompt
from rageval_desktop.core.review.guidelines import HumanRubric, guidelines, human_rubric, set_guidelines
from rageval_desktop.core.review.licence import Standing, standing
from rageval_desktop.core.review.pair_packs import PairPack
from rageval_desktop.core.review.pairwise import (
    PairItem,
    PairReport,
    PairSample,
    pair_items,
    pair_report,
    pair_samples,
    withdraw_pair_rating,
)
from rageval_desktop.core.review.ratings import Rating, my_ratings, withdraw
from rageval_desktop.core.review.sampling import Sample, get_sample, list_samples
from rageval_desktop.core.store import oplog
from rageval_desktop.core.store.project import Project
from rageval_desktop.core.store.queries import RowDetail, run_row_detail

if TYPE_CHECKING:
    from rageval_desktop.core.review.packs import Pack


class ProjectSource:
    """The project: every sample, new samples, the judges revealed after a rating, the judge's prompt."""

    can_sample = True

    def __init__(self, project: Project) -> None:
        self.project = project

    def samples(self) -> list[dict[str, Any]]:
        return list_samples(self.project)

    def sample(self, sample_id: int) -> Sample:
        return get_sample(self.project, sample_id)

    def my_ratings(self, sample_id: int, reviewer: str) -> dict[tuple[int, int], float | None]:
        return my_ratings(self.project, sample_id, reviewer)

    def detail(self, row_id: int) -> RowDetail:
        return run_row_detail(self.project, row_id)

    def scale(self, metric: str) -> HumanRubric:
        return human_rubric(metric)

    def guidelines(self, metric: str) -> str:
        return guidelines(self.project, metric)

    def set_guidelines(self, metric: str, text: str) -> str:
        return set_guidelines(self.project, metric, text)

    def rate(self, row_id: int, metric: str, reviewer: str, score: float | None, *, sample_id: int,
             comment: str | None, seconds: float | None, skipped: bool, item: int, item_key: str | None) -> Rating:
        """A logged operation (initiator: the app): Ctrl+Z in the app and `rageval undo` both undo it."""
        result = ops.run(self.project, ops.Rate(row_id, metric, reviewer, score, sample_id, comment, seconds, skipped,
                                                item, item_key), initiator="gui")
        assert result.operation is not None
        made = oplog.get(self.project, result.operation)
        assert made is not None
        rating_id = int(made.inverse["rating"])
        return Rating(rating_id, row_id, metric, reviewer, None if skipped else score, skipped, item, item_key)

    def withdraw(self, rating_id: int) -> None:
        """Undo a rating: the operation that made it is undone (logged), or, made before operations were logged,
        the rating is withdrawn."""
        operation = oplog.made_by(self.project, ops.Rate.NAME, "rating", rating_id)
        if operation is not None:
            ops.undo(self.project, operation, initiator="gui")
        else:
            withdraw(self.project, rating_id)

    def judge_prompt(self, metric: str, row_id: int, item: int, key: str | None) -> str:
        return judge_prompt(self.project, metric, row_id, item, key)

    def due_check(self, sample_id: int, reviewer: str) -> quality.Check | None:
        """The hidden gold item or retest due now in this reviewer's queue (core.review.quality)."""
        return quality.due(self.project, sample_id, reviewer)

    def licences(self) -> Standing:
        """Every active judge's licence now, and the ratings audits leave out: the desk compares it after each rating
        with the last (issue 75)."""
        return standing(self.project)

    def record_check(self, sample_id: int, reviewer: str, check: quality.Check, score: float | None,
                     seconds: float | None) -> int:
        """A logged operation: undone as a rating is. Its id."""
        result = ops.run(self.project, ops.CheckReviewer(reviewer, check.kind, check.row_id, check.metric,
                                                         check.expected, sample_id, check.item, check.item_key, score,
                                                         seconds), initiator="gui")
        assert result.operation is not None
        return result.operation

    def withdraw_check(self, operation: int) -> None:
        ops.undo(self.project, operation, initiator="gui")

    def pairs(self) -> ProjectPairs:
        return ProjectPairs(self.project)


class PackSource:
    """A review pack: its one sample, blind for good (the pack holds no judge), ratings saved in the pack."""

    can_sample = False

    def __init__(self, pack: Pack) -> None:
        self.pack = pack

    def samples(self) -> list[dict[str, Any]]:
        s = self.pack.sample()
        rated = sum(1 for v in self.pack.my_ratings().values() if v is not None)
        return [{"id": s.id, "run": s.run, "metric": s.metric, "unit": s.unit, "seed": 0, "rows": len(s.row_ids),
                 "rated": rated, "created_at": self.pack.meta.get("created_at", "")}]

    def sample(self, sample_id: int) -> Sample:
        return self.pack.sample()

    def my_ratings(self, sample_id: int, reviewer: str) -> dict[tuple[int, int], float | None]:
        return self.pack.my_ratings()

    def detail(self, row_id: int) -> RowDetail:
        return self.pack.detail(row_id)

    def scale(self, metric: str) -> HumanRubric:
        return self.pack.scale

    def guidelines(self, metric: str) -> str:
        return self.pack.guidelines()

    def set_guidelines(self, metric: str, text: str) -> str:
        raise RagevalError("guidelines are the project's: a pack carries them read-only")

    def rate(self, row_id: int, metric: str, reviewer: str, score: float | None, *, sample_id: int,
             comment: str | None, seconds: float | None, skipped: bool, item: int, item_key: str | None) -> Rating:
        return self.pack.rate(row_id, item, score, skipped=skipped, comment=comment, seconds=seconds)

    def withdraw(self, rating_id: int) -> None:
        self.pack.withdraw(rating_id)

    def judge_prompt(self, metric: str, row_id: int, item: int, key: str | None) -> str:
        return "A review pack carries no judge: rate from the rows and the guidelines."

    def due_check(self, sample_id: int, reviewer: str) -> None:
        """A pack holds its sample's targets only: no checks."""
        return None

    def licences(self) -> Standing:
        """A pack holds no judge: its ratings change no licence until the project imports them (it says so then)."""
        return Standing({}, {})

    def pairs(self) -> None:
        """A score pack holds no pairs."""
        return None


class ProjectPairs:
    """The project's pair samples for the Pairwise page: ratings are logged operations (Ctrl+Z, `rageval undo`)."""

    can_sample = True

    def __init__(self, project: Project) -> None:
        self.project = project

    def samples(self) -> list[PairSample]:
        return pair_samples(self.project)

    def items(self, sample_id: int, reviewer: str) -> list[PairItem]:
        return pair_items(self.project, sample_id, reviewer)

    def rate(self, sample_id: int, position: int, reviewer: str, preference: str | None,
             seconds: float | None) -> int:
        result = ops.run(self.project, ops.RatePair(sample_id, position, reviewer, preference, seconds),
                         initiator="gui")
        assert result.operation is not None
        made = oplog.get(self.project, result.operation)
        assert made is not None
        return int(made.inverse["rating"])

    def withdraw(self, rating_id: int) -> None:
        operation = oplog.made_by(self.project, ops.RatePair.NAME, "rating", rating_id)
        if operation is not None:
            ops.undo(self.project, operation, initiator="gui")
        else:
            withdraw_pair_rating(self.project, rating_id)

    def report(self, sample_id: int) -> PairReport | None:
        return pair_report(self.project, sample_id)


class PackPairs:
    """A pairwise pack: its one pair sample, rated into the pack (core.review.pair_packs); no results to show."""

    can_sample = False

    def __init__(self, pack: PairPack) -> None:
        self.pack = pack

    def samples(self) -> list[PairSample]:
        return [self.pack.sample()]

    def items(self, sample_id: int, reviewer: str) -> list[PairItem]:
        return self.pack.items()

    def rate(self, sample_id: int, position: int, reviewer: str, preference: str | None,
             seconds: float | None) -> int:
        return self.pack.rate(position, preference, seconds)

    def withdraw(self, rating_id: int) -> None:
        self.pack.withdraw(rating_id)

    def report(self, sample_id: int) -> PairReport | None:
        return None


class PairPackSource:
    """What a pairwise pack's window offers its page: the pairs, nothing else of a project."""

    can_sample = False

    def __init__(self, pack: PairPack) -> None:
        self.pack = pack

    def pairs(self) -> PackPairs:
        return PackPairs(self.pack)


ReviewSource = ProjectSource | PackSource | PairPackSource     # what a window's review pages read and rate through
