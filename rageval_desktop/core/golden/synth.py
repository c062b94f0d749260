"""Synthetic golden rows, the HF cookbook's pipeline: generate question-answer pairs from sampled corpus chunks,
run three critique agents (groundedness, relevance, standalone; rationale first, 1-5), keep the pairs at or
above every threshold, and queue the survivors as draft golden rows (gold chunk = their source chunk).

It runs on the judging engine's parts: an LLM judge's endpoint, the adaptive limiter, bounded retries, the
project's exact-match request cache (a re-run after an interruption makes no repeated calls) and the price table.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from rageval_desktop.core.base.context import TaskContext
from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.base.paths import resources_dir
from rageval_desktop.core.golden.edits import GoldenInvalid, add_row
from rageval_desktop.core.judges import parsers, prices, rubrics
from rageval_desktop.core.judges.caller import CachedCaller
from rageval_desktop.core.judges.registry import get_judge
from rageval_desktop.core.store import records
from rageval_desktop.core.store.project import Project

CRITIQUES = {"groundedness": "critique_groundedness", "relevance": "critique_relevance",
             "standalone": "critique_standalone"}


@dataclass
class SynthSpec:
    n: int                                   # chunks to sample
    judge: str                               # an LLM judge: its endpoint and model write and critique
    style: str = "factoid"                   # factoid (cookbook) | snippets (3-5 questions with exact snippets)
    thresholds: dict[str, float] = field(default_factory=lambda: {k: 4.0 for k in CRITIQUES})
    seed: int = 0
    slice_tag: str | None = None
    max_retries: int = 3


@dataclass
class SynthStats:
    chunks: int = 0
    candidates: int = 0
    kept: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    drafts: list[str] = field(default_factory=list)
    calls: int = 0
    cache_hits: int = 0
    cost_usd: float = 0.0
    usage_estimated: int = 0    # replies that stated no token usage: their cost is estimated from their length
    seconds: float = 0.0
    stopped: str | None = None
    message: str | None = None

    def usage_note(self) -> str | None:
        return prices.estimated_note(self.usage_estimated)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def prompt(style: str, context: str) -> list[dict[str, str]]:
    import string

    name = {"factoid": "qa_factoid.txt", "snippets": "qa_snippets.txt"}.get(style)
    if name is None:
        raise RagevalError("style is factoid or snippets")
    template = (resources_dir() / "prompts" / name).read_text(encoding="utf-8")
    return [{"role": "user", "content": string.Template(template).substitute(context=context)}]


def parse_generation(style: str, text: str, chunk: str) -> list[dict[str, str]]:
    """Candidates as {question, answer}; snippets must be exact quotes of the chunk."""
    if style == "factoid":
        m = re.search(r"Factoid question:\s*(.+?)\s*Answer:\s*(.+)", text, re.S | re.I)
        if not m:
            raise parsers.ParseError("no 'Factoid question: … Answer: …'")
        question, answer = m.group(1).strip(), m.group(2).strip()
        if len(answer) >= 300:
            raise parsers.ParseError("the answer is too long for a factoid (300 characters or more)")
        return [{"question": question, "answer": answer}]
    start, end = text.find("["), text.rfind("]")
    try:
        items = json.loads(text[start:end + 1]) if start != -1 and end > start else None
    except json.JSONDecodeError:
        items = None
    if not isinstance(items, list):
        raise parsers.ParseError("no JSON array of questions")
    out = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("question"), str) and \
                isinstance(item.get("ground_truth_source"), str):
            out.append({"question": item["question"].strip(), "answer": item["ground_truth_source"].strip(),
                        "snippet_found": item["ground_truth_source"].strip() in chunk})
    if not out:
        raise parsers.ParseError("no {question, ground_truth_source} objects")
    return out


class Synth:
    def __init__(self, project: Project, spec: SynthSpec, ctx: TaskContext) -> None:
        self.project, self.spec, self.ctx = project, spec, ctx
        self.judge = get_judge(project, spec.judge)
        if not self.judge.calls_llm:
            raise RagevalError(f"'{spec.judge}' is not an LLM judge; synthesis needs an endpoint and a model")
        self.stats = SynthStats()
        params = {"temperature": self.judge.param("temperature"), "max_tokens": 1024, "seed": self.judge.param("seed")}
        self.caller = CachedCaller(project, self.judge, params, spec.max_retries, cancelled=lambda: ctx.cancelled)
        lib = rubrics.library()
        self.critiques = {k: lib[v] for k, v in CRITIQUES.items()}

    def chunks(self) -> list[tuple[str, str]]:
        rows = self.project.reader().execute("SELECT chunk_id, text FROM corpus_chunks ORDER BY chunk_id").fetchall()
        if not rows:
            raise RagevalError("the corpus is empty: import documents first (rageval corpus import)")
        return random.Random(self.spec.seed).sample(rows, min(self.spec.n, len(rows)))

    async def call(self, messages: list[dict]) -> str | None:
        reply = await self.caller.call(messages)
        return None if reply is None else reply.content

    def reject(self, why: str) -> None:
        self.stats.rejected[why] = self.stats.rejected.get(why, 0) + 1

    async def one_chunk(self, chunk_id: str, text: str) -> None:
        reply = await self.call(prompt(self.spec.style, text))
        if reply is None:
            self.reject("generation failed")
            return
        try:
            candidates = parse_generation(self.spec.style, reply, text)
        except parsers.ParseError:
            self.reject("generation did not parse")
            return
        for cand in candidates:
            self.stats.candidates += 1
            if cand.get("snippet_found") is False:
                self.reject("snippet not in the chunk")
                continue
            await self.critique(chunk_id, text, cand)

    async def critique(self, chunk_id: str, text: str, cand: dict[str, Any]) -> None:
        fields = {"question": cand["question"], "context": text}
        replies = await asyncio.gather(*(self.call(r.render(fields))
                                         for r in self.critiques.values()))
        scores: dict[str, float] = {}
        evaluations: dict[str, str | None] = {}
        for (name, rubric), reply in zip(self.critiques.items(), replies, strict=True):
            try:
                verdict = parsers.parse("total_rating", reply, rubric.scale_min, rubric.scale_max)
            except parsers.ParseError:
                self.reject(f"{name} critique did not parse")
                return
            scores[name], evaluations[name] = verdict.score, verdict.rationale
        low = [k for k, v in scores.items() if v < self.spec.thresholds.get(k, 4.0)]
        if low:
            self.reject("below threshold: " + ", ".join(low))
            return
        meta = {"synthetic": {"chunk_id": chunk_id, "style": self.spec.style, "model": self.judge.model,
                              "scores": scores, "evaluations": evaluations}}
        try:
            row = await asyncio.to_thread(add_row, self.project, cand["question"], gold_answer=cand["answer"],
                                          gold_chunk_ids=[chunk_id], slice_tag=self.spec.slice_tag,
                                          source="synthetic", status="draft",
                                          reason=f"generated from {chunk_id}; critiques {scores}", metadata=meta)
        except GoldenInvalid:
            self.reject("already in the golden set")
            return
        self.stats.kept += 1
        self.stats.drafts.append(row["id"])

    async def main(self) -> None:
        chunks = self.chunks()
        self.stats.chunks = len(chunks)
        done = 0

        async def run(chunk: tuple[str, str]) -> None:
            nonlocal done
            await self.one_chunk(chunk[0], chunk[1])
            done += 1
            self.ctx.report(done, len(chunks), f"{self.stats.kept} kept of {self.stats.candidates} candidates")

        async with self.caller:
            await asyncio.gather(*(run(c) for c in chunks))

    def run(self) -> SynthStats:
        started = time.monotonic()
        job = records.start(self.project, "synth", asdict(self.spec), self.spec.n)
        try:
            asyncio.run(self.main())
        except BaseException as exc:
            records.finish(self.project, job, "failed", f"{type(exc).__name__}: {exc}")
            raise
        self.stats.seconds = round(time.monotonic() - started, 2)
        caller = self.caller
        self.stats.calls, self.stats.cache_hits, self.stats.cost_usd = caller.calls, caller.cache_hits, caller.cost_usd
        self.stats.usage_estimated = caller.usage_estimated
        if caller.fatal:
            self.stats.stopped, self.stats.message = "fatal", caller.fatal
        elif self.ctx.cancelled:
            self.stats.stopped = "cancelled"
        records.finish(self.project, job, "failed" if caller.fatal else "cancelled" if self.ctx.cancelled else "done",
                       caller.fatal or f"{self.stats.kept} drafts from {self.stats.candidates} candidates")
        return self.stats


def run_synth(project: Project, spec: SynthSpec, ctx: TaskContext | None = None) -> SynthStats:
    return Synth(project, spec, ctx or TaskContext()).run()
