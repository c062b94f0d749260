"""Citation support, as pure functions: an answer's statements, the passages each cites, and the scores.

A statement is a sentence of the answer, or a stretch of text closed by a citation group (`Black holes are dense
[1] They are big [2][3]` has two statements). `[1, 2]`, `[1][2]`, `[1;2]` and `[1-3]` all cite several passages.
Each (statement, cited passage) pair is judged: full support 1, partial 0.5, none 0.
- precision = mean over pairs (a citation of a passage that was not retrieved counts 0: it supports nothing);
- recall = mean over statements of the mean of their pairs, an uncited statement counting 0;
- F1 = their harmonic mean.
A row whose answer cites nothing has no precision (None: there is nothing to be precise about), recall 0, F1 0.
Lines that only list sources ("Sources: [1], [2]") are not statements. All values on 0-100.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

SUPPORT_SCORES = {"full_support": 1.0, "partial_support": 0.5, "no_support": 0.0}
SOURCE_METRIC = "citation_support"
NAMES = ("citation_precision", "citation_recall", "citation_f1")
DEFINITIONS = {
    "citation_precision": "judge-based: mean support of each cited passage for its sentence (full 1, partial 0.5)",
    "citation_recall": "judge-based: mean support per answer sentence, an uncited sentence counting 0",
    "citation_f1": "judge-based: harmonic mean of citation precision and recall",
}
MAX_CITES = 20   # passages one marker group may name ([1-999] is not 999 calls)

_GROUP = re.compile(r"(?:\[\s*\d+(?:\s*(?:[,;]|-|–)\s*\d+)*\s*\]\s*)+")
_NUM = re.compile(r"\d+(?:\s*(?:-|–)\s*\d+)?")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_SOURCES_LINE = re.compile(r"^\W*(sources?|references?|citations?)\W*$", re.IGNORECASE)
_NUMBERED_ID = re.compile(r"^\s*(\d+)\s*$|\[\s*(\d+)\s*\]\s*$")   # "3", "[3]", "query_1:[3]"


@dataclass(frozen=True)
class Statement:
    text: str                 # without its markers
    cites: tuple[int, ...]    # passage numbers, in order, without repeats


# open-rag-eval's reading of an answer (rag_results_loader): "[1, 2]" is "[1][2]", "[1], [2]" is "[1][2]", and
# the answer is the text between blocks of "[n]" markers
_ORE_MULTI = re.compile(r"\[\d+(?:,\s*\d+)+\]")
_ORE_BETWEEN = re.compile(r"\]\s*,\s*\[")
_ORE_BLOCK = re.compile(r"(?:\[\d+\])+")


def answer_parts(answer: str) -> list[str]:
    """The answer's parts as open-rag-eval reads them: the text before each block of `[n]` markers (stripped; an
    empty one dropped) and, after the last block, what is left when it is longer than one character (a lone "." is
    dropped). An answer without a marker is one part, as it is. Ranges ("[1-3]") and ";" are not markers to it."""
    text = _ORE_MULTI.sub(lambda m: "".join(f"[{n}]" for n in re.findall(r"\d+", m.group())), answer)
    text = _ORE_BETWEEN.sub("][", text)
    blocks = list(_ORE_BLOCK.finditer(text))
    if not blocks:
        return [text]
    parts, start = [], 0
    for block in blocks:
        piece = text[start:block.start()].strip()
        if piece:
            parts.append(piece)
        start = block.end()
    tail = text[start:].strip()
    if len(tail) > 1:
        parts.append(tail)
    return parts


def marker_free(answer: str) -> str:
    """The answer as open-rag-eval's HHEM, nugget assignment and no-answer check read it: its parts joined by one
    space (`Dense [1]. Big [2]` -> `Dense . Big`)."""
    return " ".join(answer_parts(answer))


def _numbers(group: str) -> list[int]:
    out: list[int] = []
    for token in _NUM.findall(group):
        if re.search(r"[-–]", token):
            low, high = (int(x) for x in re.split(r"\s*[-–]\s*", token))
            out.extend(range(low, min(high, low + MAX_CITES - 1) + 1))
        else:
            out.append(int(token))
    return list(dict.fromkeys(out))[:MAX_CITES]


def statements(answer: str) -> list[Statement]:
    """The answer's statements with the passages each cites."""
    out: list[Statement] = []
    pieces: list[tuple[str, list[int]]] = []
    pos = 0
    for m in _GROUP.finditer(answer):
        pieces.append((answer[pos:m.start()], _numbers(m.group(0))))
        pos = m.end()
    pieces.append((answer[pos:], []))
    for text, cites in pieces:
        parts = _SENTENCE_END.split(text)
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            body = part.strip()
            if not re.search(r"\w", body):
                if last and cites and out:   # "… dense. [1]": markers after the full stop belong to that sentence
                    prev = out[-1]
                    out[-1] = Statement(prev.text, tuple(dict.fromkeys([*prev.cites, *cites])))
                continue
            out.append(Statement(body, tuple(cites) if last else ()))
    return [s for s in out if not _SOURCES_LINE.match(s.text)]


def pairs(items: Sequence[Statement]) -> list[tuple[int, int]]:
    """(statement index, cited passage number) for every citation: what is sent to the judge."""
    return [(i, n) for i, s in enumerate(items) for n in s.cites]


def row_scores(n_statements: int, pair_scores: Sequence[tuple[int, float]]) -> dict[str, float | None]:
    """Scores from (statement index, support score) for each pair."""
    if n_statements == 0:
        return {"citation_precision": None, "citation_recall": None, "citation_f1": None}
    precision = sum(s for _, s in pair_scores) / len(pair_scores) if pair_scores else None
    per_statement: dict[int, list[float]] = {}
    for i, score in pair_scores:
        per_statement.setdefault(i, []).append(score)
    recall = sum(sum(v) / len(v) for v in per_statement.values()) / n_statements
    # the harmonic mean with a zero is zero, whatever the precision (even none)
    f1 = 0.0 if recall == 0 else None if precision is None else 2 * precision * recall / (precision + recall)
    return {"citation_precision": _percent(precision), "citation_recall": _percent(recall),
            "citation_f1": _percent(f1)}


def _percent(value: float | None) -> float | None:
    return None if value is None else 100.0 * value


def scores_from_detail(detail: dict) -> dict[str, float | None]:
    """The three scores from a judgment's stored detail ({"statements": [...], "pairs": [{"statement", "score"}]})."""
    return row_scores(len(detail.get("statements") or []),
                      [(p["statement"], p["score"]) for p in detail.get("pairs") or []])


def by_number(listed: Sequence[tuple[int, str | None, str]]) -> dict[int, str]:
    """The passage text each citation number names, from a row's (rank, chunk id, text): numbers in the chunk ids
    when they carry them (open-rag-eval's "query_1:[3]"), else the ranks (1 = first passage)."""
    ranks = {rank: text for rank, _, text in listed}
    ids = {int(m.group(1) or m.group(2)): text for _, cid, text in listed
           if cid and (m := _NUMBERED_ID.search(cid))}
    return {**ranks, **ids} if ids else ranks


def pair_key(passage: int, statement: str) -> str:
    """A (sentence, cited passage) pair by its content: "[2] The sentence." (whitespace collapsed)."""
    return " ".join(f"[{passage}] {statement}".split())
