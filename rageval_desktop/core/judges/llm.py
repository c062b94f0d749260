"""One chat call through openai's AsyncOpenAI, with every failure turned into a kind the job can act on."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.base.imports import import_frozen
from rageval_desktop.core.base.limiter import PAUSE_MAX_S
from rageval_desktop.core.judges.secrets import safe_endpoint

if TYPE_CHECKING:   # imported where a call is made: a job with nothing to send never loads the client (~0.4 s)
    import openai


_PRELOAD: Any = None      # the thread importing the client library ahead (preload), once started


def preload() -> None:
    """Import the client library on a thread of its own, now: a job that will call a model starts its calls that much
    sooner (the import took 0.4-0.9 s, and it overlaps opening the project and planning the rows)."""
    import sys
    import threading

    global _PRELOAD
    if "openai" not in sys.modules and _PRELOAD is None:
        _PRELOAD = threading.Thread(target=_import_quietly, name="import-openai", daemon=True)
        _PRELOAD.start()


def _import_quietly() -> None:
    try:
        import_frozen("openai")   # (the cycle collector paused: core.base.imports)
    except Exception:  # said where the client is made (client_library), in the job's words
        pass


def client_library() -> Any:
    """The openai module, imported once the preload (if one runs) has finished. Two threads importing it at once
    could fail: Python hands the second a half-initialised module rather than wait in what looks like a deadlock,
    and pydantic's lazy attributes then raised 'cannot import name ... from partially initialized module' (seen
    while benchmarking GUI judge jobs, which then failed at once). An import the preload could not finish is tried
    again here."""
    import threading

    thread = _PRELOAD
    if thread is not None and thread is not threading.current_thread():
        thread.join()
    return import_frozen("openai")


@dataclass
class Reply:
    content: str
    prompt_tokens: int | None
    completion_tokens: int | None
    request_id: str | None
    latency_ms: float
    batch_job: int | None = None   # from the cache: the batch job whose reply this is (priced at batch rates)
    logprobs: list | None = None   # asked for: each reply token [text, logprob, [[alternative, logprob], ...]]


class CallFailed(Exception):
    """kind: short machine name; retryable: worth another try; fatal: stop the whole job."""

    def __init__(self, kind: str, message: str, *, retryable: bool = False, fatal: bool = False,
                 retry_after: float | None = None, overload: bool = False) -> None:
        super().__init__(message)
        self.kind, self.retryable, self.fatal = kind, retryable, fatal
        self.retry_after, self.overload = retry_after, overload


DEFAULT_BASE_URL = "https://api.openai.com/v1"    # the client library's own default


def resolved_base_url(base_url: str | None) -> str | None:
    """Where a judge's calls go: its base URL, else OPENAI_BASE_URL as the client library would read it; None for
    the library's default. Every client is made with it, and the cache key and the judge's fingerprint name it (a
    judge without a base URL used to follow the environment to another server without a trace)."""
    return base_url or os.environ.get("OPENAI_BASE_URL", "").strip() or None


def endpoint_label(base_url: str | None) -> str:
    """The resolved endpoint as it may be recorded and shown (no credentials, no query)."""
    return safe_endpoint(resolved_base_url(base_url) or DEFAULT_BASE_URL)


MAX_COUNT = 2**31 - 1    # no reply states more tokens or requests than this


def stated_count(value: object) -> int | None:
    """A count as a server states it — tokens, requests (None when it is not a count: not a whole number, negative, or
    larger than any reply holds; SQLite could not even store the 2**70 a hostile server sent)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT else None


MAX_REPLY = 1_000_000    # characters of a reply kept at most: a verdict with its reasoning is far shorter


def too_long(size: int) -> str:
    return (f"the reply is {size:,} characters, more than the {MAX_REPLY:,} a judge's verdict may take (a server "
            "gone astray): not kept")


UNREACHABLE = 5     # rows (or calls) in a row that got no answer from their endpoint, retries spent: the work stops
SILENT = ("connection", "timeout")   # failures that mean the endpoint did not answer at all (down, hung, wrong address)


def unreachable(judge: str, base_url: str | None, count: int, failure: CallFailed | None = None) -> str:
    """Why work stops when a judge's endpoint cannot be reached (a server down or hung, a wrong address): what got no
    answer was never paid for, and is done again by the next run."""
    said = f" ({str(failure).rstrip('. ')})" if failure is not None else ""
    return (f"judge '{judge}' cannot reach its endpoint {endpoint_label(base_url)}: {count} request(s) in a row got "
            f"no answer, each after its retries{said}. Check the address (Test connection on the Judges page, or "
            f"rageval judges test PROJECT --name {judge}) and run it again when it answers (Resume, or the same "
            "command): it goes on where it stopped")


class Silence:
    """Whether an endpoint is answering, from the outcomes of the requests sent it, retries spent: the work stops
    after UNREACHABLE in a row got no answer (`failed` says so), or at its end when none ever did (`never`)."""

    def __init__(self) -> None:
        self.run = 0               # requests in a row that got no answer
        self.answered = False

    def heard(self) -> None:
        self.run, self.answered = 0, True

    def failed(self, failure: CallFailed) -> bool:
        if failure.kind not in SILENT:      # the endpoint answered, with an error
            self.heard()
            return False
        self.run += 1
        return self.run >= UNREACHABLE

    def never(self) -> bool:
        return self.run > 0 and not self.answered


def make_client(base_url: str | None, api_key: str, timeout: float) -> openai.AsyncOpenAI:
    library = client_library()
    # retries are ours (bounded, with jitter, adaptive); the client's own would hide 429s from the limiter
    client: openai.AsyncOpenAI = library.AsyncOpenAI(base_url=resolved_base_url(base_url) or DEFAULT_BASE_URL,
                                                     api_key=api_key, timeout=timeout, max_retries=0)
    return client


def cache_key(base_url: str | None, model: str | None, messages: list[dict], params: dict[str, Any]) -> str:
    """The request cache's key: the endpoint as resolved (so replies from OPENAI_BASE_URL's server are never
    served for another; a judge on the library's default keeps the keys it always had), model, messages, params."""
    blob = json.dumps({"base_url": resolved_base_url(base_url) or "", "model": model, "messages": messages,
                       "params": params}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _retry_after(exc: openai.APIStatusError) -> float | None:
    headers = exc.response.headers if exc.response is not None else {}
    for name, scale in (("retry-after-ms", 1e-3), ("retry-after", 1.0)):
        value = headers.get(name)
        if value:
            try:
                return max(0.0, float(value) * scale)
            except ValueError:
                continue  # an HTTP date: fall back to our own backoff
    return None


def classify(exc: BaseException, model: str, timeout: float) -> CallFailed:
    """An exception from openai's client as a failure the job can act on (retry, stop, record)."""
    import openai

    if isinstance(exc, CallFailed):
        return exc
    if isinstance(exc, openai.AuthenticationError):
        return CallFailed("auth", f"the endpoint refused the API key (401): {_short(exc)}", fatal=True)
    if isinstance(exc, openai.PermissionDeniedError):
        return CallFailed("forbidden", f"the endpoint refused access (403): {_short(exc)}", fatal=True)
    if isinstance(exc, openai.NotFoundError):
        return CallFailed("model_not_found", f"model '{model}' was not found at the endpoint (404): {_short(exc)}",
                          fatal=True)
    if isinstance(exc, openai.RateLimitError):
        if exc.code == "insufficient_quota" or "insufficient_quota" in str(exc):
            return CallFailed("quota", f"the account has no quota left (429 insufficient_quota): {_short(exc)}",
                              fatal=True)
        return CallFailed("rate_limit", "rate limited (429)", retryable=True, retry_after=_retry_after(exc),
                          overload=True)
    if isinstance(exc, openai.APITimeoutError):
        return CallFailed("timeout", f"no reply within {timeout:g} s", retryable=True, overload=True)
    if isinstance(exc, openai.APIConnectionError):
        return CallFailed("connection", f"cannot reach the endpoint: {_short(exc)}", retryable=True)
    if isinstance(exc, openai.InternalServerError):
        return CallFailed("server_error", f"server error ({exc.status_code})", retryable=True,
                          retry_after=_retry_after(exc))
    if isinstance(exc, openai.BadRequestError):
        return CallFailed("bad_request", f"the endpoint rejected the request (400): {_short(exc)}")
    if isinstance(exc, openai.APIStatusError):
        return CallFailed(f"http_{exc.status_code}", f"HTTP {exc.status_code}: {_short(exc)}",
                          retryable=exc.status_code in (408, 409, 425))
    if isinstance(exc, (openai.APIResponseValidationError, json.JSONDecodeError, ValueError)):
        return CallFailed("bad_response", f"the endpoint's reply is not what was asked for: {_short(exc)}",
                          retryable=True)
    return CallFailed("internal", f"{type(exc).__name__}: {exc}")


async def chat(client: openai.AsyncOpenAI, model: str, messages: list[Any], params: dict[str, Any],
               timeout: float) -> Reply:
    import openai

    started = time.perf_counter()
    try:
        # what is not set is not sent (a `"max_tokens": null` some servers refuse), and the client's own timeout is
        # not given again: the client's per-call work grows with every field it is handed
        extra = {name: params[name] for name in ("max_tokens", "seed") if params.get(name) is not None}
        if params.get("logprobs"):
            extra.update({"logprobs": True, "top_logprobs": TOP_LOGPROBS})
        if timeout != client.timeout:
            extra["timeout"] = timeout
        response = await client.chat.completions.create(
            model=model, messages=messages, temperature=params.get("temperature", 0.0), **extra)
    except (openai.APIError, json.JSONDecodeError, ValueError) as exc:
        failure = classify(exc, model, timeout)
        if failure.kind == "bad_response":
            failure = CallFailed("bad_response", f"the endpoint's reply is not a chat completion: {_short(exc)}",
                                 retryable=True)
        raise failure from None
    latency = (time.perf_counter() - started) * 1000
    if not hasattr(response, "choices"):  # the client hands back the body as text when it is not JSON
        raise CallFailed("bad_response", f"the endpoint's reply is not a chat completion: {str(response)[:200]!r}",
                         retryable=True)
    # the client builds its objects without checking them: a server's reply may hold anything anywhere
    choices = _field(response, "choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    message = _field(first, "message") if first is not None else None
    content = _field(message, "content")
    if not isinstance(choices, list | None) or not isinstance(content, str | None) or \
            (first is not None and not (isinstance(message, dict) or hasattr(message, "content"))):
        raise CallFailed("bad_response", "the endpoint's reply is not a chat completion (its choices or content are "
                         f"not what the API sends: {type(content if isinstance(choices, list) else choices).__name__})",
                         retryable=True)
    if content and len(content) > MAX_REPLY:
        raise CallFailed("too_long", too_long(len(content)))
    usage = _field(response, "usage")
    found = _field(first, "logprobs") if first is not None and params.get("logprobs") else None
    request_id = getattr(response, "_request_id", None) or _field(response, "id")
    return Reply(content=content or "", request_id=str(request_id)[:200] if request_id else None,
                 prompt_tokens=stated_count(_field(usage, "prompt_tokens")), latency_ms=latency,
                 completion_tokens=stated_count(_field(usage, "completion_tokens")),
                 logprobs=token_logprobs(_field(found, "content")))


TOP_LOGPROBS = 5     # alternatives asked for each reply token (OpenAI allows up to 20)


def _field(obj: Any, key: str) -> Any:
    """A field of the client's object or of a batch reply's JSON (an object without it: None)."""
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def token_logprobs(content: Any) -> list | None:
    """A reply's token log-probabilities as plain lists — [text, logprob, [[alternative, logprob], ...]] per token —
    from the client's objects or a batch reply's JSON; None when the endpoint sent none (not every server can)."""
    if not content:
        return None
    out = []
    try:
        for tok in content:
            alts = _field(tok, "top_logprobs") or []
            pairs = [[str(_field(a, "token")), float(_field(a, "logprob"))] for a in alts]
            out.append([str(_field(tok, "token")), float(_field(tok, "logprob")), pairs])
    except (TypeError, ValueError, AttributeError):
        return None          # malformed: no confidence rather than a wrong one
    return out


def _short(exc: BaseException) -> str:
    text = str(exc).replace("\n", " ")
    return text[:300]


# --- what every caller shares: the request cache, retries with backoff, the limiter's bookkeeping -------------
CACHE_INSERT = ("INSERT OR IGNORE INTO llm_cache (key, model, content, prompt_tokens, completion_tokens, request_id, "
                "created_at, logprobs) VALUES (:key, :model, :content, :prompt_tokens, :completion_tokens, "
                ":request_id, :created_at, :logprobs)")


BATCH_CACHE_INSERT = ("INSERT OR IGNORE INTO llm_cache (key, model, content, prompt_tokens, completion_tokens, "
                      "request_id, created_at, batch_job, logprobs) VALUES (:key, :model, :content, :prompt_tokens, "
                      ":completion_tokens, :request_id, :created_at, :batch_job, :logprobs)")


class Stopped(Exception):
    """The caller is stopping (a fatal error elsewhere, or a cancel): the call was not made."""


def cached(conn: sqlite3.Connection, key: str) -> Reply | None:
    row = conn.execute("SELECT content, prompt_tokens, completion_tokens, request_id, batch_job, logprobs FROM "
                       "llm_cache WHERE key = ?", (key,)).fetchone()
    if row is None:
        return None
    try:
        tokens = json.loads(row[5]) if row[5] else None
    except ValueError:
        tokens = None
    return Reply(row[0], row[1], row[2], row[3], 0.0, row[4], logprobs=tokens)


def cache_entry(key: str, model: str | None, reply: Reply, scrub: Any) -> dict[str, Any]:
    """A row for CACHE_INSERT, written by the caller in the same transaction as what the reply produced. What the
    server sent — the reply and its request id — passes `scrub` (core.judges.secrets.Scrubber) first: a server
    that echoed the key in `x-request-id` or the response id had it stored in the cache and its backups."""

    return {"key": key, "model": model, "content": scrub(reply.content), "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens, "request_id": scrub(reply.request_id),
            "created_at": utcnow(),
            "logprobs": None if reply.logprobs is None else scrub(json.dumps(reply.logprobs, ensure_ascii=False))}


def backoff_seconds(failure: CallFailed, attempt: int) -> float:
    """Honour the server's Retry-After (plus a little jitter); else exponential backoff with jitter, capped (at 2 s
    for a rate limit, 30 s for other errors)."""
    import random

    if failure.retry_after is not None:
        return failure.retry_after + random.uniform(0, 0.1)
    # a 429 that does not say when: at most the limiter's hold (it paces the probing; a long wait of the call's own
    # left it idle after the limit opened again)
    cap = PAUSE_MAX_S if failure.kind == "rate_limit" else 30.0
    return float(min(cap, 0.5 * 2 ** (attempt - 1)) * random.uniform(0.5, 1.0))


# A 429 is flow control, not a failure of the request: the adaptive limiter halves the calls in flight and the call
# waits its turn again. So rate-limit rejections have their own, larger budget than other errors (`retries`): a
# server that admits fewer calls than asked costs retries, never rows; one that never admits any still ends.
RATE_LIMIT_RETRIES = 20
# A 429 that says nothing of when is probed every 2 s at most (the limiter's hold): 20 such refusals are 40 s, less
# than a per-minute window, so a plain 429's budget is also one of time — the row gives up once refused for this long
RATE_LIMIT_PATIENCE_S = 180.0


def _spent(failure: CallFailed, attempt: int, overloads: int, retries: int, first_refused: float | None) -> bool:
    """Whether a retryable failure's budget ran out: `retries` for errors; RATE_LIMIT_RETRIES (or `retries`, if
    larger) for rate limits, and for 429s that do not say when, also RATE_LIMIT_PATIENCE_S of refusals (since the
    call's first such refusal, `first_refused`)."""
    if failure.kind != "rate_limit":
        return attempt - overloads > retries
    patient = failure.retry_after is None and first_refused is not None and \
        time.monotonic() - first_refused < RATE_LIMIT_PATIENCE_S
    return overloads > max(retries, RATE_LIMIT_RETRIES) and not patient


async def call_with_retries(client: openai.AsyncOpenAI, limiter: Any, model: str, messages: list[dict],
                            params: dict[str, Any], timeout: float, retries: int, *, stopping: Any,
                            ticket: int | None = None, on_call: Any = None,
                            on_retry: Any = None, request: Any = None) -> tuple[Any, int]:
    """(reply, attempts). Takes a limiter slot for each attempt (or starts with the slot `ticket` the caller
    already holds) and always gives it back — also when the task is cancelled. Raises CallFailed (with
    `.attempts`) when the failure is fatal, not worth retrying, or its budget ran out (`retries` for errors,
    RATE_LIMIT_RETRIES for rate limits, and RATE_LIMIT_PATIENCE_S of refusals too for 429s that do not say when);
    Stopped when `stopping()` says the caller is winding down. `on_retry(kind)` is told why before each retry
    (rate_limit, timeout, connection, server_error, …). `request`: another call than a chat completion (an
    embeddings request: a coroutine function), with the same limiter, retries and failures."""
    import asyncio

    attempt = overloads = 0
    first_refused: float | None = None
    while True:
        if ticket is None:
            ticket = await limiter.acquire()
        try:
            if stopping():
                raise Stopped()
            attempt += 1
            if on_call:
                on_call()
            try:
                reply = await (request() if request is not None else chat(client, model, messages, params, timeout))
            except CallFailed:
                raise
            except Exception as exc:  # anything unforeseen is this call's error, never a lost slot
                raise classify(exc, model, timeout) from exc
        except CallFailed as failure:
            await limiter.release("overload" if failure.kind == "rate_limit" else
                                  "timeout" if failure.kind == "timeout" else "other", ticket,
                                  said_when=failure.retry_after is not None)
            ticket = None
            overloads += failure.kind == "rate_limit"
            if failure.kind == "rate_limit" and failure.retry_after is None:
                first_refused = first_refused or time.monotonic()
            if failure.fatal or not failure.retryable or _spent(failure, attempt, overloads, retries, first_refused):
                failure.attempts = attempt  # type: ignore[attr-defined]
                raise
            if on_retry:
                on_retry(failure.kind)
            await asyncio.sleep(backoff_seconds(failure, attempt))
            continue
        except BaseException:  # Stopped, or the task was cancelled mid-call: the slot goes back, no await
            limiter.release_nowait(ticket)
            raise
        await limiter.release("ok", ticket)
        return reply, attempt
