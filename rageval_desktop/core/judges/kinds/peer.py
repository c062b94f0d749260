"""The peer kind: the scores another tool already gave each row — a column of a ragas result (faithfulness,
answer_relevancy), a DeepEval test run's metric — kept with the run's rows when the run was imported (their
metadata). A peer judge reads that column, maps it from its scale onto the metric's, and stores it as its verdicts,
so that a peer's scores are sampled, rated, audited, licensed and gated like any judge's (issue 76: they were kept as
text, "0.6229", that no reviewer could audit). It makes no calls and needs nothing installed.

Settings (`--param`): `column`, the name the file gave the scores (a DeepEval test run's metric: `metricsData/NAME`,
its `score`); `scale`, the peer's range, `0-1` unless given. A peer score s on [lo, hi] is stored as
low + (s − lo) / (hi − lo) · (high − low) on the metric's scale (a ragas faithfulness of 0.75 is 4.0 on 1–5), the
value as the file gave it kept in the verdict's detail; a row without a number there, or one outside the range, is an
error row saying so, never a guess.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from rageval_desktop.core.base.errors import JudgeConfigError
from rageval_desktop.core.judges.kinds import LocalKind, Scored, Settings, Target

if TYPE_CHECKING:
    from rageval_desktop.core.base.vocab import MetricSpec
    from rageval_desktop.core.judges.judge import Judge
    from rageval_desktop.core.store.project import Project

DEFAULT_SCALE = "0-1"


def peer_scale(text: object) -> tuple[float, float]:
    """'LO-HI' (a peer's range; negative bounds are not peers' habit) as two numbers, LO < HI."""
    parts = str(text).split("-")
    try:
        low, high = (float(p) for p in parts) if len(parts) == 2 else (math.nan, math.nan)
    except ValueError:
        low = high = math.nan
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise JudgeConfigError(f"a peer judge's scale is its range as LO-HI, such as 0-1 (not '{text}')")
    return low, high


def peer_value(metadata: dict[str, object], column: str) -> object:
    """The peer's value for a row: the column, or — `metricsData/NAME` — the score of a DeepEval test run's metric."""
    head, _, name = column.partition("/")
    listed = metadata.get(head)
    if name and isinstance(listed, list):
        found = [m for m in listed if isinstance(m, dict) and m.get("name") == name]
        return found[0].get("score") if found else None
    return metadata.get(column)


class PeerKind(LocalKind):
    name = "peer"
    label = "another tool's scores, as the run's file gave them (a ragas or DeepEval column); no model, no calls"
    reads_passages = False
    reads_fields = False      # its verdicts are the file's: no answer, reference or passage is needed to give them
    fields = {"column": "the column of the run's file holding the scores (faithfulness, metricsData/Correctness)",
              "scale": "the scores' range as LO-HI (0-1 unless given)"}
    required_fields = ("column",)
    needs = ""

    def can_judge(self, spec: MetricSpec) -> str | None:
        return None if spec.level == "row" and spec.items is None else (
            f"a peer's scores are one per row; {spec.name} is judged per {spec.items or spec.level}")

    def check(self, project: Project, settings: Settings) -> Settings:
        settings = super().check(project, settings)
        column = str(settings.params.get("column") or "").strip()
        if not column:
            raise JudgeConfigError("a peer judge reads one column of the run's file: name it",
                                   cli_hint="--param column=NAME (a ragas result: faithfulness, answer_relevancy)",
                                   gui_hint="set the column the file's scores are in")
        low, high = peer_scale(settings.params.get("scale", DEFAULT_SCALE))
        settings.params.update(column=column, scale=f"{low:g}-{high:g}")
        return settings

    def model_id(self, judge: Judge) -> str:
        return f"peer:{judge.params.get('column')}:{judge.params.get('scale', DEFAULT_SCALE)}"

    def score(self, project: Project, judge: Judge, targets: Sequence[Target]) -> Iterator[Scored]:
        column = str(judge.params.get("column"))
        low, high = peer_scale(judge.params.get("scale", DEFAULT_SCALE))
        spec = judge.spec
        rows = [int(t.run_row_id) for t in targets]
        stored: dict[int, dict[str, object]] = {}
        for start in range(0, len(rows), 500):
            chunk = rows[start:start + 500]
            for rid, text in project.reader().execute(
                    f"SELECT id, metadata FROM run_rows WHERE id IN ({','.join('?' * len(chunk))})", chunk):
                found = json.loads(text) if text else {}
                stored[int(rid)] = found if isinstance(found, dict) else {}
        for rid in rows:
            raw = peer_value(stored.get(rid, {}), column)
            value = number(raw)
            if value is None:
                held = "the cell is empty" if raw is None else f"it holds {str(raw)[:40]!r}"
                yield Scored(score=math.nan, declined=f"the run's file gave this row no number in '{column}' ({held})")
            elif not low <= value <= high:
                yield Scored(score=math.nan, declined=f"'{column}' holds {value:g}, outside the peer's scale "
                                                      f"{low:g}-{high:g} (set --param scale=LO-HI)")
            else:
                mapped = spec.low + (value - low) / (high - low) * (spec.high - spec.low)
                yield Scored(score=mapped, detail={"peer": {"column": column, "value": value,
                                                            "scale": [low, high]}})


def number(raw: object) -> float | None:
    """A peer's number as the file held it: a number, or a text of one ("0.6229" in a CSV)."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, (int, float)):
        return float(raw) if math.isfinite(raw) else None
    if isinstance(raw, str):
        try:
            value = float(raw.strip())
        except ValueError:
            return None
        return value if math.isfinite(value) else None
    return None


KIND = PeerKind()
