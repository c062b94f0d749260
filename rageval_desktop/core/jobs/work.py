"""What a judge job has to do: one item per (judge, run row[, passage]), minus what is already judged.

The idempotency key names the judge, its rubric version, its model and sampling parameters, and the target;
a judgment with that key that is `ok` or `unparsed` is final, so a resumed or repeated job skips it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from rageval_desktop.core.errors import RagevalError
from rageval_desktop.core.judges.registry import Judge
from rageval_desktop.core.store.project import Project
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
    sampling = {k: judge.params.get(k) for k in ("temperature", "max_tokens", "seed", "measure", "model", "mode")}
    target: list[Any] = [run_row_id, passage_rank] + ([against] if against else [])
    blob = json.dumps([judge.id, judge.rubric_id, judge.model_id, sampling, *target], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def select_rows(project: Project, run: str, slice_tag: str | None = None, sample_id: int | None = None,
                row_ids: list[int] | None = None) -> list[int]:
    rid = find_run(project, run)
    sql = "SELECT rr.id FROM run_rows rr LEFT JOIN golden_rows g ON g.id = rr.golden_id WHERE rr.run_id = ?"
    params: list[Any] = [rid]
    if slice_tag:
        sql += " AND g.slice_tag = ?"
        params.append(slice_tag)
    if sample_id is not None:
        sql += " AND rr.id IN (SELECT run_row_id FROM review_sample_rows WHERE sample_id = ?)"
        params.append(sample_id)
    rows = [r[0] for r in project.reader().execute(sql + " ORDER BY rr.position", params)]
    if row_ids is not None:
        wanted = set(row_ids)
        rows = [r for r in rows if r in wanted]
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


def _row_fields(conn, row_ids: list[int], passages_k: int) -> dict[int, dict[str, Any]]:
    out: dict[int, dict[str, Any]] = {}
    for start in range(0, len(row_ids), 500):
        chunk = row_ids[start:start + 500]
        marks = ",".join("?" * len(chunk))
        for rid, question, answer, reference, golden_id, run_id in conn.execute(
                f"SELECT rr.id, rr.question, rr.answer, g.gold_answer, rr.golden_id, rr.run_id FROM run_rows rr "
                f"LEFT JOIN golden_rows g ON g.id = rr.golden_id WHERE rr.id IN ({marks})", chunk):
            out[rid] = {"question": question, "answer": answer or "", "reference": reference or "", "passages": [],
                        "golden_id": golden_id, "run_id": run_id}
        for rid, rank, text, chunk_text, in_prompt in conn.execute(
                f"SELECT p.run_row_id, p.rank, p.text, c.text, p.in_prompt FROM retrieved_passages p "
                f"LEFT JOIN corpus_chunks c ON c.chunk_id = p.chunk_id WHERE p.run_row_id IN ({marks}) "
                f"ORDER BY p.run_row_id, p.rank", chunk):
            out[rid]["passages"].append((rank, text if text is not None else (chunk_text or ""), in_prompt))
    for values in out.values():
        passages = values["passages"]
        prompt = [p for p in passages if p[2] == 1] or [p for p in passages if p[2] is None][:passages_k]
        values["contexts"] = "\n\n".join(f"[{rank}] {text}" for rank, text, _ in prompt)
    return out


def preview_fields(project: Project, run_row_id: int, passages_k: int = 5, rank: int = 1) -> dict[str, str]:
    """The fields a rubric receives for one row (the rubric editor's live preview renders with them); `passage`
    is the one at `rank` (default the first)."""
    values = _row_fields(project.reader(), [run_row_id], passages_k).get(run_row_id)
    if values is None:
        raise RagevalError(f"run row {run_row_id} does not exist")
    chosen = next((p[1] for p in values["passages"] if p[0] == rank), "")
    return {"question": values["question"], "answer": values["answer"], "reference": values["reference"],
            "contexts": values["contexts"], "passage": chosen, "context": chosen}


def plan(project: Project, judges: list[Judge], row_ids: list[int], *, redo_failed: bool = False,
         only_failed: bool = False) -> tuple[list[Item], int]:
    """(items to run, number skipped because already judged)."""
    conn = project.reader()
    for judge in judges:
        if judge.status != "active":
            raise RagevalError(f"judge '{judge.name}' is retired; reinstate it after a passing audit to run it")
    k = max([j.param("passages_k") or 5 for j in judges] or [5])
    values = _row_fields(conn, row_ids, k)
    items: list[Item] = []
    skipped = 0
    curated: dict[str, dict[str, Any]] = {}
    if any(j.spec.items == "nugget" for j in judges):
        from rageval_desktop.core.golden import nuggets as nugget_lists

        for values_ in values.values():
            values_["question_key"] = nugget_lists.question_key(values_["golden_id"], values_["question"])
        curated = nugget_lists.golden_lists(conn, sorted({v["question_key"] for v in values.values()}))
    for judge in judges:
        done = dict(conn.execute("SELECT idem_key, status FROM judgments WHERE judge_id = ?", (judge.id,)))
        final = {"ok"} if redo_failed or only_failed else {"ok", "unparsed"}
        for rid in row_ids:
            row = values[rid]
            ranks = ([rank for rank, _, _ in row["passages"][: judge.param("passages_k") or 5]]
                     if judge.spec.level == "passage" else [0])
            against = None
            if judge.spec.items == "nugget":
                from rageval_desktop.core.golden.nuggets import fingerprint

                against = fingerprint(curated.get(row["question_key"]))
            for rank in ranks:
                key = idem_key(judge, rid, rank, against)
                status = done.get(key)
                if status in final or (only_failed and status is None):
                    skipped += 1
                    continue
                fields = {"question": row["question"], "answer": row["answer"], "reference": row["reference"],
                          "contexts": row["contexts"]}
                if rank:
                    fields["passage"] = next(t for r, t, _ in row["passages"] if r == rank)
                item = Item(judge, rid, rank, key, fields)
                if judge.spec.items == "nugget":
                    item.meta = {"question_key": row["question_key"], "run_id": row["run_id"],
                                 "golden_list": curated.get(row["question_key"])}
                elif judge.spec.items == "citation":
                    item.meta = {"run_id": row["run_id"]}
                elif judge.kind == "hhem":
                    item.meta = {"passages": [(r, t) for r, t, _ in row["passages"] if t.strip()]}
                if judge.spec.needs_reference and not row["reference"].strip():
                    item.missing = "reference"
                elif judge.spec.level == "row" and not row["answer"].strip():
                    item.missing = "answer"
                elif judge.metric == "faithfulness" and not row["contexts"].strip():
                    item.missing = "contexts"
                elif judge.metric == "hallucination" and not any(t.strip() for _, t, _ in row["passages"]):
                    item.missing = "passages"
                items.append(item)
    return items, skipped
