"""What a reviewer reads while rating: the metric's scale with an anchor sentence per score (from the bundled
rubric file, written for people — not the LLM prompt) and the project's own guidelines per metric (markdown,
kept in the project's meta table, edited by the team)."""

from __future__ import annotations

from dataclasses import dataclass

from rageval_desktop.core.errors import RagevalError
from rageval_desktop.core.judges import rubrics
from rageval_desktop.core.judges.registry import METRICS
from rageval_desktop.core.store.project import Project

MAX_GUIDELINES = 100_000   # characters; guidelines are prose, not data


@dataclass(frozen=True)
class ScalePoint:
    score: float
    key: str          # the key that gives this score in the review card
    label: str        # what the button says: "3", or "No" / "Yes" on a binary scale
    anchor: str       # one sentence: what this score means


@dataclass(frozen=True)
class HumanRubric:
    metric: str
    criterion: str
    points: tuple[ScalePoint, ...]

    @property
    def binary(self) -> bool:
        return len(self.points) == 2


def human_rubric(metric: str) -> HumanRubric:
    """The scale of `metric` as a reviewer sees it, one point per integer score."""
    if metric not in METRICS:
        raise RagevalError(f"unknown metric '{metric}'; choose one of {', '.join(METRICS)}")
    spec = METRICS[metric]
    rubric = rubrics.library().get(spec.default_rubric or "")
    anchors = dict(rubric.anchors) if rubric else {}
    scores = range(int(spec.low), int(spec.high) + 1)
    binary = len(scores) == 2
    points = tuple(ScalePoint(float(s), str(s), ("No", "Yes")[i] if binary else str(s), anchors.get(float(s), ""))
                   for i, s in enumerate(scores))
    return HumanRubric(metric, rubric.criterion if rubric else "", points)


def _key(metric: str) -> str:
    if metric not in METRICS:
        raise RagevalError(f"unknown metric '{metric}'; choose one of {', '.join(METRICS)}")
    return f"guidelines.{metric}"


def guidelines(project: Project, metric: str) -> str:
    """The project's guidelines for `metric` (markdown; empty when none were written)."""
    return project.meta(_key(metric), "") or ""


def set_guidelines(project: Project, metric: str, text: str) -> str:
    key = _key(metric)
    if len(text) > MAX_GUIDELINES:
        raise RagevalError(f"guidelines are limited to {MAX_GUIDELINES:,} characters ({len(text):,} given)")
    text = text.replace("\r\n", "\n").strip("\n")
    with project.write("set review guidelines", changed=("settings",)) as conn:
        project.set_meta(conn, key, text)
        project.audit(conn, "set review guidelines", "settings", None, metric=metric, characters=len(text))
    return text
