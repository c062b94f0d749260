"""What a judge's verdicts depend on, part by part: the kind (and the plug-in's distribution and version), the model,
where its calls go, the endpoint's model, the rubric's text and
version and its output format (which picks the parser), the sampling settings, the few-shot examples, the HHEM
model registered. An audit records it; a licence holds only while it is unchanged (core.review.licence)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.judges import rubrics
from rageval_desktop.core.judges.judge import Judge
from rageval_desktop.core.judges.kinds import guarded, kind_origin
from rageval_desktop.core.judges.llm import DEFAULT_BASE_URL
from rageval_desktop.core.judges.secrets import safe_endpoint
from rageval_desktop.core.store.project import Project

PARTS = ("kind", "plug-in", "model", "endpoint", "endpoint model", "rubric", "output format", "temperature",
         "max tokens", "seed", "examples", "mode", "measure", "hhem model")
# parts added after fingerprints were first recorded: absent from an older record is not a change (every licence
# would expire on upgrade); present and different is
LATER_PARTS = ("plug-in", "endpoint")


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


def fingerprint(project: Project, judge: Judge) -> dict[str, str]:
    """Each part as a short text (a hash where the part is long): equal parts, equal verdicts."""
    try:
        method = judge.model_id
    except RagevalError as exc:          # a plug-in's model_id that fails: named, and never equal to an audit's
        method = f"(could not be read: {exc})"
    parts: dict[str, Any] = {"kind": judge.kind, "model": method,
                             "endpoint model": judge.model or judge.params.get("model")}
    if judge.rubric_id is not None:
        rubric = rubrics.rubric_of(project, judge.rubric_id)
        parts["rubric"] = f"{rubric.name} v{rubric.version} {_digest([rubric.template, rubric.system])}"
        parts["output format"] = rubric.output_format
    if judge.calls_llm:
        parts.update({"temperature": judge.param("temperature"), "max tokens": judge.param("max_tokens"),
                      "seed": judge.param("seed")})
        # where the calls go: the base URL, or where a judge without one was last sent (OPENAI_BASE_URL, recorded by
        # its jobs) — never this process's environment, which a CI machine need not share
        parts["endpoint"] = safe_endpoint(judge.base_url or judge.params.get("endpoint_used") or DEFAULT_BASE_URL)
    origin = kind_origin(judge.kind)
    if origin:
        parts["plug-in"] = origin
    for key, part in (("examples", "examples"), ("mode", "mode"), ("measure", "measure")):
        if judge.params.get(key) is not None:
            parts[part] = judge.params[key] if key != "examples" else _digest(judge.params[key])
    try:
        kind = judge.kind_of
    except RagevalError:
        parts["kind"] = f"{judge.kind} (not installed)"
    else:
        try:   # what lives outside the project (a model folder)
            outside = guarded(kind, "naming what its verdicts depend on", kind.outside_parts, judge)
            parts.update({str(k): v for k, v in dict(outside).items()})
        except (RagevalError, TypeError, ValueError) as exc:
            parts["outside"] = f"(could not be read: {exc})"     # never equal to what an audit recorded
    return {k: "" if v is None else str(v) for k, v in parts.items()}


def changed(before: dict[str, str], now: dict[str, str]) -> list[str]:
    """The parts that differ (in PARTS order, then any other)."""
    names = [p for p in PARTS if p in before or p in now] + sorted((set(before) | set(now)) - set(PARTS))
    return [p for p in names if before.get(p, "") != now.get(p, "") and (p in before or p not in LATER_PARTS)]
