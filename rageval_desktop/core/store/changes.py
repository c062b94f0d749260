"""What a write changed, typed: the areas of the project it touched (pages subscribe to the areas they show) and,
for an undoable operation, its record. Listeners get a `Changes` after each committed write."""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple


class Area(StrEnum):
    """A part of the project a write can change (what a page shows is a set of these)."""
    GOLDEN = "golden"          # golden rows, their history and versions
    RUNS = "runs"              # runs and their rows
    CORPUS = "corpus"
    JUDGES = "judges"          # judges and their rubrics
    JUDGMENTS = "judgments"
    JOBS = "jobs"              # jobs, batches, leases
    RATINGS = "ratings"        # human ratings
    REVIEW = "review"          # samples, guidelines, packs
    AUDIT = "audit"            # agreement reports, judge status decisions
    SETTINGS = "settings"      # project settings and meta
    PRICES = "prices"
    NUGGETS = "nuggets"        # nugget lists
    OPERATIONS = "operations"  # the undoable operations' log
    CACHES = "caches"          # the request and embedding caches, stored vectors: what no page shows


class Changes(NamedTuple):
    """One committed write: its name, the areas it touched, the undoable operation it recorded (if any), and who
    asked for it, when they said (`Project.initiated_by`). (A NamedTuple: the window imports it before its first
    paint, and importing dataclasses there took 2 ms.)"""
    op: str
    areas: frozenset[Area]
    operation: int | None = None     # the operations row committed with it
    initiator: str | None = None     # e.g. the page that asked, which refreshes itself when its write lands

    def touches(self, *areas: Area) -> bool:
        return not self.areas.isdisjoint(areas)


def areas_of(changed: tuple[Area | str, ...]) -> frozenset[Area]:
    """The areas named, checked: a name that is not an Area is a bug, caught at the write, not in a page."""
    return frozenset(Area(a) for a in changed)
