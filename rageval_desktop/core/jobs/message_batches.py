"""Anthropic's Message Batches as a second batch provider (`rageval judge … --batch --batch-api anthropic`; `auto`
picks it for an api.anthropic.com endpoint): up to 100,000 requests a batch at half price, beside the OpenAI-style
Batch API of core/jobs/batch.py, with the same job, records, rounds, cache and judging.

Every call goes through openai's client, as every other LLM call of the app does: its generic `post`/`get` on the
`/messages/batches` routes, with Anthropic's `x-api-key` and `anthropic-version` headers (the key is resolved and
scrubbed as any other). What differs from the OpenAI-style API, and how the job keeps its guarantees:

- **No files.** A batch carries its requests in its body. `upload` converts the job's request lines (the live
  call's chat body: the system message becomes `system`, `max_tokens` is required, seed and log-probabilities are
  not asked) and keeps them in memory until `create` sends them. A process killed between recording the part and
  creating its batch has nothing left to send: the part is closed as not sent, and its requests, still not in the
  cache, go in the next round.
- **No metadata.** A process killed between creating a batch and recording its id finds it again by when it was
  created (after the part was recorded) and its number of requests; only one such batch is adopted (two alike in
  that window: none, and the part is sent again).
- **Results by `custom_id`** (the request cache key, 64 hex characters, which Anthropic's 1-64 `[A-Za-z0-9_-]`
  admits) from the batch's `results_url`: a `succeeded` result is a reply; `errored`, `canceled` and `expired` are
  counted by kind and sent again in the follow-up round.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.jobs.batch_api import API_TIMEOUT, BatchFailed, CacheRow, Provider, count, keyed
from rageval_desktop.core.judges import llm
from rageval_desktop.core.judges.secrets import Scrubber, resolve_api_key

DEFAULT_URL = "https://api.anthropic.com/v1"
VERSION = "2023-06-01"
SKEW = timedelta(minutes=2)        # how far Anthropic's clock may be behind ours when a lost batch is looked for
DEFAULT_MAX_TOKENS = 1024           # Anthropic requires max_tokens; a judge that sets none gets this
APIS = ("auto", "openai", "anthropic")


def flavour(batch_api: str, base_url: str | None) -> str:
    """Which batch API an endpoint is asked through: the job's choice, or for `auto` Anthropic's for a host under
    anthropic.com and the OpenAI-style one for any other."""
    if batch_api != "auto":
        return batch_api
    host = urlsplit(llm.resolved_base_url(base_url) or llm.DEFAULT_BASE_URL).hostname or ""
    return "anthropic" if host == "anthropic.com" or host.endswith(".anthropic.com") else "openai"


def anthropic_request(line: bytes) -> dict[str, object]:
    """A request line of the job (the OpenAI batch format) as a Message Batches request."""
    found = json.loads(line)
    body = found["body"]
    system = "\n\n".join(str(m.get("content") or "") for m in body["messages"] if m.get("role") == "system")
    params: dict[str, object] = {"model": body["model"], "max_tokens": body.get("max_tokens") or DEFAULT_MAX_TOKENS,
                              "messages": [{"role": m["role"], "content": m.get("content") or ""}
                                           for m in body["messages"] if m.get("role") != "system"]}
    if system:
        params["system"] = system
    if body.get("temperature") is not None:
        params["temperature"] = body["temperature"]
    return {"custom_id": found["custom_id"], "params": params}


@dataclass
class _Counts:
    completed: int = 0
    failed: int = 0


@dataclass
class Batch:
    """A Message Batch as the job reads an OpenAI-style batch: its id, status (in_progress, cancelling, completed,
    cancelled), counts and where its results are."""
    id: str
    status: str
    request_counts: _Counts = field(default_factory=_Counts)
    output_file_id: str | None = None
    error_file_id: str | None = None
    errors: None = None
    metadata: dict[str, str] = field(default_factory=dict)
    created_at: str = ""
    requests: int = 0


def _batch(found: object) -> Batch:
    if not isinstance(found, dict) or not isinstance(found.get("id"), str):
        raise ValueError("not a message batch")
    counts = found.get("request_counts") or {}
    if not isinstance(counts, dict):
        raise ValueError("not a message batch")
    numbers = {k: count(counts.get(k)) or 0 for k in ("processing", "succeeded", "errored", "canceled", "expired")}
    state = found.get("processing_status")
    if state == "ended":
        status = "cancelled" if found.get("cancel_initiated_at") else "completed"
    elif state == "canceling":
        status = "cancelling"
    elif state == "in_progress":
        status = "in_progress"
    else:
        raise ValueError(f"an unknown processing status {str(state)[:40]!r}")
    results = found.get("results_url")
    return Batch(id=found["id"], status=status,
                 request_counts=_Counts(numbers["succeeded"],
                                        numbers["errored"] + numbers["canceled"] + numbers["expired"]),
                 output_file_id=results if isinstance(results, str) and status in ("completed", "cancelled") else None,
                 created_at=str(found.get("created_at") or ""), requests=sum(numbers.values()))


def _moment(text: str) -> datetime | None:
    try:
        found = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return found if found.tzinfo is not None else None


class MessageBatches(Provider):
    """The Message Batches endpoints of one (base URL, key reference), through openai's client."""

    def __init__(self, base_url: str | None, api_key_ref: str | None, scrub: Scrubber) -> None:
        openai = llm.client_library()
        key = resolve_api_key(api_key_ref)
        scrub.add(key)
        self.scrub = scrub
        self.client = openai.OpenAI(base_url=llm.resolved_base_url(base_url) or DEFAULT_URL, api_key=key,
                                    timeout=API_TIMEOUT, max_retries=2,
                                    default_headers={"x-api-key": key, "anthropic-version": VERSION})
        self.pending: dict[str, list[dict[str, object]]] = {}     # parts uploaded in this process, not yet sent

    def upload(self, name: str, data: bytes) -> str:
        self.pending[name] = [anthropic_request(line) for line in data.splitlines() if line.strip()]
        return f"local:{name}"

    def can_create(self, input_file_id: str) -> bool:
        return input_file_id.removeprefix("local:") in self.pending

    def create(self, input_file_id: str, metadata: dict[str, str]) -> Batch:
        requests = self.pending.get(input_file_id.removeprefix("local:"))
        if requests is None:
            raise BatchFailed("creating the batch: its requests were not kept (the job stopped before sending them)")
        found = self._call("creating the batch", self.client.post, "/messages/batches",
                           body={"requests": requests}, cast_to=object)
        batch = self._read("creating the batch", found)
        self.pending.pop(input_file_id.removeprefix("local:"), None)
        return batch

    def find(self, metadata: dict[str, str], *, since: str = "", requests: int = 0,
             known: frozenset[str] = frozenset()) -> Batch | None:
        """The one batch created after `since` (less SKEW: Anthropic's clock is not ours) with `requests` requests
        and not among the `known` ones this project recorded (a kill between creating it and recording it), or
        None."""
        start = _moment(since)
        if start is None or requests <= 0:
            return None
        start -= SKEW
        try:
            found = self._call("listing batches", self.client.get, "/messages/batches?limit=100", cast_to=object)
        except BatchFailed:
            return None
        data = found.get("data") if isinstance(found, dict) else None
        alike = []
        for item in data if isinstance(data, list) else []:
            try:
                batch = _batch(item)
            except ValueError:
                continue
            made = _moment(batch.created_at)
            if made is not None and made >= start and batch.requests == requests and batch.id not in known:
                alike.append(batch)
        return alike[0] if len(alike) == 1 else None

    def retrieve(self, remote_id: str) -> Batch:
        return self._read("checking the batch", self._call(
            "checking the batch", self.client.get, f"/messages/batches/{_safe(remote_id)}", cast_to=object))

    def cancel(self, remote_id: str) -> Batch:
        return self._read("cancelling the batch", self._call(
            "cancelling the batch", self.client.post, f"/messages/batches/{_safe(remote_id)}/cancel", cast_to=object))

    def content(self, file_id: str) -> bytes:
        data = self._call("downloading the results", self.client.get, file_id, cast_to=bytes)
        if not isinstance(data, bytes):
            raise BatchFailed("downloading the results: the endpoint's reply is not a results file")
        return data

    def parse(self, line: bytes, scrub: Scrubber, batch_job: int | None) -> tuple[CacheRow | None, str]:
        return parse_result(line, scrub, batch_job)

    def _read(self, what: str, found: object) -> Batch:
        try:
            return _batch(found)
        except ValueError as exc:
            raise BatchFailed(f"{what}: the endpoint's reply is not a message batch ({exc})") from None


def _safe(remote_id: str) -> str:
    """A batch id as a path segment (it came from the endpoint, or from the project file)."""
    if not remote_id or any(not (c.isalnum() or c in "_-") for c in remote_id):
        raise BatchFailed(f"a batch id that is not one ({remote_id[:60]!r})")
    return remote_id


def parse_result(line: bytes, scrub: Scrubber, batch_job: int | None) -> tuple[CacheRow | None, str]:
    """A line of a Message Batch's results: (a request cache row, '') for a succeeded request, (None, why) for one
    that errored, was cancelled or expired, or a line that is not a result."""
    found_line = keyed(line)
    if found_line is None:
        return None, "bad_response"
    obj, key = found_line
    result = obj.get("result")
    kind = result.get("type") if isinstance(result, dict) else None
    if kind == "errored":
        error = result.get("error") if isinstance(result, dict) else None
        inner = error.get("error") if isinstance(error, dict) else None
        found = inner.get("type") if isinstance(inner, dict) else None
        return None, str(found or "error")[:40]
    if kind in ("canceled", "expired"):
        return None, f"batch_{kind}"
    message = result.get("message") if isinstance(result, dict) and kind == "succeeded" else None
    blocks = message.get("content") if isinstance(message, dict) else None
    if not isinstance(message, dict) or not isinstance(blocks, list):
        return None, "bad_response"
    text = "".join(b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text"
                   and isinstance(b.get("text"), str))
    if len(text) > llm.MAX_REPLY:
        return None, "too_long"
    found_usage = message.get("usage")
    usage: dict[str, object] = found_usage if isinstance(found_usage, dict) else {}
    request_id = message.get("id")
    return {"key": key, "model": str(message.get("model") or "")[:200], "content": scrub(text), "logprobs": None,
            "prompt_tokens": count(usage.get("input_tokens")), "completion_tokens": count(usage.get("output_tokens")),
            "request_id": scrub(request_id) if isinstance(request_id, str) else None, "created_at": utcnow(),
            "batch_job": batch_job}, ""
