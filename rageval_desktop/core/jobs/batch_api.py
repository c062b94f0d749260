"""The OpenAI-style Batch API as the job asks it (core/jobs/batch.py): the provider's files and batches endpoints
through openai's client, and the results' lines read as request cache rows. `Provider` is what a batch provider
offers the job; core/jobs/message_batches.py offers the same for Anthropic's Message Batches."""

from __future__ import annotations

import json
from typing import Any, TypedDict

from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.judges import llm
from rageval_desktop.core.judges.secrets import Scrubber, resolve_api_key

ENDPOINT = "/v1/chat/completions"
API_TIMEOUT = 60.0                 # one request to the files or batches endpoints


Remote = Any     # what an endpoint returned for a batch (openai's Batch model, message_batches.Batch)


count = llm.stated_count      # (the name the batch providers' modules use)


class BatchFailed(RagevalError):
    """The provider refused a file or a batch, or cannot be reached: the job stops; what was recorded stays."""




# --- the provider -----------------------------------------------------------------------------------------------
class Provider:
    """The files and batches endpoints of one (base URL, key reference), through openai's client."""

    def __init__(self, base_url: str | None, api_key_ref: str | None, scrub: Scrubber) -> None:
        openai = llm.client_library()     # (after a preload that may be under way: never two imports at once)
        key = resolve_api_key(api_key_ref)
        scrub.add(key)
        self.scrub = scrub
        self.client = openai.OpenAI(base_url=llm.resolved_base_url(base_url) or llm.DEFAULT_BASE_URL, api_key=key,
                                    timeout=API_TIMEOUT, max_retries=2)

    def _call(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        import openai

        try:
            return fn(*args, **kwargs)
        except openai.AuthenticationError:
            raise BatchFailed(f"{what}: the endpoint refused the API key (401)") from None
        except openai.NotFoundError as exc:
            raise BatchFailed(f"{what}: not found at the endpoint (404; does it offer the Batch API?): "
                              f"{self.scrub(str(exc))[:300]}") from None
        except openai.APIStatusError as exc:
            raise BatchFailed(f"{what}: HTTP {exc.status_code}: {self.scrub(str(exc))[:300]}") from None
        except openai.APITimeoutError:
            raise BatchFailed(f"{what}: no reply within {API_TIMEOUT:g} s") from None
        except openai.APIConnectionError as exc:
            raise BatchFailed(f"{what}: cannot reach the endpoint ({self.scrub(str(exc))[:200]})") from None
        except (openai.APIResponseValidationError, ValueError) as exc:
            raise BatchFailed(f"{what}: the endpoint's reply is not what the Batch API returns "
                              f"({self.scrub(str(exc))[:200]})") from None

    def upload(self, name: str, data: bytes) -> str:
        made = self._call("uploading the requests", self.client.files.create, file=(name, data, "application/jsonl"),
                          purpose="batch")
        return str(made.id)

    def create(self, input_file_id: str, metadata: dict[str, str]) -> Remote:
        return self._call("creating the batch", self.client.batches.create, input_file_id=input_file_id,
                          endpoint=ENDPOINT, completion_window="24h", metadata=metadata)

    def can_create(self, input_file_id: str) -> bool:
        """Whether a part recorded by a process that died can still be made a batch (its file is at the provider)."""
        return True

    def find(self, metadata: dict[str, str], *, since: str = "", requests: int = 0,
             known: frozenset[str] = frozenset()) -> Remote | None:
        """A batch this job created but did not get to record (killed in between), by its metadata."""
        try:
            page = self._call("listing batches", self.client.batches.list, limit=100)
        except BatchFailed:
            return None
        for batch in page.data:
            if (batch.metadata or {}) == metadata:
                return batch
        return None

    def retrieve(self, remote_id: str) -> Remote:
        return self._call("checking the batch", self.client.batches.retrieve, remote_id)

    def cancel(self, remote_id: str) -> Remote:
        return self._call("cancelling the batch", self.client.batches.cancel, remote_id)

    def content(self, file_id: str) -> bytes:
        return bytes(self._call("downloading the results", self.client.files.content, file_id).content)

    def parse(self, line: bytes, scrub: Scrubber, batch_job: int | None) -> tuple[CacheRow | None, str]:
        """(a request cache row, '') for a reply line of a results file; (None, why) for a request that failed."""
        return parse_reply(line, scrub, batch_job)




class CacheRow(TypedDict):
    """A reply as the request cache keeps it (llm.BATCH_CACHE_INSERT's parameters)."""
    key: str
    model: str
    content: str
    logprobs: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    request_id: str | None
    created_at: str
    batch_job: int | None


def keyed(line: bytes) -> tuple[dict[str, object], str] | None:
    """A results line as (its object, its `custom_id`), when it is a JSON object keyed by a request cache key (64 hex
    characters); None for anything else."""
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):          # nested deeper than the parser goes: no reply either
        return None
    key = obj.get("custom_id") if isinstance(obj, dict) else None
    if not isinstance(key, str) or len(key) != 64 or any(c not in "0123456789abcdef" for c in key):
        return None
    return obj, key


def parse_reply(line: bytes, scrub: Scrubber, batch_job: int | None) -> tuple[CacheRow | None, str]:
    """A line of a batch output file (the OpenAI Batch API's, vLLM run_batch's): (a request cache row, '') for a
    reply — its text scrubbed, marked with `batch_job` (None: a reply from outside, already paid for) — or (None,
    why) for a request that failed or a line that is not a reply."""
    read = keyed(line)
    if read is None:
        return None, "bad_response"
    obj, key = read
    error, response = obj.get("error"), obj.get("response") or {}
    if error:
        return None, str(error.get("code") or "error")[:40] if isinstance(error, dict) else "error"
    if not isinstance(response, dict):
        return None, "bad_response"
    status = response.get("status_code")
    if status != 200:
        return None, f"http_{status}"[:40]
    body = response.get("body")
    choices = body.get("choices") if isinstance(body, dict) else None
    choice = choices[0] if isinstance(choices, list) and choices else None
    message = choice.get("message") if isinstance(choice, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(body, dict) or not isinstance(choice, dict) or not isinstance(message, dict) \
            or not isinstance(content, str | None):
        return None, "bad_response"
    if content and len(content) > llm.MAX_REPLY:
        return None, "too_long"
    found_usage = body.get("usage")
    usage: dict[str, object] = found_usage if isinstance(found_usage, dict) else {}
    found = choice.get("logprobs") or {}
    tokens = llm.token_logprobs(found.get("content") if isinstance(found, dict) else None)

    request_id = response.get("request_id") or body.get("id")
    return {"key": key, "model": str(body.get("model") or "")[:200], "content": scrub(content or ""),
            "logprobs": None if tokens is None else scrub(json.dumps(tokens, ensure_ascii=False)),
            "prompt_tokens": count(usage.get("prompt_tokens")),
            "completion_tokens": count(usage.get("completion_tokens")),
            "request_id": scrub(request_id) if isinstance(request_id, str) else None, "created_at": utcnow(),
            "batch_job": batch_job}, ""
