"""What a judge job has to do: one item per (judge, run row[, passage]), minus what is already judged.

The idempotency key names the judge, its rubric version, its model and sampling parameters, and the target;
a judgment with that key that is `ok` or `unparsed` is final, so a resumed or repeated job skips it.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from array import array
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.base.scoring import citations
from rageval_desktop.core.golden import nuggets as nugget_lists
from rageval_desktop.core.golden.nuggets import fingerprint
from rageval_desktop.core.judges.judge import Judge
from rageval_desktop.core.store.project import Project
from rageval_desktop.core.store.queries import row_fields
from rageval_desktop.core.store.queries import run_id as find_run


@dataclass
class Item:
    judge: Judge
    run_row_id: int
    passage_rank: int
    idem_key: str
    fields: dict[str, str] = field(default_factory=dict)
    missing: str | None = None   # a field the metric needs is empty: recorded as an error, no call
    meta: dict[str, Any] = field(default_factory=dict)   # what a multi-call judge needs (core/jobs/chains.py)


def idem_key(judge: Judge, run_row_id: int, passage_rank: int, against: str | None = None) -> str:
    """`against`: what else the verdict depends on (the curated nugget list a row is checked against)."""
    return KeyMaker(judge).make(run_row_id, passage_rank, against)


def select_rows(project: Project, run: str, slice_tag: str | None = None, sample_id: int | None = None,
                row_ids: list[int] | None = None) -> Sequence[int]:
    """The run's row ids in order (a compact array: 8 bytes a row, not a Python int's 36)."""
    rid = find_run(project, run)
    sql = "SELECT rr.id FROM run_rows rr LEFT JOIN golden_rows g ON g.id = rr.golden_id WHERE rr.run_id = ?"
    params: list[Any] = [rid]
    if slice_tag:
        sql += " AND g.slice_tag = ?"
        params.append(slice_tag)
    if sample_id is not None:
        sql += " AND rr.id IN (SELECT run_row_id FROM review_sample_rows WHERE sample_id = ?)"
        params.append(sample_id)
    rows = array("q", (r for (r,) in project.reader().execute(sql + " ORDER BY rr.position", params)))
    if row_ids is not None:
        wanted = set(row_ids)
        rows = array("q", (r for r in rows if r in wanted))
    return rows


def rated_rows(project: Project, metrics: set[str]) -> set[int]:
    """Run rows that have a standing human rating for any of these metrics."""
    marks = ",".join("?" * len(metrics))
    return {r[0] for r in project.reader().execute(
        f"SELECT DISTINCT run_row_id FROM human_ratings WHERE withdrawn_at IS NULL AND skipped = 0 "
        f"AND metric IN ({marks})", tuple(metrics))}


def runs_with_ratings(project: Project, metric: str) -> list[str]:
    return [r[0] for r in project.reader().execute(
        "SELECT DISTINCT r.name FROM human_ratings h JOIN run_rows rr ON rr.id = h.run_row_id JOIN runs r "
        "ON r.id = rr.run_id WHERE h.metric = ? AND h.withdrawn_at IS NULL AND h.skipped = 0 ORDER BY r.id",
        (metric,))]


PLAN_ROWS = 1000          # rows planned (keys checked against the judgments) per query


class KeyMaker:
    """The idempotency key of a judge's verdict on a target: sha256 of the JSON list [judge id, rubric version, model,
    sampling parameters, run row, passage rank(, against)] — the judge's part serialised once (a no-op job over 100k
    rows computes 100k keys). The bytes hashed never change: stored judgments are found by them (a test holds them to
    the plain json.dumps of that list)."""

    def __init__(self, judge: Judge) -> None:
        sampling = {k: judge.params.get(k) for k in ("temperature", "max_tokens", "seed", "measure", "model", "mode")}
        if judge.params.get("confidence"):     # asked for log-probabilities: another method (a key only then, so
            sampling["confidence"] = judge.params["confidence"]      # every other judge keeps its keys)
        self.prefix = json.dumps([judge.id, judge.rubric_id, judge.model_id, sampling], sort_keys=True)[:-1]

    def make(self, run_row_id: int, passage_rank: int, against: str | None = None) -> str:
        tail = f", {json.dumps(against)}]" if against else "]"
        return hashlib.sha256(f"{self.prefix}, {run_row_id}, {passage_rank}{tail}".encode()).hexdigest()


class Plan:
    """What a job has to do, planned from keys alone: for each judge and run row (and passage, for passage-level
    judges) the idempotency key is computed and looked up, chunk by chunk — no row's text is read. The work is kept as
    three compact arrays (judge, row, rank), about 16 bytes an item; `chunks()` then loads the text of a chunk of
    items at a time, just before they are judged. So a job with nothing to do costs the keys and nothing else, and a
    long job's memory does not grow with its run."""

    def __init__(self, project: Project, judges: list[Judge], row_ids: Sequence[int], *, redo_failed: bool = False,
                 only_failed: bool = False, audit: bool = False) -> None:
        for judge in judges:      # a retired judge judges only the rated rows: the audit that may reinstate it
            if judge.status != "active" and not audit:
                raise RagevalError(f"judge '{judge.name}' is retired: it judges only the rows people rated (its "
                                   f"audit), and an audit it passes reinstates it")
        self.project, self.judges = project, judges
        self.keys = [KeyMaker(j) for j in judges]
        self.judge_index = array("i")
        self.row = array("q")
        self.rank = array("i")
        self.skipped = 0
        self.skipped_unparsed = 0    # of those skipped, rows whose reply never parsed (--redo-unparsed redoes them)
        self._per_judge: Counter[int] = Counter()
        final = {"ok"} if redo_failed or only_failed else {"ok", "unparsed"}
        conn = project.reader()
        for index, judge in enumerate(judges):
            for start in range(0, len(row_ids), PLAN_ROWS):
                chunk = list(row_ids[start:start + PLAN_ROWS])
                targets = self._targets(conn, judge, index, chunk)
                found = _statuses(conn, judge.id, chunk)
                for rid, rank, key in targets:
                    status = found.get(key)
                    if status in final or (only_failed and status is None):
                        self.skipped += 1
                        self.skipped_unparsed += status == "unparsed"
                        continue
                    self.judge_index.append(index)
                    self.row.append(rid)
                    self.rank.append(rank)
                    self._per_judge[index] += 1

    def _targets(self,
                 conn: sqlite3.Connection, judge: Judge, index: int, rows: list[int]) -> list[tuple[int, int, str]]:
        """(row, rank, key) of every item of this judge on these rows."""
        maker = self.keys[index]
        if judge.spec.level == "passage":
            # every retrieved passage, as open-rag-eval grades them (the top 5 by default before 0.3 left
            # umbrela_mean up to 18 points off, and nuggets from relevant passages past rank 5 never made); a judge
            # added with --passages-k K grades the top K
            k = judge.params.get("passages_k") or None
            ranks = _ranks(conn, rows)
            return [(rid, rank, maker.make(rid, rank)) for rid in rows for rank in ranks.get(rid, [])[:k]]
        if judge.spec.items == "nugget":
            against = _nugget_against(conn, rows)
            return [(rid, 0, maker.make(rid, 0, against.get(rid))) for rid in rows]
        return [(rid, 0, maker.make(rid, 0)) for rid in rows]

    def __len__(self) -> int:
        return len(self.row)

    def count(self, judges: list[Judge]) -> int:
        return sum(self._per_judge[i] for i, j in enumerate(self.judges) if j in judges)

    def chunks(self, judges: list[Judge] | None = None, size: int = 256) -> Iterator[list[Item]]:
        """The items of these judges (default: all), `size` at a time, their text loaded (`fill`)."""
        wanted = {i for i, j in enumerate(self.judges) if judges is None or j in judges}
        batch: list[tuple[int, int, int]] = []
        for n in range(len(self.row)):
            if self.judge_index[n] not in wanted:
                continue
            batch.append((self.judge_index[n], self.row[n], self.rank[n]))
            if len(batch) >= size:
                yield self._fill(batch)
                batch = []
        if batch:
            yield self._fill(batch)

    def _fill(self, batch: list[tuple[int, int, int]]) -> list[Item]:
        conn = self.project.reader()
        k = max([j.param("passages_k") or 5 for j in self.judges] or [5])
        values = row_fields(conn, sorted({rid for _, rid, _ in batch}), k,
                             passages=any(_reads_passages(self.judges[j]) for j in {j for j, _, _ in batch}))
        curated: dict[str, dict[str, Any]] = {}
        if any(self.judges[j].spec.items == "nugget" for j, _, _ in batch):
            for row in values.values():
                row["question_key"] = nugget_lists.question_key(row["golden_id"], row["question"], row["query_id"])
            curated = nugget_lists.golden_lists(conn, sorted({v["question_key"] for v in values.values()}))
        return [_item(self.judges[j], self.keys[j], rid, rank, values[rid], curated) for j, rid, rank in batch]


def _reads_passages(judge: Judge) -> bool:
    """Judges that compare the answer with the reference (lexical, embedding) never read the passages."""
    return judge.kind_of.reads_passages


def _statuses(conn: sqlite3.Connection, judge_id: int, rows: list[int]) -> dict[str, str]:
    """The status of each judgment (by idempotency key) this judge has on these rows (a plan chunk): read through the
    judgments' unique index, which leads with the run row, so a chunk of rows is a few neighbouring index pages."""
    return dict(conn.execute(f"SELECT idem_key, status FROM judgments WHERE judge_id = ? AND run_row_id IN "
                             f"({','.join('?' * len(rows))})", (judge_id, *rows)))


def _ranks(conn: sqlite3.Connection, rows: list[int]) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for start in range(0, len(rows), 500):
        chunk = rows[start:start + 500]
        for rid, rank in conn.execute(f"SELECT run_row_id, rank FROM retrieved_passages WHERE run_row_id IN "
                                      f"({','.join('?' * len(chunk))}) ORDER BY run_row_id, rank", chunk):
            out.setdefault(rid, []).append(rank)
    return out


def _nugget_against(conn: sqlite3.Connection, rows: list[int]) -> dict[int, str | None]:
    """What a nugget judgment of each row is checked against: its question's curated list (fingerprint), if any."""

    keys: dict[int, str] = {}
    for start in range(0, len(rows), 500):
        chunk = rows[start:start + 500]
        for rid, golden_id, question, query_id in conn.execute(
                f"SELECT id, golden_id, question, json_extract(metadata, '$.query_id') FROM run_rows WHERE id IN "
                f"({','.join('?' * len(chunk))})", chunk):
            keys[rid] = nugget_lists.question_key(golden_id, question, query_id)
    curated = nugget_lists.golden_lists(conn, sorted(set(keys.values())))
    return {rid: nugget_lists.fingerprint(curated.get(key)) for rid, key in keys.items()}


def _item(judge: Judge, maker: KeyMaker, rid: int, rank: int, row: dict[str, Any],
          curated: dict[str, dict[str, Any]]) -> Item:
    """One planned item with the fields its rubric renders, what a multi-call judge needs, and what is missing."""

    against = fingerprint(curated.get(row["question_key"])) if judge.spec.items == "nugget" else None
    # (nugget assignment and the no-answer check read the answer without its markers, as open-rag-eval does)
    answer = citations.marker_free(row["answer"]) if judge.spec.marker_free else row["answer"]
    fields = {"question": row["question"], "answer": answer, "reference": row["reference"],
              "contexts": row["contexts"]}
    if rank:
        fields["passage"] = next((t for r, t, _ in row["passages"] if r == rank), "")
    item = Item(judge, rid, rank, maker.make(rid, rank, against), fields)
    if judge.spec.items == "nugget":
        item.meta = {"question_key": row["question_key"], "run_id": row["run_id"],
                     "golden_list": curated.get(row["question_key"])}
    elif judge.spec.items == "citation":
        item.meta = {"run_id": row["run_id"]}
    else:
        item.meta = judge.kind_of.plan(judge, row) or {}
    if not getattr(judge.kind_of, "reads_fields", True):   # a kind whose verdicts come from elsewhere (a peer's)
        pass
    elif judge.spec.needs_reference and not row["reference"].strip():
        item.missing = "reference"
    elif judge.spec.level == "row" and not row["answer"].strip():
        item.missing = "answer"
    elif judge.metric == "faithfulness" and not row["contexts"].strip():
        item.missing = "contexts"
    elif judge.metric == "hallucination" and not any(t.strip() for _, t, _ in row["passages"]):
        item.missing = "passages"
    return item


def _planned(judge: Judge, row: dict[str, Any]) -> dict[str, Any]:
    """What a kind adds to an item; a plug-in kind that fails here is named, never an internal error."""
    try:
        meta = judge.kind_of.plan(judge, row)
    except RagevalError:
        raise
    except Exception as exc:
        raise RagevalError(f"judge '{judge.name}' (kind '{judge.kind}') failed while planning a row: "
                           f"{type(exc).__name__}: {str(exc)[:200]}; nothing was judged") from None
    if meta is not None and not isinstance(meta, dict):
        raise RagevalError(f"judge '{judge.name}' (kind '{judge.kind}') planned {type(meta).__name__}, not a dict; "
                           "nothing was judged")
    return meta or {}
