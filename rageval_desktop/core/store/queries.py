"""Read-side facts about a project, shared by the CLI, the GUI and reports."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

from rageval_desktop.core.base.errors import NotFound, RagevalError
from rageval_desktop.core.base.vocab import METRICS
from rageval_desktop.core.store.project import Project


def project_info(project: Project) -> dict[str, Any]:
    conn = project.reader()

    def count(sql: str) -> int:
        return int(conn.execute(sql).fetchone()[0])

    # counts the triggers keep (schema 16 and 18): the same at 5 MB and at 1 GB
    kept = dict(conn.execute("SELECT name, n FROM table_counts"))
    # the parts of each run's values kept for quick reads (core.metrics.values; none under 50,000 rows)
    parts: dict[int, list[str]] = {}
    for rid, part in conn.execute("SELECT run_id, part FROM run_values WHERE data IS NOT NULL ORDER BY run_id, part"):
        parts.setdefault(rid, []).append(part)
    runs = [{"name": name, "rows": rows, "linked": linked, "created_at": created, "values_kept": parts.get(rid, [])}
            for rid, name, rows, linked, created in conn.execute(
                "SELECT r.id, r.name, COALESCE(c.rows, 0), COALESCE(c.linked, 0), r.created_at FROM runs r "
                "LEFT JOIN run_counts c ON c.run_id = r.id WHERE r.purpose = 'run' ORDER BY r.id")]
    golden = {(slice_, status): n for slice_, status, n in conn.execute(
        "SELECT slice, status, n FROM golden_counts")}
    slices = {name: sum(n for (s, status), n in golden.items() if s == name and status != "retired")
              for (name,) in conn.execute("SELECT name FROM slices ORDER BY position")}
    return {
        "path": str(project.path),
        "name": project.meta("name"),
        "schema_version": project.schema_version(),
        "golden_rows": sum(n for (_, status), n in golden.items() if status != "retired"),
        "golden_rows_retired": sum(n for (_, status), n in golden.items() if status == "retired"),
        "slices": slices,
        "corpus_chunks": kept["corpus_chunks"],
        "runs": runs,
        "judges": count("SELECT COUNT(*) FROM judges"),
        "judgments": kept["judgments"],
        "human_ratings": kept["human_ratings"],   # not withdrawn
        "jobs": count("SELECT COUNT(*) FROM jobs"),
    }


def run_id(project: Project, name: str) -> int:
    row = project.reader().execute("SELECT id FROM runs WHERE name = ?", (name,)).fetchone()
    if row is None:
        names = [r[0] for r in project.reader().execute("SELECT name FROM runs WHERE purpose = 'run' ORDER BY id")]
        raise NotFound(f"no run named '{name}' (runs: {', '.join(names) or 'none'})")
    return int(row[0])


@dataclass(frozen=True)
class Passage:
    rank: int
    chunk_id: str | None
    text: str
    score: float | None
    is_gold: bool


@dataclass(frozen=True)
class JudgmentView:
    judge: str
    metric: str
    judge_status: str        # active | retired
    passage_rank: int
    status: str              # ok | unparsed | error
    score: float | None
    label: str | None
    rationale: str | None
    raw_output: str | None
    error_kind: str | None
    cost_usd: float | None
    latency_ms: float | None
    detail: Any = None       # a multi-call judge's structured result: nuggets, citation pairs, HHEM claims
    items: str | None = None  # "nugget" / "citation": passage_rank numbers a sub-item, not a passage


def _judgment_view(r: tuple) -> JudgmentView:
    judge, metric, judge_status, rank, status, score, label, rationale, raw, error_kind, cost, latency, detail = r
    return JudgmentView(judge, metric, judge_status, rank, status, score, label, rationale, raw, error_kind, cost,
                        latency, json.loads(detail) if detail else None,
                        METRICS[metric].items if metric in METRICS else None)


@dataclass(frozen=True)
class RowDetail:
    """Everything the detail pane and the review screen show about one row."""

    title: str
    question: str
    answer: str | None
    gold_answer: str | None
    gold_chunk_ids: list[str]
    slice_tag: str | None
    passages: list[Passage]
    facts: dict[str, Any]
    kind: str = "run"  # "run" or "golden"
    judgments: tuple[JudgmentView, ...] = ()
    nuggets: tuple[dict[str, Any], ...] = ()   # the question's curated nugget list, if any
    nugget_status: str | None = None


def run_row_detail(project: Project, row_id: int) -> RowDetail:
    conn = project.reader()
    row = conn.execute(
        "SELECT rr.external_id, rr.question, rr.answer, rr.latency_ms, rr.cost_usd, rr.prompt_tokens, "
        "rr.completion_tokens, g.id, g.gold_answer, g.gold_chunk_ids, g.slice_tag, r.name "
        "FROM run_rows rr JOIN runs r ON r.id = rr.run_id LEFT JOIN golden_rows g ON g.id = rr.golden_id "
        "WHERE rr.id = ?", (row_id,)).fetchone()
    if row is None:
        raise NotFound(f"run row {row_id} does not exist")
    ext, question, answer, latency, cost, pt, ct, gid, gold_answer, gold_ids, slice_tag, run = row
    gold = json.loads(gold_ids) if gold_ids else []
    passages = [Passage(rank, cid, text if text is not None else _chunk_text(conn, cid), score, cid in gold)
                for rank, cid, text, score in conn.execute(
                    "SELECT rank, chunk_id, text, score FROM retrieved_passages WHERE run_row_id = ? ORDER BY rank",
                    (row_id,))]

    judgments = tuple(_judgment_view(r) for r in conn.execute(
        "SELECT j.name, j.metric, j.status, x.passage_rank, x.status, x.score, x.label, x.rationale, x.raw_output, "
        "x.error_kind, x.cost_usd, x.latency_ms, x.detail FROM judgments x JOIN judges j ON j.id = x.judge_id "
        "WHERE x.run_row_id = ? ORDER BY j.id, x.passage_rank", (row_id,)))
    return RowDetail(
        title=f"{run} · {ext}", question=question, answer=answer, gold_answer=gold_answer, gold_chunk_ids=gold,
        slice_tag=slice_tag, passages=passages, judgments=judgments,
        facts={"golden row": gid or "unlinked", "latency ms": latency, "cost USD": cost,
               "prompt tokens": pt, "completion tokens": ct})


def golden_row_detail(project: Project, golden_id: str) -> RowDetail:
    conn = project.reader()
    row = conn.execute("SELECT question, gold_answer, gold_chunk_ids, slice_tag, source, status, revision "
                       "FROM golden_rows WHERE id = ?", (golden_id,)).fetchone()
    if row is None:
        raise NotFound(f"golden row {golden_id} does not exist")
    question, gold_answer, gold_ids, slice_tag, source, status, revision = row
    gold = json.loads(gold_ids)
    passages = [Passage(n, cid, _chunk_text(conn, cid), None, True) for n, cid in enumerate(gold, start=1)]
    curated = conn.execute("SELECT nuggets, status FROM nugget_lists WHERE question_key = ? AND scope = 'golden'",
                           (golden_id,)).fetchone()
    return RowDetail(title=f"golden · {golden_id}", question=question, answer=None, gold_answer=gold_answer,
                     gold_chunk_ids=gold, slice_tag=slice_tag, passages=passages,
                     facts={"source": source, "status": status, "revision": revision}, kind="golden",
                     nuggets=tuple(json.loads(curated[0])) if curated else (),
                     nugget_status=curated[1] if curated else None)


def _chunk_text(conn: sqlite3.Connection, chunk_id: str | None) -> str:
    if chunk_id is None:
        return ""
    row = conn.execute("SELECT text FROM corpus_chunks WHERE chunk_id = ?", (chunk_id,)).fetchone()
    return row[0] if row else "(chunk not in the project's corpus)"


def first_run_row_id(project: Project) -> int | None:
    """A row to preview prompts with (the rubric editor)."""
    row = project.reader().execute("SELECT id FROM run_rows ORDER BY id LIMIT 1").fetchone()
    return row[0] if row else None


def judgment_counts(project: Project) -> dict[int, int]:
    """Judgments per judge id."""
    return dict(project.reader().execute("SELECT judge_id, COUNT(*) FROM judgments GROUP BY judge_id"))


def golden_questions(project: Project) -> dict[str, str]:
    return dict(project.reader().execute("SELECT id, question FROM golden_rows"))


def row_fields(conn: sqlite3.Connection, row_ids: list[int], passages_k: int,
               passages: bool = True) -> dict[int, dict[str, Any]]:
    """The rows' fields for rubrics; `passages=False`: without the retrieved passages (judges that compare the
    answer with the reference only: the passages are most of a row's text)."""
    out: dict[int, dict[str, Any]] = {}
    for start in range(0, len(row_ids), 500):
        chunk = row_ids[start:start + 500]
        marks = ",".join("?" * len(chunk))
        for rid, question, answer, reference, golden_id, run_id, query_id in conn.execute(
                f"SELECT rr.id, rr.question, rr.answer, g.gold_answer, rr.golden_id, rr.run_id, "
                f"json_extract(rr.metadata, '$.query_id') FROM run_rows rr "
                f"LEFT JOIN golden_rows g ON g.id = rr.golden_id WHERE rr.id IN ({marks})", chunk):
            out[rid] = {"question": question, "answer": answer or "", "reference": reference or "", "passages": [],
                        "golden_id": golden_id, "run_id": run_id, "query_id": query_id}
        if not passages:
            continue
        for rid, rank, text, chunk_text, in_prompt in conn.execute(
                f"SELECT p.run_row_id, p.rank, p.text, c.text, p.in_prompt FROM retrieved_passages p "
                f"LEFT JOIN corpus_chunks c ON c.chunk_id = p.chunk_id WHERE p.run_row_id IN ({marks}) "
                f"ORDER BY p.run_row_id, p.rank", chunk):
            out[rid]["passages"].append((rank, text if text is not None else (chunk_text or ""), in_prompt))
    for values in out.values():
        listed = values["passages"]
        prompt = [p for p in listed if p[2] == 1] or [p for p in listed if p[2] is None][:passages_k]
        values["contexts"] = "\n\n".join(f"[{rank}] {text}" for rank, text, _ in prompt)
    return out


def preview_fields(project: Project, run_row_id: int, passages_k: int = 5, rank: int = 1) -> dict[str, str]:
    """The fields a rubric receives for one row (the rubric editor's live preview renders with them); `passage`
    is the one at `rank` (default the first)."""
    values = row_fields(project.reader(), [run_row_id], passages_k).get(run_row_id)
    if values is None:
        raise RagevalError(f"run row {run_row_id} does not exist")
    chosen = next((p[1] for p in values["passages"] if p[0] == rank), "")
    return {"question": values["question"], "answer": values["answer"], "reference": values["reference"],
            "contexts": values["contexts"], "passage": chosen, "context": chosen}
