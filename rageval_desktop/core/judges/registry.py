"""Judges stored in the project: a metric + a method (LLM endpoint + rubric, or an embedded scorer).

API keys are never stored: a judge keeps a reference (`env:VAR` or `keyring:SERVICE:USER`), resolved only
in the process that makes the calls.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

from rageval_desktop.core.errors import NotFound, RagevalError
from rageval_desktop.core.judges import rubrics
from rageval_desktop.core.store.project import Project, utcnow
from rageval_desktop.core.text import lookalike, name_problem


@dataclass(frozen=True)
class MetricSpec:
    name: str
    low: float
    high: float
    level: str            # "row": one score per run row; "passage": one per retrieved passage
    needs_reference: bool = False
    default_rubric: str | None = None
    pass_mark: float | None = None  # a score under it counts as a failure
    items: str | None = None        # sub-items judged within a row ("nugget", "citation"), kept in the detail
    kinds: tuple[str, ...] = ("llm",)  # the methods that can judge it (embedded judges: see add_judge)


METRICS: dict[str, MetricSpec] = {m.name: m for m in (
    MetricSpec("correctness", 1, 5, "row", True, "correctness", 4),
    MetricSpec("correctness_binary", 0, 1, "row", True, "correctness_binary", 1),
    MetricSpec("faithfulness", 1, 5, "row", False, "faithfulness", 4),
    MetricSpec("answer_relevance", 1, 5, "row", False, "answer_relevance", 4),
    MetricSpec("passage_relevance", 0, 3, "passage", False, "passage_relevance_umbrela", 2),
    MetricSpec("answered", 0, 1, "row", False, "answered", 1),   # open-rag-eval's no-answer check: "% answered"
    # AutoNuggetizer (TREC 2024 RAG, as open-rag-eval runs it): the row score is the weighted nugget score
    MetricSpec("nuggets", 0, 1, "row", False, "nugget_assignment", None, items="nugget"),
    # each answer sentence against each passage it cites: the row score is the citation F1
    MetricSpec("citation_support", 0, 1, "row", False, "citation_support", None, items="citation"),
    # HHEM-2.1-Open, a local model: 1 = consistent with the passages, under 0.5 = hallucinated
    MetricSpec("hallucination", 0, 1, "row", False, None, 0.5, kinds=("hhem",)),
)}
KINDS = ("llm", "embedding", "lexical", "hhem")
LLM_DEFAULTS: dict[str, Any] = {"temperature": 0.0, "max_tokens": 512, "seed": 0, "timeout": 120.0,
                                "concurrency": 16, "max_retries": 4, "rpm": None, "passages_k": 5}
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class JudgeConfigError(RagevalError):
    pass


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

    def param(self, key: str) -> Any:
        return self.params.get(key, LLM_DEFAULTS.get(key))

    def request_params(self) -> dict[str, Any]:
        """The sampling parameters of each call — part of the request cache's key, so a job and its dry run
        must build them the same way."""
        return {"temperature": self.param("temperature"), "max_tokens": self.param("max_tokens"),
                "seed": self.param("seed")}

    @property
    def model_id(self) -> str:
        """What the idempotency key and the cache know this judge's method by."""
        if self.kind == "llm":  # the endpoint may move (a new vLLM host) without changing the judge
            return f"llm:{self.model}"
        if self.kind == "hhem":
            return f"hhem:{self.params.get('model') or 'registered'}"
        if self.kind == "embedding" and self.params.get("model"):   # an endpoint may move too: its model's name
            from rageval_desktop.core.judges.embed_endpoint import parse

            return f"embedding:{parse(self.params['model'])[0]}"
        return f"{self.kind}:{self.params.get('measure') or self.params.get('model') or 'default'}"


# Prefixes of real API keys (OpenAI, Anthropic, Hugging Face, Groq, xAI, GitHub, AWS, Google, Slack, Stripe...):
# a value starting with one is a key pasted where its NAME belongs.
_KEY_PREFIXES = ("sk-", "sk_", "pk-", "rk-", "hf_", "gsk_", "xai-", "ghp_", "gho_", "ghs_", "github_pat_", "akia",
                 "asia", "aiza", "xoxb-", "xoxp-", "glpat-", "sess-", "org-", "ya29.", "eyj", "nvapi-", "pplx-",
                 "fw_", "r8_", "tgp_", "key-", "api-")


def looks_like_a_key(value: str) -> bool:
    """True for text that is probably a secret rather than a name: a known key prefix, or a long run of letters
    and digits that mixes cases and digits the way generated keys do (names are words: OPENAI_API_KEY)."""
    low = value.lower()
    if low.startswith(_KEY_PREFIXES):
        return True
    core = re.sub(r"[^A-Za-z0-9]", "", value)
    mixed = any(c.islower() for c in core) + any(c.isupper() for c in core) + any(c.isdigit() for c in core)
    return len(core) >= 20 and (mixed == 3 or sum(c.isdigit() for c in core) >= 8)


def check_key_ref(ref: str | None) -> str | None:
    """Accept `VAR`, `env:VAR` or `keyring:SERVICE:USER`; refuse anything that looks like a key itself — the
    refusal never repeats the value."""
    if ref is None or ref == "":
        return None
    never = "never the key itself (nothing was stored)"
    if ref.startswith("keyring:"):
        parts = ref.split(":")
        if len(parts) != 3 or not all(parts[1:]):
            raise JudgeConfigError("a keyring reference looks like keyring:SERVICE:USER")
        if any(looks_like_a_key(part) for part in parts[1:]):
            raise JudgeConfigError(f"a keyring reference names the SERVICE and USER of an entry, {never}")
        return ref
    name = ref[4:] if ref.startswith("env:") else ref
    if not _ENV_NAME.match(name) or len(name) > 64 or looks_like_a_key(name):
        raise JudgeConfigError("give the NAME of an environment variable that holds the API key (for example "
                               f"OPENAI_API_KEY), or keyring:SERVICE:USER — {never}")
    return f"env:{name}"


def check_model_name(model: str, api_key_ref: str | None = None) -> None:
    """A key pasted as --model was stored and shown in every report: refuse a model name that starts like a key or
    equals the key the reference resolves to — the refusal never repeats the value."""
    looks = model.lower().startswith(_KEY_PREFIXES) and len(model) >= 20
    same = False
    if api_key_ref and not looks:
        try:
            same = resolve_api_key(api_key_ref) == model
        except RagevalError:
            same = False
    if looks or same:
        raise JudgeConfigError("the model's name (for example gpt-4o-mini) looks like an API key; nothing was stored",
                               cli_hint="give the key by the name of an environment variable with --api-key-env",
                               gui_hint="put the key in an environment variable and give its name as the API key")


_SECRET_QUERY = re.compile(r"(key|token|secret|password|passwd|pwd|auth|sig|signature|credential)", re.I)


def check_base_url(url: str | None) -> str | None:
    """An endpoint address, never a carrier of credentials (`https://user:KEY@host`, `?api_key=...`): those would be
    stored in the project, shown in the GUI and written to reports."""
    if url is None or not url.strip():
        return None
    from urllib.parse import parse_qsl, urlsplit

    url = url.strip()
    try:
        parts = urlsplit(url)
    except ValueError:
        raise JudgeConfigError("the base URL is not a valid address") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise JudgeConfigError("the base URL must be an http(s) address such as http://localhost:8000/v1")
    if parts.username or parts.password:
        raise JudgeConfigError("the base URL carries credentials (user:secret@host); remove them and give the key "
                               "by --api-key-env NAME or a keyring entry (nothing was stored)")
    if any(_SECRET_QUERY.search(k) or looks_like_a_key(v) for k, v in parse_qsl(parts.query)) or \
            any(looks_like_a_key(seg) for seg in parts.path.split("/")):
        raise JudgeConfigError("the base URL seems to carry a key (in its query or path); give the key by "
                               "--api-key-env NAME or a keyring entry (nothing was stored)")
    return url


def resolve_api_key(ref: str | None) -> str:
    """The key for a call. Local servers (vLLM, Ollama, llama.cpp) need none: a placeholder is sent."""
    if ref is None:
        return "not-needed"
    if ref.startswith("env:"):
        value = os.environ.get(ref[4:])
        if not value:
            raise JudgeConfigError(f"the environment variable {ref[4:]} that should hold the API key is not set")
        return value
    import keyring

    _, service, user = ref.split(":")
    value = keyring.get_password(service, user)
    if not value:
        raise JudgeConfigError(f"no keyring entry for service '{service}', user '{user}'")
    return value


def add_judge(project: Project, name: str, metric: str, kind: str, *, rubric: str | None = None,
              model: str | None = None, base_url: str | None = None, api_key_ref: str | None = None,
              params: dict[str, Any] | None = None) -> Judge:
    if metric not in METRICS:
        raise JudgeConfigError(f"unknown metric '{metric}'; choose one of {', '.join(METRICS)}")
    if kind not in KINDS:
        raise JudgeConfigError(f"unknown kind '{kind}'; choose one of {', '.join(KINDS)}")
    problem = name_problem(name.strip()) if name.strip() else "is empty"
    if problem:
        raise JudgeConfigError(f"the judge's name {problem}")
    twin = lookalike(name, [n for (n,) in project.reader().execute("SELECT name FROM judges")])
    if twin:
        raise JudgeConfigError(f"the name '{name}' reads like the existing judge '{twin}' (they differ only in case or "
                               "width); choose a name that cannot be mistaken for it")
    spec = METRICS[metric]
    params = dict(params or {})
    helpers: dict[str, rubrics.Rubric] = {}
    if kind in ("llm", "hhem") and kind not in spec.kinds:
        able = [m for m, s in METRICS.items() if kind in s.kinds]
        raise JudgeConfigError(f"{metric} is not judged by a {kind} judge (that kind judges {', '.join(able)}); "
                               f"{metric} takes a {' or '.join(spec.kinds)} judge",
                               cli_hint=f"use --kind {' or --kind '.join(spec.kinds)}")
    if kind == "llm":
        if not model:
            raise JudgeConfigError("an LLM judge needs a model name", cli_hint="give it with --model",
                                   gui_hint="fill in Model")
        api_key_ref = check_key_ref(api_key_ref)
        check_model_name(model, api_key_ref)
        base_url = check_base_url(base_url)
        base = rubrics.library().get(rubric or spec.default_rubric or "")
        if base is None:
            raise JudgeConfigError(f"no rubric named '{rubric}' (bundled: {', '.join(rubrics.library())})")
        if base.metric != metric:
            raise JudgeConfigError(f"rubric '{base.name}' scores {base.metric}, not {metric}")
        if spec.items == "nugget":
            if base.output_format != "assignment_labels":
                raise JudgeConfigError(f"rubric '{base.name}' is a step of the nugget chain, not its assignment "
                                       f"rubric (use nugget_assignment)")
            helpers = {role: rubrics.library()[f"nugget_{role}"] for role in ("creation", "importance")}
            grader = params.get("grader")
            if grader:
                found = get_judge(project, grader)
                if found.metric != "passage_relevance":
                    raise JudgeConfigError(f"the grader '{grader}' must be a passage_relevance (UMBRELA) judge")
    elif kind == "hhem":
        if api_key_ref or base_url or model:
            raise JudgeConfigError("an HHEM judge runs the local model registered with `rageval models add hhem "
                                   "PATH`: drop --model, --base-url and --api-key-env")
        params.setdefault("mode", "whole")
        from rageval_desktop.core.judges.hhem import MODES

        if params["mode"] not in MODES:
            raise JudgeConfigError(f"an HHEM judge's mode is one of {', '.join(MODES)} (not '{params['mode']}')")
        base = None
    else:
        if spec.level != "row" or not spec.needs_reference:
            raise JudgeConfigError(f"embedded judges compare the answer with the reference; they cannot score "
                                   f"{metric} (use correctness or correctness_binary)")
        if (api_key_ref or base_url) and kind != "embedding":
            raise JudgeConfigError("a lexical judge makes no network calls, so it takes no endpoint or key",
                                   cli_hint="drop --base-url and --api-key-env",
                                   gui_hint="clear the endpoint and the key")
        if kind == "embedding" and base_url:   # embeddings from a /v1/embeddings server
            from rageval_desktop.core.judges.embed_endpoint import model_id

            if not model:
                raise JudgeConfigError("an embedding judge on an endpoint needs the server's model name",
                                       cli_hint="give it with --model", gui_hint="fill in Model")
            api_key_ref = check_key_ref(api_key_ref)
            base_url = check_base_url(base_url)
            params["model"] = model_id(base_url, model, api_key_ref)
        elif api_key_ref:
            raise JudgeConfigError("a key goes with an embeddings endpoint, and none is given",
                                   cli_hint="add --base-url, or drop --api-key-env",
                                   gui_hint="fill in the endpoint, or clear the key")
        base = None
        if kind == "lexical":
            params.setdefault("measure", "f1")
            from rageval_desktop.core.judges.embedded import LEXICAL

            if params["measure"] not in LEXICAL:
                raise JudgeConfigError(f"a lexical judge measures {', '.join(LEXICAL)} (not '{params['measure']}')")
        else:
            params.setdefault("model", "all-MiniLM-L6-v2")
    with project.write("add judge", changed=("judges",)) as conn:
        if conn.execute("SELECT 1 FROM judges WHERE name = ?", (name,)).fetchone():
            raise JudgeConfigError(f"a judge named '{name}' already exists")
        rubric_id = rubrics.ensure_stored(conn, base).id if base else None
        for role, helper in helpers.items():
            params[f"{role}_rubric_id"] = rubrics.ensure_stored(conn, helper).id
        conn.execute(
            "INSERT INTO judges (name, metric, kind, rubric_id, model, base_url, api_key_ref, params, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (name, metric, kind, rubric_id, model, base_url, api_key_ref, json.dumps(params), utcnow()))
        project.audit(conn, "add judge", "judge", name, metric=metric, kind=kind, model=model, base_url=base_url)
    return get_judge(project, name)


EDITABLE = {"base_url", "api_key_ref", "concurrency", "timeout", "rpm", "max_retries"}


def update_judge(project: Project, name: str, **changes: Any) -> Judge:
    """Change how a judge is reached, never what it judges with (model, rubric and sampling stay: changing
    them makes a different judge, which is what cloning is for)."""
    judge = get_judge(project, name)
    unknown = set(changes) - EDITABLE
    if unknown:
        raise JudgeConfigError(f"cannot change {', '.join(sorted(unknown))} of a judge; clone it instead")
    params = dict(judge.params)
    base_url, key_ref = judge.base_url, judge.api_key_ref
    if "base_url" in changes:
        base_url = check_base_url(changes.pop("base_url"))
    if "api_key_ref" in changes:
        key_ref = check_key_ref(changes.pop("api_key_ref"))
    params.update({k: v for k, v in changes.items() if v is not None})
    with project.write("edit judge", changed=("judges",)) as conn:
        conn.execute("UPDATE judges SET base_url = ?, api_key_ref = ?, params = ? WHERE id = ?",
                     (base_url, key_ref, json.dumps(params), judge.id))
        project.audit(conn, "edit judge", "judge", name, base_url=base_url, api_key_ref=key_ref, params=params)
    return get_judge(project, name)


def clone_with_rubric(project: Project, judge: Judge, template: str, name: str | None = None) -> Judge:
    """A rewritten rubric never edits the judge people rated against: it becomes a new rubric version and a
    new judge (parent = the old one), which can be run on the rows already rated."""
    if judge.kind != "llm" or judge.rubric_id is None:
        raise JudgeConfigError("only LLM judges have a rubric to rewrite")
    with project.write("clone judge with edited rubric", changed=("judges",)) as conn:
        base = rubrics.load(conn, judge.rubric_id)
        edited = rubrics.save_new_version(conn, base, template)
        new_name = name or f"{judge.name}-r{edited.version}"
        if conn.execute("SELECT 1 FROM judges WHERE name = ?", (new_name,)).fetchone():
            raise JudgeConfigError(f"a judge named '{new_name}' already exists")
        conn.execute(
            "INSERT INTO judges (name, metric, kind, rubric_id, model, base_url, api_key_ref, params, parent_id, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (new_name, judge.metric, judge.kind, edited.id, judge.model, judge.base_url, judge.api_key_ref,
             json.dumps(judge.params), judge.id, utcnow()))
        project.audit(conn, "clone judge", "judge", new_name, parent=judge.name, rubric=edited.name,
                      rubric_version=edited.version)
    return get_judge(project, new_name)


_COLUMNS = "id, name, metric, kind, rubric_id, model, base_url, api_key_ref, params, status"


def _judge(row: tuple) -> Judge:
    *head, params, status = row
    return Judge(*head, params=json.loads(params), status=status)


def list_judges(project: Project) -> list[Judge]:
    return [_judge(r) for r in project.reader().execute(f"SELECT {_COLUMNS} FROM judges ORDER BY id")]


def get_judge(project: Project, name: str) -> Judge:
    row = project.reader().execute(f"SELECT {_COLUMNS} FROM judges WHERE name = ?", (name,)).fetchone()
    if row is None:
        names = ", ".join(j.name for j in list_judges(project)) or "none"
        raise NotFound(f"no judge named '{name}' (judges: {names})")
    return _judge(row)


def judge_summary(judge: Judge) -> dict[str, Any]:
    """What `judges list --json` shows: everything but secrets (there are none to hide: only references)."""
    return {"name": judge.name, "metric": judge.metric, "kind": judge.kind, "model": judge.model,
            "base_url": judge.base_url, "api_key_ref": judge.api_key_ref, "params": judge.params,
            "status": judge.status, "rubric_id": judge.rubric_id}
