"""Decisions on record: a gate's verdict kept with everything it rested on, signed, in a chain.

A record holds the gate's rule and parameters (and its configuration), every verdict with its interval and n, the
waivers, the judges with their fingerprints and licences, the app's version, who and when, the hash of the
project's previous record, and `inputs`: a hash of each part of the data the decision used — each run's rows (every
column), their retrieved passages and their judgments, the golden set, the judges as they are, and the ratings and
audits made until then (a hash tree: the parts' hashes, and their root). Its own hash is the SHA-256 of its
canonical JSON; an Ed25519 signature over that hash (core.reports.signing) says who recorded it.

`verify` checks, for each stored record and each file: the hash, the link to the previous record, the signature
and that its signer is allowed (an allowed-signers file from the repository, or the project's list), and
recomputes the inputs from the project, naming each part that changed since. Anyone can rehash a chain with
hashlib; no one can sign for a key they do not hold."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import uuid
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rageval_desktop._version import __version__
from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.base.paths import read_small_text
from rageval_desktop.core.base.text import md_escape
from rageval_desktop.core.judges.fingerprint import fingerprint
from rageval_desktop.core.judges.registry import list_judges
from rageval_desktop.core.metrics.gate import GateResult
from rageval_desktop.core.metrics.gate_config import META_KEY
from rageval_desktop.core.metrics.gate_text import gate_markdown
from rageval_desktop.core.reports import signing
from rageval_desktop.core.review.licence import licence
from rageval_desktop.core.review.settings import policy
from rageval_desktop.core.store.changes import Area
from rageval_desktop.core.store.project import Project

FORMAT = 2                     # 1: hash and chain only (before 0.4); 2: inputs bound, signed
SIGNERS_KEY = "allowed_signers"
UNSIGNED = ("hash", "signature")
_HASH = re.compile(r"^[0-9a-f]{64}$")
Record = dict[str, Any]        # a decision record, its parts or a verification's findings, as JSON holds them


def canonical(record: Record) -> bytes:
    # (surrogatepass: a file may hold a lone "\ud800"; it hashes, and differs, rather than stopping the check)
    return json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                      default=str).encode("utf-8", "surrogatepass")


def digest(record: Record) -> str:
    """The record's hash: of everything in it but the hash and the signature."""
    return hashlib.sha256(canonical({k: v for k, v in record.items() if k not in UNSIGNED})).hexdigest()


# ------------------------------------------------------------------------------------------------ the inputs' tree
def _hash_rows(conn: sqlite3.Connection, sql: str, params: tuple[object, ...] = ()) -> Record:
    h = hashlib.sha256()
    n = 0
    for row in conn.execute(sql, params):
        h.update(repr(tuple(row)).encode("utf-8", "surrogatepass"))
        h.update(b"\n")
        n += 1
    return {"rows": n, "hash": h.hexdigest()}


def _run_parts(conn: sqlite3.Connection, name: str) -> Record:
    found = conn.execute("SELECT id FROM runs WHERE name = ?", (name,)).fetchone()
    if found is None:
        return {"run": {"rows": 0, "hash": None}}
    rid = (found[0],)
    return {
        "rows": _hash_rows(conn, "SELECT id, position, external_id, golden_id, question, answer, latency_ms, "
                                 "cost_usd, prompt_tokens, completion_tokens, metadata FROM run_rows WHERE run_id = ? "
                                 "ORDER BY id", rid),
        "passages": _hash_rows(conn, "SELECT p.run_row_id, p.rank, p.chunk_id, p.text, p.score, p.in_prompt FROM "
                                     "retrieved_passages p JOIN run_rows r ON r.id = p.run_row_id WHERE r.run_id = ? "
                                     "ORDER BY p.run_row_id, p.rank", rid),
        "judgments": _hash_rows(conn, "SELECT j.id, j.judge_id, j.run_row_id, j.passage_rank, j.idem_key, j.status, "
                                      "j.error_kind, j.score, j.label, j.detail FROM judgments j JOIN run_rows r ON "
                                      "r.id = j.run_row_id WHERE r.run_id = ? ORDER BY j.id", rid),
    }


def inputs(project: Project, baseline: str, candidate: str, upto: dict[str, int] | None = None) -> Record:
    """The hash of each part of the data a decision between `baseline` and `candidate` rests on. Ratings and audits
    are bound up to the newest one at the time (`upto`; now when None): later ones do not change the record's."""
    conn = project.reader()
    if upto is None:
        upto = {"ratings": conn.execute("SELECT COALESCE(MAX(id), 0) FROM human_ratings").fetchone()[0],
                "audits": conn.execute("SELECT COALESCE(MAX(id), 0) FROM agreement_reports").fetchone()[0]}
    parts: Record = {"upto": dict(upto)}
    for role, name in (("baseline", baseline), ("candidate", candidate)):
        for part, found in _run_parts(conn, name).items():
            parts[f"{role}.{part}"] = found
    parts["golden"] = _hash_rows(conn, "SELECT id, question, gold_answer, gold_chunk_ids, slice_tag, status, revision "
                                       "FROM golden_rows ORDER BY id")
    parts["ratings"] = _hash_rows(conn, "SELECT id, run_row_id, metric, passage_rank, reviewer, score, skipped, "
                                        "sample_id, created_at, withdrawn_at FROM human_ratings WHERE id <= ? "
                                        "ORDER BY id", (upto["ratings"],))
    parts["audits"] = _hash_rows(conn, "SELECT id, judge_id, details, created_at FROM agreement_reports WHERE id <= ? "
                                       "ORDER BY id", (upto["audits"],))
    judges = [{"name": j.name, "metric": j.metric, "kind": j.kind, "status": j.status,
               "fingerprint": fingerprint(project, j)} for j in list_judges(project)]
    parts["judges"] = {"rows": len(judges), "hash": hashlib.sha256(canonical({"judges": judges})).hexdigest()}
    values = deciding_settings(project)
    parts["settings"] = {"rows": len(values), "hash": hashlib.sha256(canonical(values)).hexdigest(), "values": values}
    return parts


def deciding_settings(project: Project) -> Record:
    """Every project setting that decides a verdict: the retirement policy (statistic, threshold, n, rule, bias
    margin), the licences' monitoring floor, selective judging's α and δ, and the gate configuration kept in the
    project (its hash: a file's configuration is in the record's rules)."""
    saved = project.meta(META_KEY) or ""
    return {**{f"retirement.{k}": v for k, v in asdict(policy(project)).items()},
            "gate_config": hashlib.sha256(saved.encode("utf-8", "surrogatepass")).hexdigest() if saved else None}


def root(parts: Record) -> str:
    return hashlib.sha256(canonical(parts)).hexdigest()


PART_WORDS = {"rows": "rows (questions, answers, links to the golden set)", "passages": "retrieved passages",
              "judgments": "judgments", "run": "rows"}


def describe_part(key: str, record: Record) -> str:
    role, _, part = key.partition(".")
    if part:
        name = record.get("runs", {}).get(role, {}).get("name", role)
        return f"the {PART_WORDS.get(part, part)} of {role} run '{name}'"
    return {"golden": "the golden set (questions, gold ids, slices)",
            "ratings": "human ratings made before the decision (edited or withdrawn since)",
            "audits": "the judges' audits recorded before the decision",
            "judges": "the judges (their model, rubric, settings or status)",
            "settings": "the project's settings that decide verdicts"}.get(key, key)


def settings_moved(project: Project, record: Record) -> str:
    """': retirement.threshold 0.7 -> 0.5, …': which deciding settings differ from the record's."""
    try:
        then = dict(record["inputs"]["settings"]["values"])
    except (KeyError, TypeError, ValueError):
        return ""
    now = deciding_settings(project)
    moved = [f"{k} {then.get(k)!r} -> {now.get(k)!r}" for k in sorted(set(then) | set(now))
             if then.get(k) != now.get(k)]
    return (": " + ", ".join(moved)) if moved else ""


# ------------------------------------------------------------------------------------------------------ recording
def record_gate(project: Project, result: GateResult, baseline: str, candidate: str, *, estimator: str = "mean",
                waivers: list[Record] | None = None, key: str | None = None) -> Record:
    """Keep a gate's decision in the project, signed with `key` (core.reports.signing.load_key: your default key
    when None, made on first use) and chained to the previous record; returns the record (with its id). The
    signer's key joins the project's allowed signers the first time it signs there."""
    private, signer = signing.load_key(key)
    judges = [{"name": j.name, "metric": j.metric, "kind": j.kind, "status": j.status,
               "fingerprint": fingerprint(project, j), "licence": licence(project, j).as_dict()}
              for j in list_judges(project)]
    found = result.as_dict()
    with project.write("record a decision", changed=(Area.AUDIT,)) as conn:
        ident = project.meta("project_id")
        if not ident:
            ident = uuid.uuid4().hex
            project.set_meta(conn, "project_id", ident)
        parts = inputs(project, baseline, candidate)
        previous = conn.execute("SELECT hash FROM decisions ORDER BY id DESC LIMIT 1").fetchone()
        record = {"kind": "gate", "format": FORMAT, "app_version": __version__,
                  "project": {"id": ident, "name": project.meta("name")},
                  "runs": {"baseline": {"name": baseline, "rows": parts["baseline.rows"]["rows"]},
                           "candidate": {"name": candidate, "rows": parts["candidate.rows"]["rows"]}},
                  "judges": judges, "estimator": estimator, "inputs": parts, "inputs_root": root(parts),
                  "rules": {k: v for k, v in found.items()
                            if k in ("rule", "rule_text", "alpha", "max_slice_drop", "max_aggregate_drop",
                                     "min_slice_n", "require_significant", "adjustment", "gated_cells", "config",
                                     "attempt", "alpha_budget", "power_now")},
                  "decision": result.decision.value, "passed": result.passed,
                  "verdicts": {k: found[k] for k in ("regressions", "undecided", "safe", "not_evaluated", "ungated")},
                  "waivers": waivers or [], "who": project.actor, "when": utcnow(),
                  "previous": previous[0] if previous else None}
        record["hash"] = digest(record)
        record["signature"] = {"algorithm": "ed25519", "signer": signer.name, "key": signer.public,
                               "value": signing.sign(private, str(record["hash"]).encode("ascii"))}
        listed = _project_signers(project)
        if signer not in listed:
            project.set_meta(conn, SIGNERS_KEY, "\n".join(s.line() for s in [*listed, signer]))
            project.audit(conn, "trust signer", "signer", signer.name, key=signer.public, first_signature=True)
        cur = conn.execute("INSERT INTO decisions (kind, record, hash, previous, created_at) VALUES (?, ?, ?, ?, ?)",
                           ("gate", canonical(record).decode(), record["hash"], record["previous"], record["when"]))
        project.audit(conn, "record decision", "decision", str(cur.lastrowid), decision=result.decision.value,
                      hash=record["hash"], signer=signer.name)
    return {"id": cur.lastrowid, **record}


def write_record(record: Record, result: GateResult, folder: str | Path) -> tuple[Path, Path]:
    """The record as `decision-<id>.json` (the record exactly, to verify) and `.md` (for a pull request)."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        stem = folder / f"decision-{record['id']}"
        body = {k: v for k, v in record.items() if k != "id"}
        json_path, md_path = stem.with_suffix(".json"), stem.with_suffix(".md")
        json_path.write_text(json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False, default=str) + "\n",
                             encoding="utf-8")
        # the chain's end, kept outside the project: deleting the newest record from the project is then seen
        (folder / HEAD_FILE).write_text(f"{record['hash']} decision-{record['id']}\n", encoding="ascii")
        md_path.write_text(f"# Decision {record['id']}: {record['decision']}\n\n"
                           f"Recorded by {md_escape(str(record['who']))} at {record['when']}, signed by "
                           f"{md_escape(record['signature']['signer'])}; hash `{record['hash']}` (previous "
                           f"`{record['previous'] or 'none'}`).\n\n" + gate_markdown(result), encoding="utf-8")
    except OSError as exc:
        raise RagevalError(f"cannot write the decision record to {folder}: {exc.strerror or exc}") from None
    return json_path, md_path


def decisions(project: Project) -> list[Record]:
    """The stored records, oldest first (one that cannot be read is listed as such: `decisions --verify` says
    why)."""
    return [{"id": i, **(_parsed(r) or {"decision": "(unreadable)"})} for i, r in project.reader().execute(
        "SELECT id, record FROM decisions ORDER BY id")]


# --------------------------------------------------------------------------------------------------- who may sign
def _project_signers(project: Project) -> list[signing.Signer]:
    text = project.meta(SIGNERS_KEY) or ""
    try:
        return signing.parse_allowed(text, "the project's allowed signers")
    except signing.SigningError:
        return []                 # an unreadable list trusts no one; verify says so


def project_signers(project: Project) -> list[signing.Signer]:
    return _project_signers(project)


def trust(project: Project, line: str) -> signing.Signer:
    """Let the signer of an allowed-signers `line` sign decisions in the project (one write, in the audit log)."""
    found = signing.parse_allowed(line, "the signer's line")
    if len(found) != 1:
        raise signing.SigningError("give exactly one line: 'signer ssh-ed25519 KEY' (rageval keys export)")
    listed = _project_signers(project)
    if found[0] not in listed:
        with project.write("trust a signer", changed=(Area.SETTINGS,)) as conn:
            project.set_meta(conn, SIGNERS_KEY, "\n".join(s.line() for s in [*listed, found[0]]))
            project.audit(conn, "trust signer", "signer", found[0].name, key=found[0].public)
    return found[0]


# -------------------------------------------------------------------------------------------------------- checking
def _check_record(record: Record, trusted: list[signing.Signer],
                  listed_only: Sequence[signing.Signer] = ()) -> list[str]:
    """What does not hold in one record (its own content, its signature, its signer: one trusted from outside the
    project; `listed_only`, the project's own list, is named as what it is)."""
    problems = []
    if digest(record) != record.get("hash"):
        problems.append("its content does not match its hash (edited)")
    sig = record.get("signature")
    if not isinstance(sig, dict):
        problems.append("it is not signed (recorded before 0.4, or its signature was removed): anyone who can "
                        "write the file could have written it")
        return problems
    key, who = str(sig.get("key", "")), str(sig.get("signer", ""))
    if not signing.verify(key, str(record.get("hash", "")).encode("ascii", "replace"), str(sig.get("value", ""))):
        problems.append(f"its signature is not {who}'s over its hash (forged or edited)")
    elif not any(s.public == key and s.name == who for s in trusted):
        if any(s.public == key and s.name == who for s in listed_only):
            problems.append(f"it is signed by {who}, whose key only the project itself lists (rageval keys trust): "
                            "nothing outside the project vouches for it — add its line to the allowed-signers file "
                            "in your repository")
        else:
            problems.append(f"it is signed by {who} with a key that is not an allowed signer")
    return problems


def verify(project: Project, files: Sequence[str | Path] = (), allowed: list[signing.Signer] | None = None,
           head: str | None = None) -> Record:
    """Every stored record and file checked (see the module's note). `allowed`: the signers to trust (an
    allowed-signers file); None: the allowed-signers file found outside the project (`signing.default_allowed`)
    and your own keys — never the project's own list. `head`: the chain's newest record as kept outside the project
    (a hash, or a head file written beside the records; default: `HEAD` beside the first file checked), which must
    be in the chain. Returns {"records": [{id, decision, signer, problems, changed}], "files": [{file, problems}],
    "problems": every problem in words, "trusted", "head"}."""
    trusted, said = _trusted(project, allowed)
    listed_only = [s for s in _project_signers(project) if s not in trusted]
    out: Record = {"records": [], "files": [], "problems": [], "trusted": said}
    stored: dict[str, tuple[int, Record]] = {}
    previous = None
    cache: dict[tuple[str, str, str], Record] = {}
    for i, text, hash_, prev in project.reader().execute(
            "SELECT id, record, hash, previous FROM decisions ORDER BY id"):
        record = _parsed(text)
        if record is None:
            out["records"].append({"id": i, "decision": None, "signer": None, "changed": [],
                                   "problems": ["it cannot be read as a decision record (edited)"]})
            out["problems"].append(f"decision {i}: it cannot be read as a decision record (edited)")
            previous = hash_
            continue
        stored[hash_] = (i, record)
        problems = _check_record(record, trusted, listed_only)
        if record.get("hash") != hash_:
            problems.append("its stored hash is not the one it carries (edited)")
        if prev != previous or record.get("previous") != previous:
            problems.append("it does not follow the record before it (the chain is broken)")
        previous = hash_
        changed = _changed_inputs(project, record, cache)
        problems += [f"{describe_part(part, record)} changed since it was recorded"
                     + (settings_moved(project, record) if part == "settings" else "") for part in changed]
        out["records"].append({"id": i, "decision": record.get("decision"),
                               "signer": (record.get("signature") or {}).get("signer"),
                               "problems": problems, "changed": changed})
        out["problems"] += [f"decision {i}: {p}" for p in problems]
    for path in files:
        name = Path(path).name
        problems = []
        body: Any = None
        try:
            body = _parsed(read_small_text(path, "the decision record"))
            if body is None:
                problems.append("cannot be read as a decision record (not a JSON object, or nested too deeply)")
        except RagevalError as exc:
            problems.append(str(exc).replace(f"cannot read the decision record {path}: ", "cannot be read: "))
        if body is not None:
            claimed = body.get("hash") if isinstance(body.get("hash"), str) else None
            if claimed not in stored:
                problems.append("names no decision recorded in this project")
            else:
                problems += _check_record(body, trusted, listed_only)
                if canonical(body) != canonical(stored[claimed][1]):
                    problems.append(f"differs from decision {stored[claimed][0]} (edited)")
        out["files"].append({"file": str(path), "problems": problems})
        out["problems"] += [f"{name}: {p}" for p in problems]
    out["head"] = _check_head(head if head is not None else _head_beside(files), stored, previous)
    out["problems"] += [f"head: {p}" for p in out["head"]["problems"]]
    return out


HEAD_FILE = "HEAD"


def _head_beside(files: Sequence[str | Path]) -> str | None:
    """The head file beside the first record file checked, if there is one."""
    for path in files[:1]:
        beside = Path(path).parent / HEAD_FILE
        if beside.is_file():
            return str(beside)
    return None


def _check_head(head: str | None, stored: dict[str, tuple[int, Record]], newest: str | None) -> Record:
    """The chain's end against the head kept outside the project: a head not in the chain is a record deleted (or
    a chain replaced); records after it are named, not refused (recorded since the head was written)."""
    if head is None:
        return {"head": None, "problems": [], "said": "the chain's end was not checked against a head kept outside "
                                                     "the project (pass --head, or keep HEAD beside the records)"}
    where = head
    value = head.strip()
    if not _HASH.match(value):
        try:
            value = (read_small_text(head, "the chain's head", 4096).split() or [""])[0]
        except RagevalError as exc:
            return {"head": None, "problems": [str(exc)], "said": ""}
    if value not in stored:
        return {"head": value, "problems": [f"the newest record kept outside the project ({where}: {value[:12]}…) is "
                                            "not in the project's chain: a record was deleted, or the chain replaced"],
                "said": ""}
    number = stored[value][0]
    after = sum(1 for i, _ in stored.values() if i > number)
    said = f"the chain reaches the head kept outside the project (decision {number})"
    return {"head": value, "problems": [], "said": said + (f", and {after} record(s) after it" if after else "")}


def _trusted(project: Project, allowed: list[signing.Signer] | None) -> tuple[list[signing.Signer], str]:
    """The signers a verification trusts, and where they came from in words."""
    if allowed is not None:
        return allowed, "the allowed-signers file given"
    mine = [signing.Signer(k["signer"], k["public"]) for k in signing.list_keys() if "public" in k]
    found = signing.default_allowed(project.path)
    if found is None:
        return mine, ("your own keys (no allowed-signers file outside the project: pass --allowed-signers FILE, or "
                      f"keep {signing.ALLOWED_FILE} in the repository)")
    return [*signing.read_allowed(found), *mine], f"{found} and your own keys"


def _parsed(text: str) -> Record | None:
    """A decision record from its JSON text; None for anything else (not JSON, not an object, nested beyond what
    the reader can follow)."""
    try:
        body = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return body if isinstance(body, dict) else None


def _changed_inputs(project: Project, record: Record, cache: dict[tuple[str, str, str], Any]) -> list[str]:
    """The parts of a record's inputs that differ from the project now ([] for a record that binds none); a record
    whose inputs cannot be read has them all changed."""
    try:
        return _inputs_changed(project, record, cache)
    except (TypeError, ValueError, AttributeError, KeyError, RagevalError):
        return ["inputs (unreadable)"]


def _inputs_changed(project: Project, record: Record, cache: dict[tuple[str, str, str], Any]) -> list[str]:
    parts = record.get("inputs")
    if not isinstance(parts, dict) or not isinstance(parts.get("upto"), dict):
        return []
    runs = record.get("runs", {})
    key = (runs.get("baseline", {}).get("name", ""), runs.get("candidate", {}).get("name", ""),
           json.dumps(parts["upto"], sort_keys=True))
    if key not in cache:
        cache[key] = inputs(project, key[0], key[1], upto={k: int(v) for k, v in parts["upto"].items()})
    now = cache[key]
    # (only the parts the record binds: one recorded before a part was bound is not said to have changed it)
    return [part for part in sorted(parts) if part != "upto" and parts.get(part) != now.get(part)]
