"""Judge kinds: one protocol, one registry (inspect_ai's scorers, datasette's plugins).

A kind says how a judge of its sort validates its settings, what its work items carry, what names its method in the
idempotency key and the cache, what it needs installed or registered, and — for kinds that score locally — how it
scores a chunk of items. Every kind, the built-in ones included, is registered under the Python entry point group
`rageval_desktop.judge_kinds` (see pyproject.toml; the README shows a plug-in kind in 30 lines). The rest of the app
asks the registry (`get_kind`, `kinds`) and never compares a kind's name.

Kinds with `calls_llm` are judged by the LLM engine of core/jobs (rubrics, the request cache, the Batch API, the nugget
and citation chains); the others score a chunk of items in the job's thread with `score`.
"""

from __future__ import annotations

import importlib
import json
import math
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from rageval_desktop.core.base.errors import JudgeConfigError, RagevalError, UnknownChoice
from rageval_desktop.core.base.vocab import MetricSpec

if TYPE_CHECKING:
    from rageval_desktop.core.judges.judge import Judge
    from rageval_desktop.core.judges.rubrics import Rubric
    from rageval_desktop.core.store.project import Project

ENTRY_POINT_GROUP = "rageval_desktop.judge_kinds"
# The built-in kinds, as pyproject.toml registers them (a test holds the two equal). Used only when the app runs
# without its distribution's metadata (a source folder on sys.path, a frozen bundle without metadata).
BUILTIN = {
    "llm": "rageval_desktop.core.judges.kinds.llm:KIND",
    "embedding": "rageval_desktop.core.judges.kinds.embedding:KIND",
    "lexical": "rageval_desktop.core.judges.kinds.lexical:KIND",
    "hhem": "rageval_desktop.core.judges.kinds.hhem:KIND",
    "peer": "rageval_desktop.core.judges.kinds.peer:KIND",
}


@dataclass
class Settings:
    """A judge's settings as asked for; a kind's `check` returns them validated and completed."""
    metric: str
    model: str | None = None
    base_url: str | None = None
    api_key_ref: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    rubric: str | None = None                      # the bundled rubric asked for (kinds that use rubrics)
    base_rubric: Rubric | None = None              # set by `check`: the rubric stored with the judge
    helpers: dict[str, Rubric] = field(default_factory=dict)   # set by `check`: further rubrics (nugget steps)


@dataclass
class Scored:
    """One item's verdict from a local kind."""
    score: float
    label: str | None = None
    rationale: str | None = None
    detail: dict[str, Any] | None = None
    latency_ms: float | None = None
    confidence: float | None = None     # how sure the kind is of this verdict, 0 to 1 (None: the score's distance
                                        # from the pass mark stands for it)
    declined: str | None = None         # why the kind gives this item no verdict (its score is not read): stored as
                                        # an error row saying so


class Target(Protocol):
    """What a kind scores: an item of a job's plan — the fields a rubric would render, and what `plan` added."""
    run_row_id: int
    fields: dict[str, str]
    meta: dict[str, Any]


def scored_problem(spec: MetricSpec, scored: Any) -> str | None:
    """Why a local kind's verdict cannot be stored as a score of this metric (None: it can). Checked at the
    boundary for every kind: a score of 99 on a 1-5 scale read as 1254.57 on the 0-100 scale, a text score broke
    every later metric, inf showed as "—"."""
    if not isinstance(scored, Scored):
        return f"the kind returned {type(scored).__name__}, not a Scored verdict"
    if scored.declined:
        return str(scored.declined)[:500]
    value = scored.score
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"the score {str(value)[:40]!r} is not a number"
    if not math.isfinite(value):
        return f"the score {value} is not a finite number"
    if not spec.low <= value <= spec.high:
        return f"the score {value:g} is outside {spec.name}'s scale {spec.low:g}-{spec.high:g}"
    sure = getattr(scored, "confidence", None)
    if sure is not None and (isinstance(sure, bool) or not isinstance(sure, (int, float))
                             or not 0.0 <= float(sure) <= 1.0):
        return f"the confidence {str(sure)[:40]!r} is not a number from 0 to 1"
    return _parts_problem(scored)


def _parts_problem(scored: Scored) -> str | None:
    """Why a verdict's label, rationale or detail cannot be stored (None: they can)."""
    for name in ("label", "rationale"):
        if getattr(scored, name) is not None and not isinstance(getattr(scored, name), str):
            return f"the {name} is {type(getattr(scored, name)).__name__}, not text"
    if scored.detail is not None:
        try:
            json.dumps(scored.detail, allow_nan=False)
        except (TypeError, ValueError) as exc:
            return f"the detail cannot be stored as JSON ({exc})"
    return None


class KindUnavailable(RagevalError):
    """What the kind needs is not installed or registered: the job stops and says how to add it."""


@runtime_checkable
class JudgeKind(Protocol):
    name: str           # stored with each judge; the CLI's --kind
    label: str          # one line for help and dialogs
    calls_llm: bool     # judged by the LLM engine (rubrics, endpoint calls, cost, batch)
    reads_passages: bool   # its items need the retrieved passages loaded (False: answer and reference are enough)
    needs: str          # what must be installed or registered for it to run ("" when nothing)
    takes_endpoint: bool   # reached at an endpoint (base URL, model, key): the dialog shows those fields
    choices: dict[str, dict[str, str]]   # settings with fixed values: {param: {value: what it means}}

    def can_judge(self, spec: MetricSpec) -> str | None:
        """None when a judge of this kind can score the metric; else why not, in words."""
        ...

    def check(self, project: Project, settings: Settings) -> Settings:
        """The settings validated and completed (defaults set); raises JudgeConfigError naming the problem."""
        ...

    def model_id(self, judge: Judge) -> str:
        """What the idempotency key and the caches know this judge's method by."""
        ...

    def plan(self, judge: Judge, row: dict[str, Any]) -> dict[str, Any] | None:
        """What a work item of this judge carries beyond the rubric fields (row: question, answer, reference,
        contexts, passages as (rank, text, in_prompt)); None: nothing."""
        ...

    def score(self, project: Project, judge: Judge, targets: Sequence[Target]) -> Iterator[Scored]:
        """Local kinds: a verdict for each target, in order (the job may stop between two)."""
        ...

    def outside_parts(self, judge: Judge) -> dict[str, str]:
        """What the verdicts depend on that lives outside the project (a model folder's identity), for the judge's
        fingerprint: a licence expires when it changes."""
        ...


class LocalKind:
    """Defaults for a kind that scores locally: no endpoint, no rubric, nothing extra planned."""
    name = ""
    label = ""
    calls_llm = False
    reads_passages = True
    needs = ""
    takes_endpoint = False
    choices: dict[str, dict[str, str]] = {}

    def can_judge(self, spec: MetricSpec) -> str | None:
        return None

    def check(self, project: Project, settings: Settings) -> Settings:
        if settings.api_key_ref or settings.base_url:
            raise JudgeConfigError(f"a {self.name} judge makes no network calls, so it takes no endpoint or key",
                                   cli_hint="drop --base-url and --api-key-env",
                                   gui_hint="clear the endpoint and the key")
        return check_choices(self, settings)

    def model_id(self, judge: Judge) -> str:
        return f"{self.name}:{judge.params.get('model') or 'default'}"

    def plan(self, judge: Judge, row: dict[str, Any]) -> dict[str, Any] | None:
        return None

    def score(self, project: Project, judge: Judge, targets: Sequence[Target]) -> Iterator[Scored]:
        raise NotImplementedError

    def outside_parts(self, judge: Judge) -> dict[str, str]:
        return {}


def check_choices(kind: Any, settings: Settings) -> Settings:
    """Each of the kind's fixed-value settings: its first value by default, else one of its values."""
    for param, options in kind.choices.items():
        value = settings.params.setdefault(param, next(iter(options)))
        if value not in options:
            raise UnknownChoice(f"a {kind.name} judge's {param} is one of {', '.join(options)} (not '{value}')")
    return settings


_KINDS: dict[str, JudgeKind] = {}
_SOURCES: dict[str, str] = {}
_VERSIONS: dict[str, str] = {}
BUILTIN_SOURCE = "rageval-desktop"
PROBLEMS: list[str] = []     # plug-ins that failed to load, in words (`rageval judges kinds` shows them)
_LOADED = False


def _load(value: str) -> Any:
    module, _, attr = value.partition(":")
    return getattr(importlib.import_module(module), attr)


def _discover() -> None:
    """Every kind under the entry point group, the built-in ones first (in BUILTIN's order), then plug-ins by name."""
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    from importlib.metadata import entry_points  # (3 ms: only when a kind is asked for, not for every command)

    found = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    for name in [*BUILTIN, *sorted(set(found) - set(BUILTIN))]:
        if name in _KINDS:
            continue
        ep = found.get(name)
        try:
            if ep is None:      # no metadata for the app itself (a checkout on sys.path): the same objects
                register(_load(BUILTIN[name]), source=BUILTIN_SOURCE)
            else:                  # a plug-in's import that hangs is left behind, as its calls are (`guarded`)
                register(_bounded_call(ep.load, (), _limit()), source=ep.dist.name if ep.dist else ep.value,
                         version=ep.dist.version if ep.dist else "")
        except TimeoutError:
            PROBLEMS.append(f"judge kind '{name}' ({ep.value if ep else BUILTIN[name]}) could not be loaded: its "
                            f"import gave no answer in {_limit():g} s")
        except Exception as exc:   # a broken plug-in must not take the app down: it is listed with its problem
            PROBLEMS.append(f"judge kind '{name}' ({ep.value if ep else BUILTIN[name]}) could not be loaded: "
                            f"{type(exc).__name__}: {exc}")


def register(kind: Any, *, source: str = "", version: str = "") -> None:
    """Add a kind (an entry point's object; tests may call this directly). Its name must be new. `source` and
    `version`: the distribution that brings it (a plug-in's name and version bind its judges' verdicts)."""
    if not isinstance(kind, JudgeKind) or not getattr(kind, "name", ""):
        raise JudgeConfigError(f"{kind!r} is not a judge kind (it needs name, label, calls_llm, reads_passages, "
                               "needs, takes_endpoint, choices, can_judge, check, model_id, plan, score and "
                               "outside_parts)")
    if kind.name in _KINDS and _KINDS[kind.name] is not kind:
        raise JudgeConfigError(f"two judge kinds are named '{kind.name}'")
    _KINDS[kind.name] = kind
    _SOURCES[kind.name] = source
    _VERSIONS[kind.name] = version


def kind_origin(name: str) -> str:
    """A plug-in kind's distribution and version ("acme-judges 0.2"), or "" for the app's own kinds and kinds not
    installed: part of its judges' method (the idempotency key, the cache) and fingerprint, so a new version of a
    plug-in re-judges and its licence expires. A kind may also declare its own parts (`outside_parts`)."""
    _discover()
    source = _SOURCES.get(name, BUILTIN_SOURCE)
    if source.replace("_", "-").lower() in (BUILTIN_SOURCE, ""):
        return ""
    version = _VERSIONS.get(name, "")
    return f"{source} {version}".strip()


def kinds() -> dict[str, JudgeKind]:
    _discover()
    return dict(_KINDS)


def source_of(name: str) -> str:
    _discover()
    return _SOURCES.get(name, "")


def get_kind(name: str) -> JudgeKind:
    _discover()
    found = _KINDS.get(name)
    if found is None:
        raise UnknownChoice(f"unknown judge kind '{name}'; the kinds installed are {', '.join(kinds())} (a "
                               "plug-in kind is installed as a Python package)")
    return found


def able_kinds(spec: MetricSpec) -> list[str]:
    """The kinds that can judge a metric (a plug-in whose `can_judge` fails can judge none)."""
    out = []
    for name, kind in kinds().items():
        try:
            if guarded(kind, "saying which metrics it judges", kind.can_judge, spec) is None:
                out.append(name)
        except RagevalError:
            continue
    return out


CALL_LIMIT_S = 30.0     # a plug-in kind's answer to anything but scoring (scoring has the judge's own limit)


def guarded(kind: Any, what: str, fn: Any, *args: Any) -> Any:
    """A call into a kind: what a plug-in raises other than a RagevalError is a JudgeConfigError naming the kind,
    its distribution and what it was doing — never an internal error of the app. A plug-in's call (not a built-in
    kind's) runs on a daemon thread of its own and is waited for CALL_LIMIT_S (`RAGEVAL_PLUGIN_LIMIT_S`): one that
    hangs is left behind and the caller stops with the kind named (issue 74: a plug-in hanging in `model_id` held a
    job in 'running' past 90 s), as scoring does under the judge's own time limit."""
    name = getattr(kind, "name", "?")
    origin = kind_origin(name)

    def failed(why: str) -> JudgeConfigError:
        return JudgeConfigError(f"judge kind '{name}'" + (f" ({origin})" if origin else "") + f" {why}")

    try:
        if not origin:
            return fn(*args)
        return _bounded_call(fn, args, _limit())
    except RagevalError:
        raise
    except TimeoutError:
        raise failed(f"gave no answer in {_limit():g} s while {what}; it is left behind (set "
                     "RAGEVAL_PLUGIN_LIMIT_S to allow it longer)") from None
    except Exception as exc:
        raise failed(f"failed while {what}: {type(exc).__name__}: {str(exc)[:200]}") from None


def _limit() -> float:
    try:
        return max(0.01, float(os.environ.get("RAGEVAL_PLUGIN_LIMIT_S", CALL_LIMIT_S)))
    except ValueError:
        return CALL_LIMIT_S


def _bounded_call(fn: Callable[..., object], args: tuple[object, ...], limit: float) -> object:
    """fn(*args) on a daemon thread, waited for `limit` seconds: its result, what it raised, or TimeoutError."""
    import threading

    done: dict[str, object] = {}

    def run() -> None:
        try:
            done["value"] = fn(*args)
        except BaseException as exc:   # handed to the caller
            done["error"] = exc

    worker = threading.Thread(target=run, name="kind-call", daemon=True)
    worker.start()
    worker.join(limit)
    if worker.is_alive():
        raise TimeoutError
    error = done.get("error")
    if isinstance(error, BaseException):
        raise error
    return done.get("value")
