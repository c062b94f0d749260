"""Calls through one LLM judge's endpoint outside a judge job (synthesis, alignment), on the engine's parts: the
adaptive limiter, bounded retries, the price table and the project's exact-match request cache — a reply already
paid for is read back, a new one is stored as soon as it arrives, so a re-run after an interruption (or the same
check run twice) repeats no call."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from typing import Any

from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.base.limiter import AdaptiveLimiter
from rageval_desktop.core.base.text import inert_text
from rageval_desktop.core.judges import llm, prices
from rageval_desktop.core.judges.judge import Judge
from rageval_desktop.core.judges.registry import get_judge
from rageval_desktop.core.judges.secrets import Scrubber, resolve_api_key
from rageval_desktop.core.store.changes import Area
from rageval_desktop.core.store.project import Project


class CachedCaller:
    """`async with CachedCaller(...) as caller: reply = await caller.call(messages)` — None when the call failed
    or the caller is stopping. Counts calls, cache hits, tokens and cost; the first fatal failure (`fatal`) stops
    every later call, as does `cancelled()`."""

    def __init__(self, project: Project, judge: Judge, params: dict[str, Any], retries: int,
                 cancelled: Callable[[], bool] = lambda: False) -> None:
        self.project, self.judge, self.params, self.retries, self.cancelled = project, judge, params, retries, cancelled
        self.price = prices.price(project, judge.model)
        self.timeout = float(judge.param("timeout"))
        self.calls = self.cache_hits = self.prompt_tokens = self.completion_tokens = 0
        self.cost_usd = 0.0
        self.usage_estimated = 0      # replies that stated no token usage: their cost is estimated from their length
        self.fatal: str | None = None
        self.silence = llm.Silence()    # is the endpoint answering
        self._client: Any = None
        self._limiter: Any = None
        self.scrub = Scrubber()

    async def __aenter__(self) -> CachedCaller:

        key = resolve_api_key(self.judge.api_key_ref)
        self.scrub = Scrubber([key] if key else [])
        self._client = llm.make_client(self.judge.base_url, key, self.timeout)
        self._limiter = AdaptiveLimiter(self.judge.param("concurrency"), self.judge.param("rpm"))
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._client.close()
        if self.silence.never() and not self.stopping():   # fewer calls than llm.UNREACHABLE, none answered
            self.fatal = self.scrub(llm.unreachable(self.judge.name, self.judge.base_url, self.silence.run))

    def stopping(self) -> bool:
        return bool(self.fatal) or self.cancelled()

    async def call(self, messages: list[dict]) -> llm.Reply | None:
        key = llm.cache_key(self.judge.base_url, self.judge.model or "", messages, self.params)
        hit = llm.cached(self.project.reader(), key)
        if hit:
            self.cache_hits += 1
            return hit

        def count() -> None:
            self.calls += 1

        try:
            reply, _ = await llm.call_with_retries(self._client, self._limiter, self.judge.model or "", messages,
                                                   self.params, self.timeout, self.retries, stopping=self.stopping,
                                                   on_call=count)
        except llm.Stopped:
            return None
        except llm.CallFailed as failure:
            if failure.fatal:
                self.fatal = self.fatal or self.scrub(str(failure))
            elif self.silence.failed(failure):
                self.fatal = self.fatal or self.scrub(
                    llm.unreachable(self.judge.name, self.judge.base_url, self.silence.run, failure))
            return None
        self.silence.heard()
        self.prompt_tokens += reply.prompt_tokens or 0
        self.completion_tokens += reply.completion_tokens or 0
        cost, estimated = prices.reply_cost(self.price, reply, messages)
        self.cost_usd += cost or 0.0
        self.usage_estimated += estimated
        entry = llm.cache_entry(key, self.judge.model, reply, self.scrub)
        await asyncio.to_thread(self._store, entry)
        stored: llm.Reply = dataclasses.replace(reply, content=entry["content"], request_id=entry["request_id"])
        return stored

    def _store(self, entry: dict[str, Any]) -> None:
        with self.project.write("cache request", changed=(Area.CACHES,)) as conn:
            conn.execute(llm.CACHE_INSERT, entry)


@dataclasses.dataclass
class Connection:
    """What a connection check found: the endpoint, and how its model answered (a local judge has none)."""

    judge: str
    model: str | None
    local: bool
    endpoint: str | None = None
    latency_ms: float | None = None
    reply: str | None = None
    usage_stated: bool | None = None    # the reply said how many tokens it used (else costs are estimated)

    def describe(self) -> str:
        if self.local:
            return f"{self.judge} runs locally: nothing to connect to."
        usage = "" if self.usage_stated is not False else (
            f" It states no token usage: a job's cost will be estimated from the text's length "
            f"({prices.CHARS_PER_TOKEN} characters a token), and a budget kept against that estimate.")
        return (f"Connected: {self.model} answered in {self.latency_ms or 0:.0f} ms ({self.reply!r}), "
                f"at {self.endpoint}.{usage}")


def check_connection(project: Project, name: str, timeout: float = 30.0) -> Connection:
    """One tiny call through a judge's endpoint, outside any job and the request cache (nothing is stored; five
    tokens at most): whether its address, model and key work. Raises RagevalError saying why not, with the key
    scrubbed from whatever the server said."""
    judge = get_judge(project, name)
    found = Connection(judge.name, judge.model, local=not judge.calls_llm)
    if found.local:
        return found
    found.endpoint = llm.endpoint_label(judge.base_url)
    key = resolve_api_key(judge.api_key_ref)
    scrub = Scrubber([key] if key else [])

    async def call() -> llm.Reply:
        client = llm.make_client(judge.base_url, key, timeout)
        try:
            return await llm.chat(client, judge.model or "", [{"role": "user", "content": "Reply with: OK"}],
                                  {"temperature": 0.0, "max_tokens": 5}, timeout)
        finally:
            await client.close()

    try:
        reply = asyncio.run(call())
    except llm.CallFailed as failure:
        said = str(failure).rstrip(". ")
        raise RagevalError(scrub(f"judge '{judge.name}' (model {judge.model}, {found.endpoint}): {said}"),
                           cli_hint="check the address, model and key with rageval judges edit",
                           gui_hint="check the address, model and key with Edit…") from None
    found.latency_ms = reply.latency_ms
    found.reply = inert_text(scrub(reply.content.strip()[:40]))
    found.usage_stated = reply.prompt_tokens is not None
    return found
