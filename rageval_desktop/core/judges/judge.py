"""A judge as stored: its metric, its kind, how it is reached, its parameters."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.base.vocab import LLM_DEFAULTS, METRICS, MetricSpec
from rageval_desktop.core.judges.kinds import JudgeKind, get_kind, guarded, kind_origin

Endpoint = tuple[str | None, str | None]   # (base URL, API key's reference): one client, one limiter, one batch file


@dataclass
class Judge:
    id: int
    name: str
    metric: str
    kind: str
    rubric_id: int | None
    model: str | None
    base_url: str | None
    api_key_ref: str | None
    params: dict[str, Any] = field(default_factory=dict)
    status: str = "active"

    @property
    def spec(self) -> MetricSpec:
        return METRICS[self.metric]

    @property
    def kind_of(self) -> JudgeKind:
        """The judge's kind from the registry (an uninstalled plug-in's kind raises a clear error)."""
        return get_kind(self.kind)

    @property
    def calls_llm(self) -> bool:
        """Judged by the LLM engine: rubric calls to an endpoint (costs, batch, caches)."""
        try:
            return self.kind_of.calls_llm
        except RagevalError:
            return False

    @property
    def rubric_key(self) -> int:
        """The stored rubric of a judge that has one (LLM judges); asking a local judge for it is a bug."""
        if self.rubric_id is None:
            raise RagevalError(f"judge '{self.name}' ({self.kind}) has no rubric")
        return self.rubric_id

    def param(self, key: str) -> Any:
        return self.params.get(key, LLM_DEFAULTS.get(key))

    def request_params(self) -> dict[str, Any]:
        """The sampling parameters of each call — part of the request cache's key, so a job and its dry run
        must build them the same way."""
        out = {"temperature": self.param("temperature"), "max_tokens": self.param("max_tokens"),
               "seed": self.param("seed")}
        if self.params.get("confidence") == "logprobs":   # only when asked: every other judge keeps its cache keys
            out["logprobs"] = True
        return out

    @property
    def model_id(self) -> str:
        """What the idempotency key and the cache know this judge's method by (the kind decides)."""
        try:
            kind = self.kind_of
        except RagevalError:   # a plug-in no longer installed: still listed; running it says what is missing
            return f"{self.kind}:{self.params.get('model') or 'default'}"
        # (a plug-in whose model_id fails stops what asked for it, named: a fallback would change every key)
        method = str(guarded(kind, "naming its method", kind.model_id, self))
        origin = kind_origin(self.kind)         # a plug-in's version: a new one is another method
        return f"{method}@{origin}" if origin else method
