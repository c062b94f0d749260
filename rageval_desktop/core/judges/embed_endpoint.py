"""Embeddings from a server that speaks `/v1/embeddings` (text-embeddings-inference, vLLM, Ollama, OpenAI), through
openai's client: batched requests, the judge engine's adaptive limiter, retries and failure kinds.

An endpoint model is named `MODEL@URL` (optionally `MODEL@URL#KEYREF`, the API key's environment variable or keyring
entry — never the key) wherever a model id goes: the embedding judge, near-duplicates, the retrieval lab. The
embedding cache keys its vectors by text hash and the model's *name* (MODEL), so the same model served elsewhere
reuses them, and a second run sends nothing.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.base.limiter import AdaptiveLimiter
from rageval_desktop.core.judges import llm
from rageval_desktop.core.judges.secrets import Scrubber, check_base_url, check_key_ref, resolve_api_key

if TYPE_CHECKING:
    from numpy import ndarray

BATCH = 128            # texts per request
CONCURRENCY = 4        # requests in flight (the limiter lowers it when the server pushes back)
TIMEOUT = 60.0
RETRIES = 3


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    model: str
    api_key_ref: str | None = None

    @property
    def model_id(self) -> str:
        return f"{self.model}@{self.base_url}" + (f"#{self.api_key_ref}" if self.api_key_ref else "")


def model_id(base_url: str, model: str, api_key_ref: str | None = None) -> str:
    """The model id of an endpoint model, checked: the URL carries no credentials, the key is only a reference."""

    if not model or "@" in model:
        raise RagevalError("an embeddings endpoint needs the name of the model the server serves",
                           cli_hint="give it with --model NAME", gui_hint="fill in Model")
    return Endpoint(check_base_url(base_url) or "", model, check_key_ref(api_key_ref)).model_id


def parse(model_id: str) -> tuple[str, Endpoint | None]:
    """(the name the cache knows the model by, the endpoint or None for a local model)."""
    name, at, rest = model_id.partition("@")
    if not at or not rest.startswith(("http://", "https://")):
        return model_id, None
    url, _, key = rest.partition("#")
    return name, Endpoint(url, name, key or None)


MAX_DIMENSIONS = 65_536    # no embedding model's vectors are longer


def vectors_of(found: list[object]) -> ndarray:
    """A reply's vectors, as a float32 matrix, when they are vectors: lists of finite numbers, all of one length (at
    most MAX_DIMENSIONS); anything else is a bad reply, never cached (a NaN vector made every similarity NaN and found
    no duplicate)."""
    import numpy as np

    try:
        matrix = np.asarray(found, dtype=np.float64)
    except (ValueError, TypeError):     # ragged, nested unevenly, or not numbers
        matrix = None
    if matrix is None or matrix.ndim != 2 or not 0 < matrix.shape[1] <= MAX_DIMENSIONS or \
            not np.isfinite(matrix).all() or np.abs(matrix).max() > np.finfo(np.float32).max:
        raise llm.CallFailed("bad_response", "the reply's embeddings are not vectors of finite numbers of one length")
    return matrix.astype(np.float32)


class EndpointModel:
    """What `embedded.embed` asks of a model (`encode`), done by the server."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self.requests = 0

    def encode(self, texts: list[str], batch_size: int = BATCH, normalize_embeddings: bool = True,
               **_: Any) -> Any:
        import numpy as np

        chunks = asyncio.run(self._encode(list(texts), max(1, min(batch_size, BATCH) if batch_size else BATCH)))
        if len({c.shape[1] for c in chunks}) > 1:
            raise RagevalError(f"the embeddings endpoint {self.endpoint.base_url} (model {self.endpoint.model}) "
                               "returned vectors of different lengths to different requests")
        matrix = np.concatenate(chunks) if chunks else np.zeros((0, 0), dtype=np.float32)
        if normalize_embeddings:
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            matrix = (matrix / np.where(norms == 0, 1.0, norms)).astype(np.float32, copy=False)
        return matrix

    async def _encode(self, texts: list[str], size: int) -> list[ndarray]:
        """Each request's vectors (a float32 matrix a request), in the texts' order."""
        end = self.endpoint
        key = resolve_api_key(end.api_key_ref)
        scrub = Scrubber([key])
        client = llm.make_client(end.base_url, key, TIMEOUT)
        limiter = AdaptiveLimiter(CONCURRENCY)
        failed: list[str] = []

        async def one(chunk: list[str]) -> ndarray:
            async def request() -> ndarray:
                response = await client.embeddings.create(model=end.model, input=chunk, timeout=TIMEOUT)
                data = sorted(getattr(response, "data", None) or [], key=lambda d: d.index)
                if len(data) != len(chunk):
                    raise llm.CallFailed("bad_response", f"{len(data)} vectors for {len(chunk)} texts",
                                         retryable=True)
                return vectors_of([d.embedding for d in data])

            def count() -> None:
                self.requests += 1

            vectors: ndarray
            try:
                vectors, _ = await llm.call_with_retries(client, limiter, end.model, [], {}, TIMEOUT, RETRIES,
                                                         stopping=lambda: bool(failed), request=request,
                                                         on_call=count)
            except llm.Stopped:
                raise
            except llm.CallFailed as failure:
                failed.append(scrub(str(failure)) or "failed")
                raise
            return vectors

        try:
            results = await asyncio.gather(*(one(texts[i:i + size]) for i in range(0, len(texts), size)),
                                           return_exceptions=True)
        finally:
            await client.close()
        if failed:
            raise RagevalError(f"the embeddings endpoint {end.base_url} (model {end.model}) failed: {failed[0]}")
        for result in results:
            if isinstance(result, BaseException):
                raise RagevalError(f"the embeddings endpoint {end.base_url} failed: "
                                   f"{scrub(f'{type(result).__name__}: {result}')}")
        return list(results)  # type: ignore[arg-type]
