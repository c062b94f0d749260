"""The run-time dependencies' licences: checked, and their texts collected for the desktop bundle.

    python packaging/licences.py check          # exit 1 naming any copyleft licence not listed below with a reason
    python packaging/licences.py collect DIR    # every run-time dependency's licence texts, and DIR/INDEX.txt

The run-time dependencies are pyproject.toml's `dependencies` and what they require, as installed (their own
metadata: `Requires-Dist`, markers evaluated with no extra). A licence is copyleft when its SPDX expression needs a
copyleft licence whatever choice it offers (`A OR B` needs one of them, `A AND B` both): GPL, AGPL, LGPL, MPL, EPL,
EUPL, CDDL, OSL, SSPL. A weak copyleft licence (LGPL, MPL) may be used when it is listed in ALLOWED with how this
app meets it; a strong one (GPL, AGPL, SSPL) never at run time. `tests/test_licences.py` runs the check in CI, and
packaging/rageval-desktop.spec calls `collect` for the bundle's `licenses/` folder (packaging/README.md).
"""

from __future__ import annotations

import importlib.metadata as md
import re
import shutil
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent / "licences"

QT = ("PySide6 and shiboken6 (Qt for Python) and the Qt libraries they load are used under the GNU LGPL 3.0: they "
      "are unmodified, dynamically loaded shared libraries kept as separate files in the bundle's _internal/PySide6 "
      "folder, which a user may replace with their own build of the same version. Their source is at "
      "https://code.qt.io/cgit/pyside/pyside-setup.git and https://code.qt.io/cgit/qt/qtbase.git; the LGPL 3.0 and "
      "the GPL 3.0 it builds on are LGPL-3.0.txt and GPL-3.0.txt in this folder.")
MPL = "file-level copyleft (MPL 2.0): used unmodified; its licence text is carried and its source is on PyPI"
ALLOWED = {"pyside6-essentials": QT, "shiboken6": QT, "orjson": MPL, "tqdm": MPL}
STRONG = re.compile(r"^(A?GPL|SSPL)", re.I)
WEAK = re.compile(r"^(LGPL|MPL|EPL|EUPL|CDDL|OSL|CPAL)", re.I)
CLASSIFIER = {"GNU General Public License": "GPL", "GNU Affero General Public License": "AGPL",
              "GNU Lesser General Public License": "LGPL", "GNU Library or Lesser General Public License": "LGPL",
              "Mozilla Public License": "MPL", "Eclipse Public License": "EPL"}
TEXT = re.compile(r"(licen[cs]e|copying|notice|authors)", re.I)


def key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def needs(expression: str) -> set[str]:
    """The copyleft licences an SPDX expression cannot do without ('A OR B': only those both need; 'A AND B': what
    either needs). Identifiers are matched by family (GPL-3.0-only is GPL)."""
    tokens = re.findall(r"\(|\)|[^\s()]+", expression)
    position = 0

    def term() -> set[str]:
        nonlocal position
        token = tokens[position] if position < len(tokens) else ""
        position += 1
        if token == "(":
            found = either()
            position += 1                      # the ")"
            return found
        if position < len(tokens) and tokens[position].upper() == "WITH":
            position += 2                      # an exception narrows a licence; its family stays
        family = STRONG.match(token) or WEAK.match(token)
        return {family.group(1).upper()} if family else set()

    def both() -> set[str]:
        nonlocal position
        found = term()
        while position < len(tokens) and tokens[position].upper() == "AND":
            position += 1
            found |= term()
        return found

    def either() -> set[str]:
        nonlocal position
        options = [both()]
        while position < len(tokens) and tokens[position].upper() == "OR":
            position += 1
            options.append(both())
        return min(options, key=lambda o: (any(STRONG.match(x) for x in o), len(o)))

    return either() if tokens else set()


@dataclass
class Dist:
    name: str
    version: str
    licence: str
    copyleft: set[str] = field(default_factory=set)
    texts: list[Path] = field(default_factory=list)


def _licence(dist: md.Distribution) -> tuple[str, set[str]]:
    meta = dist.metadata
    expression = meta.get("License-Expression") or ""
    if expression:
        return expression, needs(expression)
    classifiers = [c for c in meta.get_all("Classifier") or [] if c.startswith("License ::")]
    named = {tag for c in classifiers for text, tag in CLASSIFIER.items() if text in c}
    free = [c for c in classifiers if not any(text in c for text in CLASSIFIER)]
    licence = (meta.get("License") or "").strip().splitlines()
    shown = "; ".join(c.split(" :: ")[-1] for c in classifiers) or (licence[0][:80] if licence else "not stated")
    return shown, set() if free else named         # several classifiers: the user may choose a free one


def runtime(extras: tuple[str, ...] = ()) -> list[Dist]:
    """The run-time dependencies as installed, each with its licence and licence files."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = list(project["dependencies"]) + [r for e in extras for r in project["optional-dependencies"][e]]
    from packaging.requirements import Requirement

    seen: dict[str, Dist] = {}
    queue = [Requirement(r) for r in wanted]
    while queue:
        req = queue.pop()
        if req.marker and not req.marker.evaluate({"extra": ""}):
            continue
        if key(req.name) in seen or key(req.name) == "rageval-desktop":
            continue
        try:
            dist = md.distribution(req.name)
        except md.PackageNotFoundError:
            continue                                   # not installed here (another platform's dependency)
        licence, copyleft = _licence(dist)
        texts = [Path(str(dist.locate_file(f))) for f in dist.files or []
                 if TEXT.search(f.name) and ".dist-info" in str(f) and not f.name.endswith((".py", ".pyc"))]
        seen[key(req.name)] = Dist(dist.metadata["Name"], dist.version, licence, copyleft, texts)
        queue += [Requirement(r) for r in dist.requires or []]
    return sorted(seen.values(), key=lambda d: key(d.name))


def problems(dists: list[Dist]) -> list[str]:
    out = []
    for d in dists:
        strong = {x for x in d.copyleft if STRONG.match(x)}
        if strong:
            out.append(f"{d.name} {d.version}: {d.licence} — a strong copyleft licence at run time")
        elif d.copyleft and key(d.name) not in ALLOWED:
            out.append(f"{d.name} {d.version}: {d.licence} — copyleft, and not listed in packaging/licences.py's "
                       "ALLOWED with how the app meets it")
    return out


def collect(dest: Path, dists: list[Dist] | None = None) -> Path:
    """Every run-time dependency's licence texts under dest/NAME/, Qt's notice and the LGPL and GPL texts, and
    dest/INDEX.txt naming each package, its version, its licence and where its texts are."""
    dists = runtime() if dists is None else dists
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    lines = ["Third-party software in RAGEval Desktop, with its licence and where its text is in this folder.", ""]
    for d in dists:
        folder = dest / key(d.name)
        copied = []
        for text in d.texts:
            if text.is_file():
                folder.mkdir(exist_ok=True)
                target = folder / text.name
                n = 1
                while target.exists():
                    n += 1
                    target = folder / f"{text.stem}-{n}{text.suffix}"
                shutil.copyfile(text, target)
                copied.append(target.relative_to(dest).as_posix())
        if not copied and "apache" in d.licence.lower():      # a package that ships no text: the licence's own
            folder.mkdir(exist_ok=True)
            shutil.copyfile(HERE / "Apache-2.0.txt", folder / "Apache-2.0.txt")
            copied.append(f"{key(d.name)}/Apache-2.0.txt (the licence's text; the package ships none)")
        if key(d.name) in ALLOWED:
            folder.mkdir(exist_ok=True)
            (folder / "NOTICE-rageval.txt").write_text(ALLOWED[key(d.name)] + "\n", encoding="utf-8")
            copied.append(f"{key(d.name)}/NOTICE-rageval.txt")
        where = ", ".join(copied) if copied else "no licence file in the package; its metadata states the licence"
        lines.append(f"{d.name} {d.version} — {d.licence} — {where}")
    for name in ("LGPL-3.0.txt", "GPL-3.0.txt"):
        shutil.copyfile(HERE / name, dest / name)
    lines += ["", "LGPL-3.0.txt, GPL-3.0.txt: the GNU licences Qt for Python is used under (pyside6-essentials/"
              "NOTICE-rageval.txt)."]
    (dest / "INDEX.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return dest


def main(argv: list[str]) -> int:
    if argv[:1] == ["check"]:
        found = problems(runtime())
        for line in found:
            print(line, file=sys.stderr)
        print(f"{len(runtime())} run-time dependencies; {len(found)} licence problem(s)")
        return 1 if found else 0
    if len(argv) == 2 and argv[0] == "collect":
        print(collect(Path(argv[1])))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
