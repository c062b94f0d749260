"""One chat call through openai's AsyncOpenAI, with every failure turned into a kind the job can act on."""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any

import openai


@dataclass
class Reply:
    content: str
    prompt_tokens: int | None
    completion_tokens: int | None
    request_id: str | None
    latency_ms: float


class CallFailed(Exception):
    """kind: short machine name; retryable: worth another try; fatal: stop the whole job."""

    def __init__(self, kind: str, message: str, *, retryable: bool = False, fatal: bool = False,
                 retry_after: float | None = None, overload: bool = False) -> None:
        super().__init__(message)
        self.kind, self.retryable, self.fatal = kind, retryable, fatal
        self.retry_after, self.overload = retry_after, overload


def make_client(base_url: str | None, api_key: str, timeout: float) -> openai.AsyncOpenAI:
    # retries are ours (bounded, with jitter, adaptive); the client's own would hide 429s from the limiter
    return openai.AsyncOpenAI(base_url=base_url, api_key=api_key, timeout=timeout, max_retries=0)


def cache_key(base_url: str | None, model: str, messages: list[dict], params: dict[str, Any]) -> str:
    blob = json.dumps({"base_url": base_url or "", "model": model, "messages": messages, "params": params},
                      sort_keys=True, ensure_ascii=False)
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


async def chat(client: openai.AsyncOpenAI, model: str, messages: list[dict], params: dict[str, Any],
               timeout: float) -> Reply:
    started = time.perf_counter()
    try:
        response = await client.chat.completions.create(
            model=model, messages=messages, temperature=params.get("temperature", 0.0),
            max_tokens=params.get("max_tokens"), seed=params.get("seed"), timeout=timeout)
    except openai.AuthenticationError as exc:
        raise CallFailed("auth", f"the endpoint refused the API key (401): {_short(exc)}", fatal=True) from None
    except openai.PermissionDeniedError as exc:
        raise CallFailed("forbidden", f"the endpoint refused access (403): {_short(exc)}", fatal=True) from None
    except openai.NotFoundError as exc:
        raise CallFailed("model_not_found", f"model '{model}' was not found at the endpoint (404): {_short(exc)}",
                         fatal=True) from None
    except openai.RateLimitError as exc:
        if exc.code == "insufficient_quota" or "insufficient_quota" in str(exc):
            raise CallFailed("quota", f"the account has no quota left (429 insufficient_quota): {_short(exc)}",
                             fatal=True) from None
        raise CallFailed("rate_limit", "rate limited (429)", retryable=True, retry_after=_retry_after(exc),
                         overload=True) from None
    except openai.APITimeoutError:
        raise CallFailed("timeout", f"no reply within {timeout:g} s", retryable=True, overload=True) from None
    except openai.APIConnectionError as exc:
        raise CallFailed("connection", f"cannot reach the endpoint: {_short(exc)}", retryable=True) from None
    except openai.InternalServerError as exc:
        raise CallFailed("server_error", f"server error ({exc.status_code})", retryable=True,
                         retry_after=_retry_after(exc)) from None
    except openai.BadRequestError as exc:
        raise CallFailed("bad_request", f"the endpoint rejected the request (400): {_short(exc)}") from None
    except openai.APIStatusError as exc:
        raise CallFailed(f"http_{exc.status_code}", f"HTTP {exc.status_code}: {_short(exc)}",
                         retryable=exc.status_code in (408, 409, 425)) from None
    except (openai.APIResponseValidationError, json.JSONDecodeError, ValueError) as exc:
        raise CallFailed("bad_response", f"the endpoint's reply is not a chat completion: {_short(exc)}",
                         retryable=True) from None
    latency = (time.perf_counter() - started) * 1000
    if not hasattr(response, "choices"):  # the client hands back the body as text when it is not JSON
        raise CallFailed("bad_response", f"the endpoint's reply is not a chat completion: {str(response)[:200]!r}",
                         retryable=True)
    choices = response.choices or []
    content = choices[0].message.content if choices and choices[0].message else None
    usage = getattr(response, "usage", None)
    return Reply(content=content or "", request_id=getattr(response, "_request_id", None) or response.id,
                 prompt_tokens=getattr(usage, "prompt_tokens", None), latency_ms=latency,
                 completion_tokens=getattr(usage, "completion_tokens", None))


def _short(exc: BaseException) -> str:
    text = str(exc).replace("\n", " ")
    return text[:300]
