"""One step of a judgment: a call, its parse, and one counted repair retry — shared by single-call judges
(judge_job.judge_one) and the multi-call chains (chains.py), so both ask, repair, cache and count alike.

A reply that still does not parse raises StepFailed('unparsed'); a call that ended as an error (already recorded
by the job) or a job that is stopping raises Gone. Nothing here invents a score.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from rageval_desktop.core.judges import parsers, prices, rubrics

if TYPE_CHECKING:
    from openai import AsyncOpenAI

    from rageval_desktop.core.base.limiter import AdaptiveLimiter
    from rageval_desktop.core.jobs.judge_job import JudgeJob
    from rageval_desktop.core.jobs.work import Item
    from rageval_desktop.core.judges.llm import Reply

T = TypeVar("T")

REMINDER = "reply to the format reminder"


class StepFailed(Exception):
    """A step's reply did not parse (status 'unparsed') or the row cannot be judged (status 'error')."""

    def __init__(self, status: str, kind: str, note: str) -> None:
        super().__init__(note)
        self.status, self.kind, self.note = status, kind, note


class Gone(Exception):
    """A call ended as an error the job already recorded for the row, or the job is stopping."""


@dataclass
class Trace:
    """What a row's calls add up to, recorded on its judgment."""
    raw: list[str] = field(default_factory=list)
    attempts: int = 0
    repairs: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    latency_ms: float = 0.0
    cost: float = 0.0
    all_hits: bool = True
    caches: list[dict[str, Any]] = field(default_factory=list)
    request_id: str | None = None
    confidence: float | None = None      # from the reply's log-probabilities, when the judge asks for them
    tokens_stated: bool = True           # every reply said what it used (else the tokens are unknown: NULL)
    estimated: int = 0                   # paid replies that stated no usage: their cost is estimated from their length

    def take(self, label: str, reply: Reply, hit: bool, attempts: int,
             price: tuple[tuple[float, float] | None, tuple[float, float] | None], cache: dict | None,
             messages: list[dict]) -> None:
        self.raw.append(f"--- {label} ---\n{reply.content}" if label else reply.content)
        self.attempts += attempts
        self.tokens_stated = self.tokens_stated and reply.prompt_tokens is not None
        self.tokens_in += reply.prompt_tokens or 0
        self.tokens_out += reply.completion_tokens or 0
        self.latency_ms += reply.latency_ms
        self.all_hits = self.all_hits and hit
        if not hit:   # `price`: (live, batch) — a reply from a batch is priced at the batch price
            rate = price[1] if getattr(reply, "batch_job", None) is not None else price[0]
            cost, estimated = prices.reply_cost(rate, reply, messages)
            self.cost += cost or 0.0
            self.estimated += estimated
        if cache:
            self.caches.append(cache)
        self.request_id = reply.request_id or self.request_id

    def record_args(self) -> dict[str, Any]:
        """The accounting part of JudgeJob.record's arguments."""
        return {"raw": "\n\n".join(self.raw) or None, "attempts": self.attempts, "repairs": self.repairs,
                "latency_ms": self.latency_ms, "prompt_tokens": self.tokens_in if self.tokens_stated else None,
                "completion_tokens": self.tokens_out if self.tokens_stated else None, "usage_estimated": self.estimated,
                "cost": 0.0 if self.all_hits else self.cost, "request_id": self.request_id,
                "cache_hit": bool(self.raw) and self.all_hits, "caches": tuple(self.caches),
                "confidence": self.confidence}


async def ask(job: JudgeJob, item: Item, client: AsyncOpenAI, limiter: AdaptiveLimiter, rubric: rubrics.Rubric,
              values: dict[str, str], parse: Callable[[str], T], trace: Trace, step: str = "",
              ticket: int | None = None) -> T:
    """Render `rubric` with `values`, call, parse; on a ParseError one repair retry with the format reminder.
    `step` names the step in the raw replies and the failure ('' for a judge with a single step); `ticket` is a
    limiter slot the caller already holds (the first call uses it)."""
    messages = rubric.render(values)
    params = item.judge.request_params()
    price = (job.price(item.judge.model), job.price(item.judge.model, batch=True))
    first = await job.call(item, client, limiter, messages, params, ticket=ticket)
    if first is None:
        raise Gone()
    reply, hit, attempts = first
    trace.take(step, reply, hit, attempts, price, job.cache_row(item, messages, params, reply, hit), messages)
    try:
        return _sure(parse(reply.content), reply, item, params, trace, step)
    except parsers.ParseError as first_error:
        if job.spec.offline:            # an outside engine's reply: no repair request (nothing is called)
            raise StepFailed("unparsed", step or "unparsed", f"did not parse: {first_error}") from None
        repair = [*messages, {"role": "assistant", "content": reply.content},
                  {"role": "user", "content": "Your reply did not follow the required format ("
                   f"{first_error}). {parsers.FORMAT_REMINDERS[rubric.output_format]}"}]
        second = await job.call(item, client, limiter, repair, params)
        if second is None:
            raise Gone() from None
        again, hit2, attempts2 = second
        trace.repairs += 1
        trace.take(f"{step} ({REMINDER})" if step else REMINDER, again, hit2, attempts2, price,
                   job.cache_row(item, repair, params, again, hit2), repair)
        try:
            return _sure(parse(again.content), again, item, params, trace, step)
        except parsers.ParseError as second_error:
            note = f"did not parse: {first_error}; after the reminder: {second_error}"
            raise StepFailed("unparsed", step or "unparsed", f"{step}: {note}" if step else note) from None


def _sure(found: T, reply: Reply, item: Item, params: dict[str, Any], trace: Trace, step: str) -> T:
    """A single-call judge that asked for log-probabilities: its verdict's confidence, kept on the trace."""
    mark = item.judge.spec.pass_mark
    if params.get("logprobs") and not step and isinstance(found, parsers.Verdict) and mark is not None:
        spec = item.judge.spec
        trace.confidence = parsers.logprob_confidence(reply.logprobs, found, spec.low, spec.high, mark)
    return found
