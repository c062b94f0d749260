"""Judges stored in the project: a metric + a method (LLM endpoint + rubric, or an embedded scorer).

API keys are never stored: a judge keeps a reference (`env:VAR` or `keyring:SERVICE:USER`), resolved only
in the process that makes the calls.
"""

from __future__ import annotations

import json
from typing import Any

from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.base.errors import JudgeConfigError, NotFound
from rageval_desktop.core.base.secret_shapes import shown
from rageval_desktop.core.base.text import lookalike, name_problem
from rageval_desktop.core.base.vocab import METRICS
from rageval_desktop.core.judges import llm, rubrics
from rageval_desktop.core.judges.judge import Judge
from rageval_desktop.core.judges.kinds import Settings, able_kinds, get_kind, guarded
from rageval_desktop.core.judges.secrets import check_base_url, check_key_ref, check_model_name, check_params
from rageval_desktop.core.store.changes import Area
from rageval_desktop.core.store.project import Project


def add_judge(project: Project, name: str, metric: str, kind: str, *, rubric: str | None = None,
              model: str | None = None, base_url: str | None = None, api_key_ref: str | None = None,
              params: dict[str, Any] | None = None) -> Judge:
    if metric not in METRICS:
        raise JudgeConfigError(f"unknown metric '{metric}'; choose one of {', '.join(METRICS)}")
    judge_kind = get_kind(kind)
    problem = name_problem(name.strip()) if name.strip() else "is empty"
    if problem:
        raise JudgeConfigError(f"the judge's name {problem}")
    twin = lookalike(name, [n for (n,) in project.reader().execute("SELECT name FROM judges")])
    if twin:
        raise JudgeConfigError(f"the name '{name}' reads like the existing judge '{twin}' (they differ only in case or "
                               "width); choose a name that cannot be mistaken for it")
    spec = METRICS[metric]
    reason = guarded(judge_kind, "saying which metrics it judges", judge_kind.can_judge, spec)
    if reason is not None:
        able = able_kinds(spec)
        raise JudgeConfigError(f"{reason}; {metric} takes a {' or '.join(able)} judge",
                               cli_hint=f"use --kind {' or --kind '.join(able)}",
                               gui_hint=f"choose a {' or '.join(able)} judge")
    check_params(dict(params or {}))
    settings = guarded(judge_kind, "checking the judge's settings", judge_kind.check, project,
                       Settings(metric, model, base_url, api_key_ref, dict(params or {}), rubric))
    if not isinstance(settings, Settings):
        raise JudgeConfigError(f"judge kind '{kind}' checked the settings and returned {type(settings).__name__}, "
                               "not Settings; nothing was added")
    model, base_url, api_key_ref, params = settings.model, settings.base_url, settings.api_key_ref, settings.params
    # what a kind's check returns is stored as it is: a plug-in that adds a key to the settings is refused too
    check_params(params if isinstance(params, dict) else {}, f"the settings judge kind '{kind}' returned")
    base, helpers = settings.base_rubric, settings.helpers
    with project.write("add judge", changed=(Area.JUDGES,)) as conn:
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
# What the verdicts depend on: changing one in place is recorded, and the judge's licence expires (its audit was of
# the judge as it was; core.review.licence) — and so does a new base URL (the fingerprint's endpoint). A rubric is
# changed by its text (`rubric`: a new version is stored) or, to undo that, by the stored version (`rubric_id`).
VERDICT_SETTINGS = {"model", "temperature", "max_tokens", "seed", "rubric", "rubric_id"}


def update_judge(project: Project, name: str, *, unset: tuple[str, ...] = (), **changes: Any) -> Judge:
    """Change a judge: how it is reached (endpoint, key, concurrency, timeout, rate), or — for a judge with a model
    and a rubric — what it judges with (model, rubric text, sampling). The second kind expires its licence until it
    is audited again; both are in the audit log. `unset`: settings taken back to their default (an undo of a
    setting that had none)."""
    judge = get_judge(project, name)
    unknown = (set(changes) | set(unset)) - EDITABLE - VERDICT_SETTINGS
    if unknown:
        raise JudgeConfigError(f"cannot change {', '.join(sorted(unknown))} of a judge; clone it instead")
    verdict = {k: changes.pop(k) for k in list(changes) if k in VERDICT_SETTINGS}
    if (verdict or set(unset) & VERDICT_SETTINGS) and not judge.calls_llm:
        raise JudgeConfigError(f"a {judge.kind} judge has no model, rubric or sampling to change; add another judge")
    params = dict(judge.params)
    base_url, key_ref, model, rubric_id = judge.base_url, judge.api_key_ref, judge.model, judge.rubric_id
    if "base_url" in changes:
        base_url = check_base_url(changes.pop("base_url"))
    if "api_key_ref" in changes:
        key_ref = check_key_ref(changes.pop("api_key_ref"))
    if verdict.get("model"):
        model = str(verdict.pop("model")).strip()
        check_model_name(model, key_ref)
    for key in ("temperature", "max_tokens", "seed"):
        if verdict.get(key) is not None:
            params[key] = verdict.pop(key)
    params.update({k: v for k, v in changes.items() if v is not None})
    for key in unset:
        params.pop(key, None)
    base_url = None if "base_url" in unset else base_url
    key_ref = None if "api_key_ref" in unset else key_ref
    with project.write("edit judge", changed=(Area.JUDGES,)) as conn:
        if verdict.get("rubric"):
            assert rubric_id is not None
            rubric_id = rubrics.save_new_version(conn, rubrics.load(conn, rubric_id), str(verdict["rubric"])).id
        elif verdict.get("rubric_id"):
            rubric_id = rubrics.load(conn, int(verdict["rubric_id"])).id
        conn.execute("UPDATE judges SET base_url = ?, api_key_ref = ?, model = ?, rubric_id = ?, params = ? "
                     "WHERE id = ?", (base_url, key_ref, model, rubric_id, json.dumps(params), judge.id))
        project.audit(conn, "edit judge", "judge", name, base_url=base_url, api_key_ref=key_ref, model=model,
                      rubric_id=rubric_id, params=params)
    return get_judge(project, name)


ENDPOINT_USED = "endpoint_used"   # params: where a judge without a base URL last sent its calls (OPENAI_BASE_URL)


def note_endpoints(project: Project, judges: list[Judge], what: str) -> dict[str, str]:
    """Where each LLM judge's calls go now, named for the job's record ({judge: endpoint}). A judge without a base
    URL follows OPENAI_BASE_URL: when that differs from where it last went, the judge's record says so (its
    fingerprint's endpoint changes and a licence earned elsewhere expires) and the audit log names both."""
    out: dict[str, str] = {}
    moved: list[tuple[Judge, str]] = []
    for judge in judges:
        if not judge.calls_llm:
            continue
        out[judge.name] = llm.endpoint_label(judge.base_url)
        if judge.base_url is None and judge.params.get(ENDPOINT_USED) != out[judge.name]:
            moved.append((judge, out[judge.name]))
    if moved:
        with project.write("note judge endpoint", changed=(Area.JUDGES,)) as conn:
            for judge, endpoint in moved:
                before = judge.params.get(ENDPOINT_USED)
                judge.params[ENDPOINT_USED] = endpoint
                conn.execute("UPDATE judges SET params = ? WHERE id = ?", (json.dumps(judge.params), judge.id))
                project.audit(conn, "judge endpoint", "judge", judge.name, endpoint=endpoint, before=before,
                              via="OPENAI_BASE_URL" if llm.resolved_base_url(None) else "the client's default",
                              job=what)
    return out


def clone_with_rubric(project: Project, judge: Judge, template: str, name: str | None = None) -> Judge:
    """A rewritten rubric never edits the judge people rated against: it becomes a new rubric version and a
    new judge (parent = the old one), which can be run on the rows already rated."""
    if not judge.calls_llm or judge.rubric_id is None:
        raise JudgeConfigError("only LLM judges have a rubric to rewrite")
    with project.write("clone judge with edited rubric", changed=(Area.JUDGES,)) as conn:
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
    jid, name, metric, kind, rubric_id, model, base_url, api_key_ref, params, status = row
    try:
        settings = json.loads(params)
    except (TypeError, ValueError):     # a damaged file (its pages are sound, a value in them is not)
        settings = None
    if not isinstance(settings, dict):
        raise JudgeConfigError(f"judge '{name}': its settings in the project file are damaged (not a JSON object); "
                               "restore a backup (rageval backups lists them)")
    return Judge(jid, name, metric, kind, rubric_id, model, base_url, api_key_ref, settings, status)


def preload_client(project: Project) -> bool:
    """Import the model client ahead, on a thread, when an active judge of the project calls a model: a job started
    later starts its calls at once (the import is 0.5 s). For a helper thread: it reads with a connection of its own.
    Returns whether it did."""
    with project.extra_reader() as conn:
        active = [_judge(r) for r in conn.execute(f"SELECT {_COLUMNS} FROM judges WHERE status = 'active'")]
    wanted = any(j.calls_llm for j in active)
    if wanted:
        llm.preload()
    return wanted


def list_judges(project: Project) -> list[Judge]:
    return [_judge(r) for r in project.reader().execute(f"SELECT {_COLUMNS} FROM judges ORDER BY id")]


def get_judge(project: Project, name: str) -> Judge:
    row = project.reader().execute(f"SELECT {_COLUMNS} FROM judges WHERE name = ?", (name,)).fetchone()
    if row is None:
        names = ", ".join(j.name for j in list_judges(project)) or "none"
        raise NotFound(f"no judge named '{name}' (judges: {names})")
    return _judge(row)


def judge_summary(judge: Judge) -> dict[str, Any]:
    """What `judges list --json` and the app show: everything but secrets (a judge holds references to keys; a
    setting that holds one, stored before that was refused, is shown as a marker)."""
    return {"name": judge.name, "metric": judge.metric, "kind": judge.kind, "model": judge.model,
            "base_url": judge.base_url, "api_key_ref": judge.api_key_ref, "params": shown(judge.params),
            "status": judge.status, "rubric_id": judge.rubric_id, "calls_llm": judge.calls_llm}
