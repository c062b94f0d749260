"""Issue 74: every install line in the docs and the CI templates installs only what it means. No one owns
`rageval-desktop` on PyPI: a job that installs it by name runs whoever registers it, in the step that holds the API
and signing keys. A line may name a path (a wheel, a folder, the checkout), an exact pin (`name==version`, from the
index the line names when it is not PyPI's), a commit of a repository, or options (-c, -e, -r, --index-url...)."""

from __future__ import annotations

import re

from rageval_desktop._version import __version__
from tests.conftest import REPO

DOCS = sorted([REPO / "README.md", REPO / "packaging" / "README.md", *(REPO / "docs").rglob("*.md")])
INSTALL = re.compile(r"\b(?:pipx|pip|pip3|uv pip) install\b([^`\n]*)")
WITH_VALUE = {"-c", "-r", "--constraint", "--requirement", "--index-url", "--extra-index-url", "-i",
              "--pip-args", "--find-links", "-f"}


def arguments(tail: str) -> list[str]:
    """The package arguments of one install line: options and their values dropped, quotes stripped, a comment
    and a shell substitution's closing characters cut."""
    tail = tail.split("#", 1)[0].split(")", 1)[0] if "$(" not in tail else tail.split("#", 1)[0]
    tail = re.sub(r'--[\w-]+="[^"]*"', " ", tail)      # --pip-args="-c constraints.txt": an option's value
    words = re.findall(r'"[^"]*"|\S+', tail)
    out, skip = [], False
    for word in words:
        word = word.strip('"')
        if skip:
            skip = False
            continue
        if word.split("=", 1)[0] in WITH_VALUE:
            skip = "=" not in word
            continue
        if word.startswith("-") or word in {"&&", "||", ";", "|"}:
            if word in {"&&", "||", ";", "|"}:
                break
            continue
        out.append(word)
    return out


def acceptable(word: str) -> bool:
    if word.startswith(("./", "/", "~", ".[", "$(")) or word in {"."} or ".whl" in word:
        return True                                    # a path: a wheel, a folder, the checkout
    if re.search(r"@ ?git\+\S+@[0-9a-f]{40}\b", word):
        return True                                    # a commit
    return bool(re.fullmatch(r"[A-Za-z0-9_.\-]+(\[[^\]]+\])?==[0-9][\w.+!-]*", word))   # an exact pin


def install_lines() -> list[tuple[str, str]]:
    found = []
    for doc in DOCS:
        # a shell line continued with a backslash is one command
        for line in doc.read_text(encoding="utf-8").replace("\\\n", " ").splitlines():
            for match in INSTALL.finditer(line):
                found.append((f"{doc.relative_to(REPO)}: {line.strip()}", match.group(1)))
    return found


def test_every_install_line_names_a_path_a_pin_or_a_commit():
    lines = install_lines()
    assert len(lines) >= 8                             # the README's, packaging's and the two CI templates'
    bad = [(where, word) for where, tail in lines for word in arguments(tail) if not acceptable(word)]
    assert not bad, bad


def test_the_check_refuses_what_it_is_for():
    """The check itself fails on the lines issue 74 found (an unpinned name, a range), not only on nothing."""
    for tail in (' "rageval-desktop[local]"', " rageval-desktop", " torch>=2", " requests  # a comment"):
        assert not all(acceptable(word) for word in arguments(tail)), tail
    for tail in (" torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu", ' -c constraints.txt -e ".[dev]"',
                 ' "./eval/wheels/rageval_desktop-0.2.0-py3-none-any.whl[local]"'):
        assert all(acceptable(word) for word in arguments(tail)), tail


def test_the_templates_install_this_version():
    """The CI templates' wheel is this release's: a template naming an older wheel would install it."""
    text = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    named = set(re.findall(r"rageval_desktop-([0-9][\w.]*?)-py3-none-any\.whl", text))
    assert named == {__version__}, named
