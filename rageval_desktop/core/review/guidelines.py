"""What a reviewer reads while rating: the metric's scale with an anchor sentence per score (from the bundled
rubric file, written for people — not the LLM prompt) and the project's own guidelines per metric (markdown,
kept in the project's meta table, edited by the team)."""

from __future__ import annotations

from dataclasses import dataclass

from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.base.vocab import METRICS
from rageval_desktop.core.judges import rubrics
from rageval_desktop.core.store.changes import Area
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


# metrics judged by a local model, with no rubric file to take a human scale from
MODEL_SCALES = {"hallucination": ("Is everything the answer says supported by the retrieved passages?",
                                  ((0.0, "No: it states something the passages do not support (hallucinated)."),
                                   (1.0, "Yes: every claim is supported by the passages.")))}


# the review card's own keys (move, skip, comment, undo) are never a score's key
RESERVED_KEYS = frozenset("jksuc")
SUPPORT_KEYS = {0.0: "n", 0.5: "p", 1.0: "f"}   # not / partial / full support


def human_rubric(metric: str) -> HumanRubric:
    """The scale of `metric` as a reviewer sees it: one point per integer score, or — for a metric judged per item
    (a nugget's support, a citation's support: 0, 0.5, 1) — one point per anchor of its rubric, keyed
    n = not, p = partial, f = full support (s is the card's skip key)."""
    if metric not in METRICS:
        raise RagevalError(f"unknown metric '{metric}'; choose one of {', '.join(METRICS)}")
    spec = METRICS[metric]
    rubric = rubrics.library().get(spec.default_rubric or "")
    anchors = dict(rubric.anchors) if rubric else {}
    criterion = rubric.criterion if rubric else ""
    if metric in MODEL_SCALES:
        criterion, pairs = MODEL_SCALES[metric]
        anchors = dict(pairs)
    if anchors and any(score != int(score) for score in anchors):
        points: list[ScalePoint] = []
        for score, anchor in sorted(anchors.items()):
            label = anchor.split(":", 1)[0].strip() if ":" in anchor else f"{score:g}"
            key = SUPPORT_KEYS.get(float(score)) or label[:1].lower()
            if not key or key in RESERVED_KEYS or any(p.key == key for p in points):
                key = str(len(points) + 1)
            points.append(ScalePoint(float(score), key, label, anchor.split(":", 1)[-1].strip()))
        return HumanRubric(metric, criterion, tuple(points))
    scores = range(int(spec.low), int(spec.high) + 1)
    binary = len(scores) == 2
    scale = tuple(ScalePoint(float(s), str(s), ("No", "Yes")[i] if binary else str(s), anchors.get(float(s), ""))
                  for i, s in enumerate(scores))
    return HumanRubric(metric, criterion, scale)


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
    with project.write("set review guidelines", changed=(Area.SETTINGS,)) as conn:
        project.set_meta(conn, key, text)
        project.audit(conn, "set review guidelines", "settings", None, metric=metric, characters=len(text))
    return text
