"""Judges stored in the project: a metric + a method (LLM endpoint + rubric, or an embedded scorer).

API keys are never stored: a judge keeps a reference (`env:VAR` or `keyring:SERVICE:USER`), resolved only
in the process that makes the calls.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.base.errors import JudgeConfigError, NotFound
from rageval_desktop.core.base.text import lookalike, name_problem
from rageval_desktop.core.base.vocab import KINDS, LLM_DEFAULTS, METRICS, MetricSpec
from rageval_desktop.core.judges import rubrics
from rageval_desktop.core.judges.embed_endpoint import model_id, parse
from rageval_desktop.core.judges.embedded import LEXICAL
from rageval_desktop.core.judges.hhem import MODES
from rageval_desktop.core.judges.secrets import check_base_url, check_key_ref, check_model_name
from rageval_desktop.core.store.project import Project


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

            return f"embedding:{parse(self.params['model'])[0]}"
        return f"{self.kind}:{self.params.get('measure') or self.params.get('model') or 'default'}"


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
