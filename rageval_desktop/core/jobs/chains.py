"""Judges that take several calls per row, run inside a judge job: the AutoNuggetizer chain and citation support.

Every call goes through the job's own `call` (request cache, limiter, retries, cost) and every reply is parsed
with one repair retry, as a single-call judge's is. A failure anywhere leaves the row `unparsed` (with every
raw reply so far) or `error` — never a neutral score. The row's judgment keeps the structured result in its
`detail`; each nugget (or each citation pair) is also stored as a sub-judgment (`passage_rank` = its 1-based
position) so people can audit it like any passage grade. A row's earlier judgment by the same judge (a list that
has since been approved, say) is replaced in the same transaction.

Nugget lists belong to the question, not the row: the first row of a question in a job creates the list (rows
repeating the question wait for it), stores it as generated for that run, and later runs reuse it only once a
person approved or edited it (scope 'golden').
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from rageval_desktop.core.base.scoring import citations, nuggets
from rageval_desktop.core.base.scoring.nuggets import batch_values
from rageval_desktop.core.golden import nuggets as nugget_store
from rageval_desktop.core.jobs.steps import Gone, StepFailed, Trace, ask
from rageval_desktop.core.jobs.work import Item, idem_key
from rageval_desktop.core.judges import parsers, rubrics
from rageval_desktop.core.judges.judge import Judge
from rageval_desktop.core.judges.registry import get_judge, list_judges
from rageval_desktop.core.store.project import Project

if TYPE_CHECKING:
    from openai import AsyncOpenAI

    from rageval_desktop.core.base.limiter import AdaptiveLimiter
    from rageval_desktop.core.jobs.judge_job import JudgeJob

T = TypeVar("T")


class Chains:
    """Per-job state of the multi-call judges: their rubrics, the nugget lists made or approved, and locks."""

    def __init__(self, job: JudgeJob) -> None:
        self.job = job
        self.lists: dict[tuple[str, str], dict[str, Any]] = {}   # (question key, scope) -> list made in this job
        self.locks: dict[tuple[str, str], asyncio.Lock] = {}
        self.helpers: dict[tuple[int, str], rubrics.Rubric] = {}   # (judge id, role) -> creation/importance rubric

    def rubric(self, judge: Judge, role: str) -> rubrics.Rubric:
        return helper_rubric(self.job.project.reader(), judge, role, self.helpers)

    async def ask(self, item: Item, client: AsyncOpenAI, limiter: AdaptiveLimiter, rubric: rubrics.Rubric,
                  values: dict[str, str], parse: Callable[[str], T], trace: Trace, step: str) -> T:
        return await ask(self.job, item, client, limiter, rubric, values, parse, trace, step)

    # --- a row --------------------------------------------------------------------------------------
    async def run(self, item: Item, client: AsyncOpenAI, limiter: AdaptiveLimiter, rubric: rubrics.Rubric) -> None:
        estimate = self.job.estimates.pop(item.idem_key, 0.0)
        try:
            await self._run(item, client, limiter, rubric)
        finally:
            self.job.in_flight_estimate = max(0.0, self.job.in_flight_estimate - estimate)

    async def _run(self, item: Item, client: AsyncOpenAI, limiter: AdaptiveLimiter, rubric: rubrics.Rubric) -> None:
        trace = Trace()
        try:
            if item.judge.metric == nuggets.SOURCE_METRIC:
                verdict, detail, subs = await self.nugget_row(item, client, limiter, rubric, trace)
            else:
                verdict, detail, subs = await self.citation_row(item, client, limiter, rubric, trace)
        except Gone:
            return
        except StepFailed as failure:
            self.job.record(item, failure.status, error_kind=failure.kind, note=failure.note, replaces=True,
                            **trace.record_args())
            return
        self.job.record(item, "ok", verdict=verdict, detail=detail, subs=subs, replaces=True, **trace.record_args())

    # --- nuggets ------------------------------------------------------------------------------------
    async def nugget_list(self, item: Item, client: AsyncOpenAI, limiter: AdaptiveLimiter,
                          trace: Trace) -> dict[str, Any]:
        """The row's nugget list: approved/edited for its question, else generated for its run (made once)."""
        meta = item.meta
        if meta.get("golden_list"):
            listed: dict[str, Any] = meta["golden_list"]
            return listed
        key = (meta["question_key"], nugget_store.run_scope(meta["run_id"], item.judge.id))
        lock = self.locks.setdefault(key, asyncio.Lock())
        async with lock:
            if key in self.lists:
                return self.lists[key]
            stored = nugget_store.stored_list(self.job.project, *key, judge_id=item.judge.id)
            if stored is not None:
                self.lists[key] = stored
                return stored
            made = await self.create(item, client, limiter, trace)
            self.job.save_extra(nugget_store.upsert_generated_sql(key[0], key[1], item.fields["question"], made,
                                                                  item.judge.id))
            self.lists[key] = {"nuggets": made["nuggets"], "status": "generated", "scope": key[1], "revision": 1}
            return self.lists[key]

    async def create(self, item: Item, client: AsyncOpenAI, limiter: AdaptiveLimiter, trace: Trace) -> dict[str, Any]:
        judge = item.judge
        passages = item.meta["relevant_passages"]
        if passages is None:
            raise StepFailed("error", "no_grades", item.meta["grades_note"])
        source = {"passages": [rank for rank, _ in passages], "grader": item.meta.get("grader"), "calls": 0}
        if not passages:   # nothing graded relevant: the one nugget open-rag-eval asks the model to write
            return {"nuggets": [{"text": nuggets.NO_ANSWER_NUGGET, "importance": "vital"}],
                    "source": {**source, "note": "no passage graded >= 1: no call was needed"}}
        creation, importance = self.rubric(judge, "creation"), self.rubric(judge, "importance")
        texts: list[str] = []
        question = item.fields["question"]
        for n, window in enumerate(nuggets.windows(passages), start=1):
            texts = (await self.ask(item, client, limiter, creation, creation_values(question, window, texts),
                                    parsers.parse_string_list, trace,
                                    f"nugget creation, window {n}"))[:nuggets.MAX_NUGGETS]
        labels: list[str] = []
        for start, batch in batches(texts):
            labels += await self.ask(item, client, limiter, importance, batch_values(question, batch),
                                     labels_of(nuggets.IMPORTANCE, len(batch)), trace,
                                     f"nugget importance, nuggets {start + 1}-{start + len(batch)}")
        source["calls"] = len(trace.raw)
        return {"nuggets": nuggets.sort_by_importance(texts, labels), "source": source}

    async def nugget_row(self, item: Item, client: AsyncOpenAI, limiter: AdaptiveLimiter, rubric: rubrics.Rubric,
                         trace: Trace) -> tuple[parsers.Verdict, dict, list]:
        listed = await self.nugget_list(item, client, limiter, trace)
        items = listed["nuggets"]
        texts = [n["text"] for n in items]
        assignment: list[str] = []
        allowed = tuple(nuggets.ASSIGNMENT_SCORES)
        for start, batch in batches(texts):
            values = batch_values(item.fields["question"], batch, item.fields["answer"])
            assignment += await self.ask(item, client, limiter, rubric, values, labels_of(allowed, len(batch)),
                                         trace, f"nugget assignment, nuggets {start + 1}-{start + len(batch)}")
        judged = [{**n, "assignment": a} for n, a in zip(items, assignment, strict=True)]
        scores = nuggets.row_scores([n["importance"] for n in judged], assignment)
        detail = {"nuggets": judged, "list": {"status": listed["status"], "scope": listed["scope"],
                                              "revision": listed.get("revision", 1)}, "scores": scores}
        weighted = scores["nugget_weighted"]
        if weighted is None:     # (an empty list is refused where it is parsed; this keeps the score a number)
            raise StepFailed("error", "no_nuggets", "the question's nugget list is empty: nothing to score against")
        supported = sum(a == "support" for a in assignment)
        verdict = parsers.Verdict(weighted / 100.0, f"{supported}/{len(judged)} supported",
                                  f"{supported} of {len(judged)} nuggets fully supported, "
                                  f"{sum(a == 'partial_support' for a in assignment)} partly")
        subs = [{"rank": i, "score": nuggets.ASSIGNMENT_SCORES[n["assignment"]], "label": n["assignment"],
                 "rationale": f"[{n['importance']}] {n['text']}", "detail": n} for i, n in enumerate(judged, 1)]
        return verdict, detail, subs

    # --- citations ----------------------------------------------------------------------------------
    async def citation_row(self, item: Item, client: AsyncOpenAI, limiter: AdaptiveLimiter, rubric: rubrics.Rubric,
                           trace: Trace) -> tuple[parsers.Verdict, dict, list]:
        found = citations.statements(item.fields["answer"])
        passages = item.meta["passages_by_number"]
        pairs: list[dict[str, Any]] = []
        for index, number in citations.pairs(found):
            statement = found[index].text
            text = passages.get(number)
            if text is None:     # a citation of a passage that was not retrieved supports nothing
                pairs.append({"statement": index, "passage": number, "label": "no_support", "score": 0.0,
                              "note": f"cites [{number}], which is not among the retrieved passages"})
                continue
            verdict = await self.ask(item, client, limiter, rubric, {"statement": statement, "citation": text},
                                     lambda reply: parsers.parse_citation_support(reply, 0, 1), trace,
                                     f"sentence {index + 1} against passage [{number}]")
            pairs.append({"statement": index, "passage": number, "label": verdict.label, "score": verdict.score})
        scores = citations.row_scores(len(found), [(p["statement"], p["score"]) for p in pairs])
        detail = {"statements": [{"text": s.text, "cites": list(s.cites)} for s in found], "pairs": pairs,
                  "scores": scores}
        if scores["citation_f1"] is None:
            raise StepFailed("error", "no_statements", "the answer has no sentence to check")
        f1 = scores["citation_f1"] / 100.0
        verdict = parsers.Verdict(f1, f"{len(pairs)} citations", f"{len(found)} sentences, {len(pairs)} citations")
        subs = [{"rank": i, "score": p["score"], "label": p["label"],
                 "rationale": citations.pair_key(p["passage"], found[p["statement"]].text), "detail": p}
                for i, p in enumerate(pairs, 1)]
        return verdict, detail, subs


def creation_values(question: str, window: list[tuple[int, str]], so_far: list[str]) -> dict[str, str]:
    """A creation prompt's fields: the window's passages numbered, the list so far (the job and its dry run alike)."""
    return {"question": question, "contexts": nuggets.numbered(window),
            "nuggets": json.dumps(so_far, ensure_ascii=False), "count": str(len(so_far))}


def batches(texts: list[str]) -> list[tuple[int, list[str]]]:
    return [(start, texts[start:start + nuggets.BATCH]) for start in range(0, len(texts), nuggets.BATCH)]


def helper_rubric(conn: sqlite3.Connection,
                  judge: Judge, role: str, cache: dict[tuple[int, str], rubrics.Rubric]) -> rubrics.Rubric:
    """A nugget judge's creation or importance rubric (stored with the judge), loaded once."""
    if (judge.id, role) not in cache:
        cache[(judge.id, role)] = rubrics.load(conn, judge.params[f"{role}_rubric_id"])
    return cache[(judge.id, role)]


def labels_of(allowed: tuple[str, ...], count: int) -> Callable[[str], list[str]]:
    """The parser of one batch's reply: exactly `count` labels from `allowed`."""
    return lambda text: parsers.parse_label_list(text, allowed, count)


def sub_key(item: Item, rank: int) -> str:
    """The idempotency key of a sub-judgment: the row's key and the position."""
    return idem_key(item.judge, item.run_row_id, rank) + f":{item.idem_key[:16]}"


def prepare(project: Project, items: list[Item]) -> None:
    """Fill in what the multi-call judges need, just before they run (after the passage graders of the same job
    ran): the passages graded relevant for nugget creation, and the passages a citation number names."""
    conn = project.reader()
    passages = _listed_passages(conn, sorted({i.run_row_id for i in items if i.judge.spec.items}))
    graders: dict[int, Judge | None] = {}
    for item in items:
        judge = item.judge
        listed = passages.get(item.run_row_id, [])
        if judge.spec.items == "citation":
            item.meta["passages_by_number"] = citations.by_number(listed)
        elif judge.spec.items == "nugget" and not item.meta.get("golden_list"):
            if judge.id not in graders:
                graders[judge.id] = _grader(project, judge)
            _relevant_passages(conn, item, listed, graders[judge.id])


def _listed_passages(conn: sqlite3.Connection, rows: list[int]) -> dict[int, list[tuple[int, str | None, str]]]:
    """Each row's retrieved passages as (rank, chunk id, text), the corpus's text where the run gave none."""
    passages: dict[int, list[tuple[int, str | None, str]]] = {}
    for start in range(0, len(rows), 500):
        chunk = rows[start:start + 500]
        for rid, rank, chunk_id, text, chunk_text in conn.execute(
                f"SELECT p.run_row_id, p.rank, p.chunk_id, p.text, c.text FROM retrieved_passages p LEFT JOIN "
                f"corpus_chunks c ON c.chunk_id = p.chunk_id WHERE p.run_row_id IN ({','.join('?' * len(chunk))}) "
                f"ORDER BY p.run_row_id, p.rank", chunk):
            passages.setdefault(rid, []).append((rank, chunk_id, text if text is not None else (chunk_text or "")))
    return passages


def _grader(project: Project, judge: Judge) -> Judge | None:
    """The passage grader (UMBRELA) a nugget judge reads: the one it names, else the project's active one."""
    name = judge.params.get("grader")
    if name:
        return get_judge(project, name)
    return next((j for j in list_judges(project) if j.metric == "passage_relevance" and j.status == "active"), None)


def _relevant_passages(conn: sqlite3.Connection, item: Item, listed: list[tuple[int, str | None, str]],
                       grader: Judge | None) -> None:
    """The passages nugget creation reads (`relevant_passages`): those its grader graded relevant; every passage
    when there is no grader; None, with why (`grades_note`), when the grader is retired or has not graded them."""
    if grader is not None and grader.status != "active":   # a retired grader no longer counts anywhere
        item.meta["relevant_passages"] = None
        item.meta["grades_note"] = (f"the grader '{grader.name}' is retired: its passage grades no longer count; "
                                    f"give the nugget judge an active UMBRELA judge")
        return
    if grader is None:
        item.meta.update(relevant_passages=[(rank, text) for rank, _, text in listed if text.strip()], grader=None)
        return
    grades = dict(conn.execute(
        "SELECT passage_rank, score FROM judgments WHERE judge_id = ? AND run_row_id = ? AND status = 'ok' "
        "AND passage_rank >= 1 ORDER BY id", (grader.id, item.run_row_id)))
    item.meta["grader"] = grader.name
    if not grades:
        item.meta["relevant_passages"] = None
        item.meta["grades_note"] = (f"the passages of this row have no grade from '{grader.name}' (UMBRELA): "
                                    f"run that judge on this run first, or in the same job")
        return
    item.meta["relevant_passages"] = [(rank, text) for rank, _, text in listed
                                      if grades.get(rank, 0) >= 1 and text.strip()]


Calls = list[tuple[list[dict], str]]       # (messages, a typical reply) per call


def planned_calls(project: Project, items: list[Item]) -> dict[str, Calls]:
    """For the dry run: the calls each multi-call row would send, as (messages, a typical reply), by item key.
    Citation calls are exact (sentences and passages are known). A nugget list not made yet is assumed to hold one
    nugget per passage graded relevant (ungraded passages count as relevant), as long as its first 12 words —
    creation is then counted window by window, importance and assignment batch by batch. Curated and stored lists
    are exact."""
    prepare(project, items)
    conn = project.reader()
    out: dict[str, Calls] = {}
    made: set[tuple[str, str]] = set()
    helpers: dict[tuple[int, str], rubrics.Rubric] = {}
    for item in items:
        judge = item.judge
        rubric = rubrics.load(conn, judge.rubric_key)
        if judge.spec.items == "citation":
            out[item.idem_key] = _citation_calls(item, rubric)
            continue
        calls: Calls = []
        key = (item.meta["question_key"], nugget_store.run_scope(item.meta["run_id"], judge.id))
        listed = item.meta.get("golden_list") or nugget_store.stored_list(project, *key, judge_id=judge.id)
        if listed is None:
            listed = _list_made(conn, item, key, made, helpers, calls)
        names = [n["text"] for n in listed["nuggets"]]
        for _, batch in batches(names):
            calls.append((rubric.render(batch_values(item.fields["question"], batch, item.fields["answer"])),
                          json.dumps(["not_support"] * len(batch))))
        out[item.idem_key] = calls
    return out


def _citation_calls(item: Item, rubric: rubrics.Rubric) -> Calls:
    """One call per (statement, cited passage) pair whose number names a passage."""
    found = citations.statements(item.fields["answer"])
    passages = item.meta["passages_by_number"]
    return [(rubric.render({"statement": found[index].text, "citation": passages[number]}), "partial_support")
            for index, number in citations.pairs(found) if number in passages]


def _list_made(conn: sqlite3.Connection, item: Item, key: tuple[str, str], made: set[tuple[str, str]],
               helpers: dict[tuple[int, str], rubrics.Rubric], calls: Calls) -> dict[str, list[dict[str, str]]]:
    """A nugget list not made yet, as the dry run assumes it: one nugget per relevant passage (its first 12 words);
    its creation and importance calls are added to `calls` for the first row of its question (`key` not yet in
    `made`, which then holds it)."""
    relevant = item.meta.get("relevant_passages")
    if relevant is None:   # not graded yet (the grader runs first in the same job): assume all relevant
        relevant = _all_passages(conn, item.run_row_id)
    texts = [" ".join(t.split()[:12]).rstrip(".") for _, t in relevant][:nuggets.MAX_NUGGETS]
    if key not in made and texts:
        made.add(key)
        so_far: list[str] = []
        creation = helper_rubric(conn, item.judge, "creation", helpers)
        for window in nuggets.windows(relevant):
            prompt = creation.render(creation_values(item.fields["question"], window, so_far))
            so_far = texts[:len(so_far) + len(window)]
            calls.append((prompt, json.dumps(so_far, ensure_ascii=False)))
        importance = helper_rubric(conn, item.judge, "importance", helpers)
        for _, batch in batches(texts):
            calls.append((importance.render(batch_values(item.fields["question"], batch)),
                          json.dumps(["vital"] * len(batch))))
    return {"nuggets": [{"text": t} for t in texts[:nuggets.KEEP]] or [{"text": nuggets.NO_ANSWER_NUGGET}]}


def _all_passages(conn: sqlite3.Connection, row_id: int) -> list[tuple[int, str]]:
    return [(r, t) for r, t in conn.execute(
        "SELECT p.rank, COALESCE(p.text, c.text, '') FROM retrieved_passages p LEFT JOIN corpus_chunks c ON "
        "c.chunk_id = p.chunk_id WHERE p.run_row_id = ? ORDER BY p.rank", (row_id,)) if t.strip()]
