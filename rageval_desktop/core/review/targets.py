"""What a reviewer rates for a metric: the row (correctness, faithfulness…), one retrieved passage (UMBRELA's
0–3 grade), one nugget (is it in the answer: support / partial / not) or one citation (does the cited passage
support the sentence: full / partial / none).

A target is (row, item): item 0 is the row; item >= 1 a passage's rank, or the number of a nugget or a citation
pair among those the metric's judges judged on that row (in judge order, then their own order; a nugget two
judges share is listed once). A nugget or a citation also has a `key`, its text ("Rome was founded in 753 BC",
"[2] The sentence."): numbers shift when a list is edited and re-judged, texts do not, so a rating is compared
with the judgment of the same text (`core.review.agreement`) and never with whatever now sits at its number.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.base.scoring import citations
from rageval_desktop.core.base.vocab import METRICS
from rageval_desktop.core.judges import rubrics

DEFAULT_PASSAGES = 5   # a run no judge has graded yet: the top passages (an LLM judge's default k)
BY_TEXT = ("nugget", "citation")   # units identified by their text (`key`), not by their number


def unit(metric: str) -> str:
    """'row', 'passage', 'nugget' or 'citation': what one rating of `metric` is about."""
    spec = METRICS.get(metric)
    if spec is None:
        raise RagevalError(f"unknown metric '{metric}'; choose one of {', '.join(METRICS)}")
    return spec.items or ("passage" if spec.level == "passage" else "row")


def text_key(text: str) -> str:
    return " ".join(str(text).split())


def target_id(kind: str, item: int, key: str | None) -> str:
    """What identifies a rated target within its row, across re-judging: the text for nuggets and citations,
    else the passage rank ("0" for the row). Agreement and adjudications match ratings and judgments on it."""
    return str(key) if kind in BY_TEXT else str(item)


def sub_key(metric_unit: str, rationale: str | None, detail: str | dict | None) -> str | None:
    """The key of a judge's sub-judgment (a nugget's or a citation pair's own judgment)."""
    if isinstance(detail, str):
        try:
            detail = json.loads(detail)
        except ValueError:
            detail = None
    if metric_unit == "nugget":
        text = detail.get("text") if isinstance(detail, dict) else None
        return text_key(text) if text else None
    if metric_unit == "citation":
        return text_key(rationale) if rationale else None
    return None


@dataclass(slots=True)      # (a run's every target is one: 200,000 of them held 20 MB of dicts without slots)
class Candidate:
    row_id: int
    item: int
    key: str | None
    scores: list[float] = field(default_factory=list)   # the active judges' ok scores on it


def candidates(conn: sqlite3.Connection, metric: str, *, run_id: int | None = None,
               row_ids: Iterable[int] | None = None) -> list[Candidate]:
    """Every target of `metric` in a run (or in some rows), with the active judges' scores on each.

    Rows: every row. Passages: those a judge of the metric graded (else the top DEFAULT_PASSAGES of each row).
    Nuggets and citations: those the metric's judges judged, numbered per row as the module says."""
    kind = unit(metric)
    where, params = _scope(run_id, row_ids)
    if kind == "row":
        out = {r: Candidate(r, 0, None) for (r,) in conn.execute(
            f"SELECT rr.id FROM run_rows rr WHERE {where} ORDER BY rr.id", params)}
        for r, score in conn.execute(
                f"SELECT x.run_row_id, x.score FROM judgments x JOIN judges j ON j.id = x.judge_id JOIN run_rows rr "
                f"ON rr.id = x.run_row_id WHERE {where} AND j.metric = ? AND j.status = 'active' AND x.status = 'ok' "
                f"AND x.passage_rank = 0", (*params, metric)):
            if r in out:
                out[r].scores.append(score)
        return list(out.values())
    judged = conn.execute(
        f"SELECT x.run_row_id, x.passage_rank, x.rationale, x.detail, x.score, x.status, j.status "
        f"FROM judgments x JOIN judges j ON j.id = x.judge_id JOIN run_rows rr ON rr.id = x.run_row_id "
        f"WHERE {where} AND j.metric = ? AND x.passage_rank >= 1 ORDER BY x.run_row_id, j.id, x.passage_rank",
        (*params, metric)).fetchall()
    found: dict[tuple[int, Any], Candidate] = {}
    numbers: dict[int, int] = {}
    for row, rank, rationale, detail, score, status, judge_status in judged:
        key = None if kind == "passage" else sub_key(kind, rationale, detail)
        if kind != "passage" and key is None:
            continue
        ident = (row, rank if kind == "passage" else key)
        if ident not in found:
            numbers[row] = numbers.get(row, 0) + 1
            found[ident] = Candidate(row, rank if kind == "passage" else numbers[row], key)
        if status == "ok" and judge_status == "active" and score is not None:
            found[ident].scores.append(score)
    if kind == "passage" and not found:
        for row, rank in conn.execute(
                f"SELECT p.run_row_id, p.rank FROM retrieved_passages p JOIN run_rows rr ON rr.id = p.run_row_id "
                f"WHERE {where} AND p.rank <= ? ORDER BY p.run_row_id, p.rank", (*params, DEFAULT_PASSAGES)):
            found[(row, rank)] = Candidate(row, rank, None)
    return sorted(found.values(), key=lambda c: (c.row_id, c.item))


def _scope(run_id: int | None, row_ids: Iterable[int] | None) -> tuple[str, tuple]:
    if row_ids is not None:
        rows = [int(r) for r in row_ids]
        return f"rr.id IN ({','.join('?' * len(rows)) or 'NULL'})", tuple(rows)
    if run_id is None:
        raise ValueError("candidates need a run or rows")
    return "rr.run_id = ?", (run_id,)


@dataclass(frozen=True)
class TargetCard:
    """What the review card puts above the row: the thing being rated, without any judge's verdict."""
    unit: str
    title: str          # "Passage #2", "Nugget 3", "Citation 1: sentence against passage [2]"
    question: str       # the question the reviewer answers
    text: str           # the passage, the nugget, the sentence
    context: str = ""   # the cited passage, for a citation
    context_title: str = ""


QUESTIONS = {"passage": "How well does this passage answer the question?",
             "nugget": "Does the answer contain this nugget of information?",
             "citation": "Does the cited passage support this sentence of the answer?"}


def reads_passages(metric: str) -> bool:
    """Whether the metric's bundled rubric reads the retrieved passages (faithfulness) or only the question, the
    answer and the reference (correctness): a review card folds the passages a rubric does not read."""
    spec = METRICS.get(metric)
    if spec is None or spec.level != "row" or spec.items or spec.default_rubric is None:
        return True
    rubric = rubrics.library().get(spec.default_rubric)
    return rubric is None or "${contexts}" in rubric.template or "${passage}" in rubric.template


def card(detail: Any, metric: str, item: int, key: str | None) -> TargetCard | None:
    """The card for a target, from the row's detail (`core.store.queries.RowDetail`); None for a row target."""
    kind = unit(metric)
    if kind == "row" or item == 0:
        return None
    if kind == "passage":
        text = next((p.text for p in detail.passages if p.rank == item), None)
        return TargetCard(kind, f"Passage #{item}", QUESTIONS[kind],
                          text if text is not None else f"(this row has no passage at rank {item})")
    if kind == "nugget":
        return TargetCard(kind, f"Nugget {item}", QUESTIONS[kind], key or "")
    number, sentence = _split_pair(key or "")
    passages = citations.by_number([(p.rank, p.chunk_id, p.text or "") for p in detail.passages])
    cited = passages.get(number) if number is not None else None
    return TargetCard(kind, f"Citation {item}: a sentence and the passage it cites", QUESTIONS[kind], sentence,
                      cited if cited is not None else f"[{number}] is not among the retrieved passages: it supports "
                                                      "nothing.", f"PASSAGE [{number}]")


def _split_pair(key: str) -> tuple[int | None, str]:
    head, _, rest = key.partition("] ")
    try:
        return int(head.lstrip("[")), rest
    except ValueError:
        return None, key
