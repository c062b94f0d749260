"""Rubric prompt templates: a versioned library in resources/rubrics, edited copies stored in the project.

Templates use `string.Template` (`${question}`) over a whitelist of fields. Its identifier pattern has no
dots or brackets, so `${x.__class__}` cannot even be written; `str.format` is never applied to a template.
Untrusted values are inserted inside tagged blocks; a value cannot close its block early, because closing tags
of the template's own blocks are neutralised in every value — in every spelling a model would still read as one
(`</response foo=1>`, `< / RESPONSE >`, zero-width or soft-hyphen insertions, fullwidth `＜/response＞`, entity
forms `&lt;/response&gt;`, Cyrillic or Greek look-alike letters and angle quotes `‹/rеsponse>`, the JSON-escaped
`<\\/response>`, the URL-encoded `%3C/response%3E`): they are found on a normalised shadow of the text and replaced
by `[/response]`.
"""

from __future__ import annotations

import html
import re
import sqlite3
import string
import unicodedata
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.base.paths import resources_dir
from rageval_desktop.core.store.project import Project

FIELDS = {
    "question": "the question (golden row or run row)",
    "answer": "the run's answer",
    "reference": "the golden row's reference answer",
    "contexts": "the retrieved passages that reached the prompt, numbered",
    "passage": "one retrieved passage (passage-level metrics)",
    "context": "the source chunk of a generated question (critiques)",
    "nuggets": "a list of nuggets (nugget metrics)",
    "count": "how many nuggets the list holds (nugget metrics)",
    "statement": "one sentence of the answer (citation support)",
    "citation": "the passage that sentence cites (citation support)",
}
OUTPUT_FORMATS = ("prometheus", "json_binary", "total_rating", "umbrela", "yes_no", "citation_support",
                  "nugget_list", "importance_labels", "assignment_labels")
_CLOSING_TAG = re.compile(r"</\s*([A-Za-z_][\w-]*)\s*>")
# a closing tag as a model would read it: attributes allowed, the final '>' optional (end of text, a line break)
_CLOSING_LIKE = re.compile(r"<\s*/\s*([A-Za-z_][\w-]*)(?:\s[^<>]{0,200}>|\s*>)?")
_PERCENT = {"3C": "<", "3E": ">", "2F": "/"}
# letters and brackets that read as Latin ones (Unicode's confusables for the characters a closing tag is made of:
# Cyrillic and Greek look-alikes, angle quotation marks and brackets): `‹/rеsponse>` with a Cyrillic е is a tag
_CONFUSABLE = {**dict(zip("аеорсухіјѕԁһкмнтвᴦ", "aeopcyxijsdhkmhtbr", strict=True)),
               **dict(zip("АЕОРСУХІЈЅКМНТВ", "AEOPCYXIJSKMHTB", strict=True)),
               **dict(zip("οαερτυνικμ", "oaeptuvikm", strict=True)),
               "‹": "<", "›": ">", "〈": "<", "〉": ">", "⟨": "<", "⟩": ">", "˂": "<", "˃": ">", "❮": "<", "❯": ">",
               "⁄": "/", "∕": "/", "⧸": "/"}
_ENTITY = re.compile(r"&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,30});?")


def shadow_of(text: str) -> tuple[str, list[int]]:
    """The text as a reader sees it — NFKC (fullwidth forms become ASCII), invisible format characters dropped,
    HTML entities decoded — and, for each of its characters, where it starts in the original text."""
    out: list[str] = []
    where: list[int] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "&" and (m := _ENTITY.match(text, i)):
            decoded = html.unescape(m.group(0) if m.group(0).endswith(";") else m.group(0) + ";")
            if decoded != m.group(0) and not decoded.endswith(";"):
                for c in unicodedata.normalize("NFKC", decoded):
                    out.append(c)
                    where.append(i)
                i = m.end()
                continue
        if ch == "%" and text[i + 1:i + 3].upper() in _PERCENT:         # URL-encoded: %3C/response%3E
            out.append(_PERCENT[text[i + 1:i + 3].upper()])
            where.append(i)
            i += 3
            continue
        if ch == "\\" and text[i + 1:i + 2] == "/":                      # JSON-escaped: <\/response>
            i += 1
            continue
        if unicodedata.category(ch) in ("Cf", "Mn") and not ch.isspace():  # zero-width, soft hyphen, marks
            i += 1
            continue
        for c in unicodedata.normalize("NFKC", ch):
            out.append(_CONFUSABLE.get(c, c))
            where.append(i)
        i += 1
    where.append(len(text))
    return "".join(out), where


def neutralise_closing_tags(text: str, tags: set[str]) -> str:
    """Replace every closing tag of `tags` (in any spelling a model would read as one) with `[/tag]`."""
    if not text or not tags or ("<" not in text and "&" not in text and "%" not in text
                                and not any(ord(c) > 127 for c in text)):
        return text
    shadow, where = shadow_of(text)
    pieces, last = [], 0
    for m in _CLOSING_LIKE.finditer(shadow):
        name = m.group(1).lower()
        if name not in tags:
            continue
        start, end = where[m.start()], where[m.end()]
        pieces += [text[last:start], f"[/{name}]"]
        last = end
    return "".join(pieces) + text[last:] if pieces else text


class RubricInvalid(RagevalError):
    pass


@dataclass(frozen=True)
class Rubric:
    name: str
    version: int
    metric: str
    output_format: str
    scale_min: float
    scale_max: float
    template: str
    system: str = ""
    origin: str = ""
    id: int | None = None
    criterion: str = ""                               # for people: the question a reviewer answers
    anchors: tuple[tuple[float, str], ...] = ()       # for people: one anchor sentence per score

    @property
    def fields(self) -> list[str]:
        return sorted(set(string.Template(self.template).get_identifiers()))

    def render(self, values: dict[str, str]) -> list[dict[str, str]]:
        """Chat messages for one judgment."""
        tags = {m.group(1).lower() for m in _CLOSING_TAG.finditer(self.template)}
        safe = {k: neutralise_closing_tags(values.get(k) or "", tags) for k in self.fields}
        prompt = string.Template(self.template).substitute(safe)
        messages = [{"role": "system", "content": self.system}] if self.system else []
        return [*messages, {"role": "user", "content": prompt}]


def validate_template(template: str, output_format: str) -> list[str]:
    """The fields a template uses; RubricInvalid naming the problem otherwise. Run whenever one is saved."""
    if output_format not in OUTPUT_FORMATS:
        raise RubricInvalid(f"unknown output format '{output_format}'; use one of {', '.join(OUTPUT_FORMATS)}")
    if not template.strip():
        raise RubricInvalid("the template is empty")
    tpl = string.Template(template)
    if not tpl.is_valid():
        bad = next(m for m in tpl.pattern.finditer(template) if m.group("invalid") is not None)
        line = template.count("\n", 0, bad.start()) + 1
        snippet = template[bad.start():bad.start() + 25].split("\n")[0]
        raise RubricInvalid(f"line {line}: '{snippet}' is not a field; write fields as ${{question}} "
                            f"(allowed: {', '.join(FIELDS)}), and a literal dollar sign as $$")
    used = sorted(set(tpl.get_identifiers()))
    unknown = [f for f in used if f not in FIELDS]
    if unknown:
        raise RubricInvalid(f"unknown field(s) {', '.join('${' + f + '}' for f in unknown)}; "
                            f"allowed: {', '.join(FIELDS)}")
    if not used:
        raise RubricInvalid("the template uses no field, so every prompt would be the same")
    return used


def parse_rubric_text(text: str, source: str = "rubric") -> Rubric:
    head, sep, body = text.partition("\n---\n")
    if not sep:
        raise RubricInvalid(f"{source}: expected a header, a line '---', then the template")
    meta = {}
    for line in head.splitlines():
        if line.strip():
            key, _, value = line.partition(":")
            meta[key.strip()] = value.strip()
    try:
        low, high = (float(x) for x in meta["scale"].split("-"))
        anchors = tuple(sorted((float(key.split()[1]), value) for key, value in meta.items()
                               if key.startswith("anchor ")))
        rubric = Rubric(name=meta["name"], version=int(meta["version"]), metric=meta["metric"],
                        output_format=meta["output_format"], scale_min=low, scale_max=high,
                        template=body.strip("\n") + "\n", system=meta.get("system", ""), origin=meta.get("origin", ""),
                        criterion=meta.get("criterion", ""), anchors=anchors)
    except (KeyError, ValueError, IndexError) as exc:
        raise RubricInvalid(f"{source}: bad or missing header field ({exc})") from None
    validate_template(rubric.template, rubric.output_format)
    return rubric


def library() -> dict[str, Rubric]:
    """The bundled rubrics by name (a dict of the caller's own; the files are read and parsed once a process: an
    audit of 20 judges parsed all 13 of them 54 times, 0.13 s; a folder with a file added or removed since is read
    again)."""
    folder = Path(resources_dir()) / "rubrics"
    try:
        stamp = folder.stat().st_mtime_ns
    except OSError:
        stamp = 0
    return dict(_library(str(folder), stamp))


@lru_cache(maxsize=4)
def _library(folder: str, stamp: int) -> dict[str, Rubric]:
    out = {}
    for path in sorted(Path(folder).glob("*.txt")):
        rubric = parse_rubric_text(path.read_text(encoding="utf-8"), path.name)
        out[rubric.name] = rubric
    return out


_COLUMNS = "id, name, version, metric, output_format, scale_min, scale_max, template, system, origin"


def _from_row(row: tuple) -> Rubric:
    rid, name, version, metric, fmt, low, high, template, system, origin = row
    return Rubric(name, version, metric, fmt, low, high, template, system or "", origin or "", rid)


def ensure_stored(conn: sqlite3.Connection, rubric: Rubric) -> Rubric:
    """The project's copy of a rubric (same name and version), stored on first use."""
    row = conn.execute(f"SELECT {_COLUMNS} FROM rubrics WHERE name = ? AND version = ?",
                       (rubric.name, rubric.version)).fetchone()
    if row:
        return _from_row(row)
    cur = conn.execute(
        "INSERT INTO rubrics (name, version, metric, output_format, scale_min, scale_max, template, system, "
        "origin, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (rubric.name, rubric.version, rubric.metric, rubric.output_format, rubric.scale_min, rubric.scale_max,
         rubric.template, rubric.system, rubric.origin, utcnow()))
    return replace(rubric, id=cur.lastrowid)


def save_new_version(conn: sqlite3.Connection, base: Rubric, template: str, system: str | None = None) -> Rubric:
    """An edited rubric never changes the old one: it becomes version max+1, validated first."""
    validate_template(template, base.output_format)
    version = conn.execute("SELECT COALESCE(MAX(version), 0) + 1 FROM rubrics WHERE name = ?",
                           (base.name,)).fetchone()[0]
    edited = replace(base, version=version, template=template, system=base.system if system is None else system,
                     origin=f"edited from {base.name} v{base.version}", id=None)
    return ensure_stored(conn, edited)


def load(conn: sqlite3.Connection, rubric_id: int) -> Rubric:
    row = conn.execute(f"SELECT {_COLUMNS} FROM rubrics WHERE id = ?", (rubric_id,)).fetchone()
    if row is None:
        raise RubricInvalid(f"rubric {rubric_id} is not in the project")
    return _from_row(row)


def rubric_for_metric(project: Project, metric: str, default_name: str | None) -> Rubric | None:
    """The rubric an LLM judge of this metric uses (an active one first), else the bundled default."""
    conn = project.reader()
    # (a judge has a rubric only when its kind judges with one: the kind's name is not compared)
    row = conn.execute("SELECT rubric_id FROM judges WHERE metric = ? AND rubric_id IS NOT NULL "
                       "ORDER BY status = 'active' DESC, id LIMIT 1", (metric,)).fetchone()
    if row:
        return load(conn, row[0])
    return library().get(default_name or "")


def rubric_of(project: Project, rubric_id: int) -> Rubric:
    return load(project.reader(), rubric_id)
