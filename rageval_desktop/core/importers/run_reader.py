"""A run file read and prepared for inserting: records into rows and passages with ids assigned, golden rows linked,
text-only passages matched to corpus chunks. Reads the project, never writes: it runs in the importing process or
in the reader process alike."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

from rageval_desktop.core.base.context import TaskContext
from rageval_desktop.core.base.text import normalise_question
from rageval_desktop.core.importers.common import CorpusText, stream_load
from rageval_desktop.core.importers.layouts import ColumnPassages, RunChunk, RunRecord

ROW_WIDTH = 12       # values of a run row in `Preparer.prepare`'s flat list (run_import's INSERT names them)
PASSAGE_WIDTH = 6    # values of a retrieved passage


class InProcess:
    """The file read and prepared in this process (a small file, or no interpreter to start a reader with): the same
    steps as `ReaderProcess`, without the second process."""

    def __init__(self, path: str | Path, fmt: str | None, mapping: dict[str, str] | None, rank_by: str) -> None:
        self.cell_warnings: list[str] = []
        self.summary: dict[str, Any] = {}
        self.rank_by = rank_by
        self._progress: dict[str, int] = {}
        # (passages ranked by score are sorted a row at a time: only those in file order are read as columns)
        self._layout, self._records, self._file = stream_load(path, "run", fmt, mapping, self.cell_warnings,
                                                              progress=self._progress,
                                                              columns_apart=rank_by == "position")

    def layout(self, ctx: TaskContext | None) -> tuple[str, str]:
        return self._layout.name, self._file

    def chunks(self, run_id: int, next_id: int, ctx: TaskContext | None, conn: sqlite3.Connection) -> Iterator[tuple]:
        """(rows, passages, ids, bytes read) a chunk at a time; then `summary` is set."""
        preparer = Preparer(conn, self.rank_by, run_id, next_id)
        for records in self._records:
            yield (*preparer.prepare(records), self._progress.get("read", 0))
        self.summary = preparer.summary()

    def close(self) -> None:
        pass


class Preparer:
    """A chunk of records as the rows and passages to insert: ids and positions assigned, golden rows linked, text-only
    passages matched to corpus chunks. Reads the project (golden rows, corpus) and never writes, so it runs in the
    importing process or in the reader process alike."""

    def __init__(self, conn: sqlite3.Connection, rank_by: str, run_id: int, next_id: int) -> None:
        self.by_id, self.by_question = golden_index(conn)
        self.corpus = CorpusText(conn)
        self.run_id, self.next_id, self.position = run_id, next_id, 0
        self.ranks, self.repeats = _Ranks(rank_by), _Repeats()
        self.linked = self.unlinked = self.unresolved = 0
        self.unlinked_examples: list[str] = []

    def prepare(self, records: list[RunRecord]) -> tuple[list, list, list[tuple[str, int]]]:
        """(run_rows rows, retrieved_passages rows, (external id, file row) of each record). The rows come one after
        another in one flat list (`ROW_WIDTH` values each, `PASSAGE_WIDTH` for passages): the importer inserts them
        many to a statement, and a flat list is quicker to send than one tuple a row."""
        rows: list = []
        passages: list = []
        for rec in records:
            self.position += 1
            rec.external_id = rec.external_id or f"row-{self.position}"
        columns = records.passages if isinstance(records, RunChunk) else None
        self.ranks.see(records)
        if columns is not None:
            self.ranks.see_columns(records, columns)
        self.repeats.see(records)
        text_only = _match_corpus(self.corpus, records)
        first = self.position - len(records) + 1
        first_id = self.next_id
        for k, rec in enumerate(records):
            golden_id = link_golden(rec, self.by_id, self.by_question)
            if golden_id and rec.row in text_only and not any(p.chunk_id and not p.scoped for p in rec.retrieved):
                self.unresolved += 1
            if golden_id:
                self.linked += 1
            else:
                self.unlinked += 1
                if len(self.unlinked_examples) < 5:
                    self.unlinked_examples.append(rec.question[:120])
            row_id = self.next_id
            self.next_id += 1
            rows.extend((row_id, self.run_id, first + k, rec.external_id, golden_id, rec.question, rec.answer,
                         rec.latency_ms, rec.cost_usd, rec.prompt_tokens, rec.completion_tokens,
                         json.dumps(rec.metadata, ensure_ascii=False) if rec.metadata else "{}"))
            for rank, p in enumerate(rec.retrieved, start=1):
                passages.extend((row_id, rank, p.chunk_id, p.text, p.score,
                                 None if p.in_prompt is None else int(p.in_prompt)))
        if columns is not None:
            passages = _laid_out(columns, first_id)
        return rows, passages, [(rec.external_id or "", rec.row) for rec in records]

    def summary(self) -> dict[str, Any]:
        return {"linked": self.linked, "unlinked": self.unlinked, "unlinked_examples": self.unlinked_examples,
                "unresolved": self.unresolved, "warnings": self.ranks.warnings() + self.repeats.warnings()}


def _laid_out(columns: ColumnPassages, first_id: int) -> list:
    """The passages of a chunk read as columns, as `Preparer.prepare` lays out those of records: row id, rank (from
    1, in file order), chunk id, text, score, in_prompt — one passage after another."""
    out: list = [None] * (PASSAGE_WIDTH * len(columns.texts))
    counts = columns.counts
    out[0::PASSAGE_WIDTH] = [row_id for row_id, count in zip(range(first_id, first_id + len(counts)), counts,
                                                              strict=True) for _ in range(count)]
    out[1::PASSAGE_WIDTH] = [rank for count in counts for rank in range(1, count + 1)]
    out[2::PASSAGE_WIDTH] = columns.chunk_ids
    out[3::PASSAGE_WIDTH] = columns.texts
    out[4::PASSAGE_WIDTH] = columns.scores
    if any(flag is not None for flag in columns.in_prompt):
        out[5::PASSAGE_WIDTH] = [None if flag is None else int(flag) for flag in columns.in_prompt]
    return out


def golden_index(conn: sqlite3.Connection) -> tuple[set[str], dict[str, str]]:
    by_id: set[str] = set()
    by_question: dict[str, str] = {}
    # approved rows win over drafts when two rows share a question; retired rows still link (history)
    for gid, norm, _status in conn.execute(
            "SELECT id, question_norm, status FROM golden_rows ORDER BY status = 'approved' DESC, id"):
        by_id.add(gid)
        by_question.setdefault(norm, gid)
    return by_id, by_question


def link_golden(rec: RunRecord, by_id: set[str], by_question: dict[str, str]) -> str | None:
    for candidate in (rec.golden_id, rec.external_id):
        if candidate and candidate in by_id:
            return candidate
    return by_question.get(normalise_question(rec.question)) if by_question else None


class _Ranks:
    """Rank is the position in the file. Scores that rise down a list contradict that order: say so (and how to
    rank by score), or, with rank_by="score", order each row's passages by score (highest first; passages without
    a score keep their order after the scored ones). Fed a chunk at a time."""

    def __init__(self, rank_by: str) -> None:
        self.rank_by = rank_by
        self.contradicted = 0
        self.first: int | None = None
        self.unscored = 0

    def see(self, records: list[RunRecord]) -> None:
        for rec in records:
            if len(rec.retrieved) > 1 and all(p.score is not None for p in rec.retrieved) and any(
                    b.score > a.score for a, b in pairwise(rec.retrieved)):  # type: ignore[operator]
                self.contradicted += 1
                self.first = rec.row if self.first is None else self.first
            if self.rank_by == "score":
                self.unscored += sum(p.score is None for p in rec.retrieved)
                rec.retrieved.sort(key=lambda p: (p.score is None, -(p.score or 0.0)))

    def see_columns(self, records: list[RunRecord], columns: ColumnPassages) -> None:
        """`see` for passages read as columns (in file order: rank_by is "position")."""
        start = 0
        for rec, count in zip(records, columns.counts, strict=True):
            if count > 1:
                scores = columns.scores[start:start + count]
                if None not in scores and any(b > a for a, b in pairwise(scores)):  # type: ignore[operator]
                    self.contradicted += 1
                    self.first = rec.row if self.first is None else self.first
            start += count

    def warnings(self) -> list[str]:
        out = []
        if self.rank_by == "score":
            if self.unscored:
                out.append(f"{self.unscored} passage(s) have no score: ranked after the scored ones, in file order")
            if self.contradicted:
                out.append(f"{self.contradicted} row(s) were reordered by score (--rank-by score)")
        elif self.contradicted:
            out.append(
                f"{self.contradicted} row(s) list passages whose scores rise down the list (first: row "
                f"{self.first}): rank is the position in the file and scores are ignored; if the scores are the "
                "ranking (higher is better), re-import with --rank-by score")
        return out


class _Repeats:
    def __init__(self) -> None:
        self.runs: dict[str, set[str]] = {}

    def see(self, records: list[RunRecord]) -> None:
        for rec in records:
            if "query_run" in rec.metadata and "query_id" in rec.metadata:
                self.runs.setdefault(rec.metadata["query_id"], set()).add(rec.metadata["query_run"])

    def warnings(self) -> list[str]:
        repeated = {q: r for q, r in self.runs.items() if len(r) > 1}
        if not repeated:
            return []
        example = next(iter(repeated))
        return [f"{len(repeated)} question(s) were run more than once (query_run): each run is a row of its own "
                f"(e.g. {example}#run{sorted(repeated[example])[0]}), and metrics average a question's runs"]


def _match_corpus(corpus: CorpusText, records: list[RunRecord]) -> set[int]:
    """Give passages that came as text only (or with a per-query marker) the id of the corpus chunk with the same
    text, whitespace aside. Returns the rows (of these records) that had such passages."""
    rows = {rec.row for rec in records if any(p.chunk_id is None or p.scoped for p in rec.retrieved)}
    for rec in records:
        if rec.row in rows:
            for p in rec.retrieved:
                if p.text and (p.chunk_id is None or p.scoped):
                    cid = corpus.chunk_id(p.text)
                    if cid:
                        p.chunk_id, p.scoped = cid, False
    return rows
