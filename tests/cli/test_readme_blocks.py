"""Every bash block of the README, in order, as written (issue 49): each line runs in bash from a copy of the clone
(a folder whose name has a space), with the environment a user would have set up — a key in OPENAI_API_KEY, the
endpoint in OPENAI_BASE_URL (the loopback server), HHEM's folders under ~/models, pip installing into a folder of
the test's — and exits with the code its comment documents ("# exit 3: ..."; 0 when it names none). A block that
fails as written fails here; the other README tests check what each block prints."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.support.fake_openai import FakeOpenAI, Reply, default_content

# the set-up blocks, run elsewhere: the first is how this suite is started; the wheel is installed into a fresh
# environment by tests/test_install.py, and the pipx line for the local extra is resolved by tests/test_install_torch.py
SET_UP = ("make demo", "python3 -m pip wheel", "pipx install")
# where the README names an endpoint of your own, the loopback server stands in for it
ENDPOINTS = ("http://localhost:8000/v1", "http://localhost:8080/v1")


def readme_blocks(text: str) -> list[str]:
    """The README's bash blocks, in order (indented ones in lists too), each without its indentation."""
    found = re.finditer(r"^( *)```bash\n(.*?)^ *```", text, re.S | re.M)
    return ["\n".join(line[len(m.group(1)):] for line in m.group(2).splitlines()) for m in found]


def block_lines(block: str) -> list[tuple[str, int]]:
    """Each shell line of a block (continuations joined, comments kept: bash reads them) with its documented exit
    code: a comment that starts "exit N"."""
    out: list[tuple[str, int]] = []
    pending = ""
    for raw in block.splitlines():
        line = pending + raw
        if line.rstrip().endswith("\\"):
            pending = line.rstrip()[:-1] + " "
            continue
        pending = ""
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        comment = line.partition("   #")[2]
        code = re.match(r"\s*exit (\d)\b", comment)
        out.append((line, int(code.group(1)) if code else 0))
    return out


def test_the_blocks_are_read_as_a_user_reads_them():
    block = 'rageval a x \\\n    --b 1   # exit 3: why\n# a note\nrageval c "d #e"   # fails (exit 1) if ...\n'
    assert block_lines(block) == [('rageval a x      --b 1   # exit 3: why', 3),
                                  ('rageval c "d #e"   # fails (exit 1) if ...', 0)]
    text = "x\n```bash\na\n```\n- item\n\n  ```bash\n  b \\\n    c\n  ```\n"
    assert readme_blocks(text) == ["a", "b \\\n  c"]


def responder():
    """One server for every block: the gold-free steps as test_gold_free scripts them, synthetic questions that
    differ, and a well-formed reply for every other prompt (correctness `[RESULT] 4`, critiques `Total rating: 5`)."""
    from tests.core.test_gold_free import Script

    script = Script()

    def reply(body: dict, n: int) -> Reply:
        system, prompt = body["messages"][0]["content"], body["messages"][-1]["content"]
        if "Factoid question:" in prompt:
            return Reply(f"Factoid question: What does passage {n} of the documentation say?\nAnswer: What it says.")
        if any(k in system for k in ("Nuggetize", "cite")) or "Score: N" in prompt or "an attempt to answer" in prompt:
            return script(body, n)
        return Reply(default_content(prompt))

    return reply


def copy_of_the_clone(to: Path) -> Path:
    """The checkout's tracked files, as a fresh clone has them."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=False)
    if listed.returncode != 0:
        pytest.skip("not a git checkout: the README's blocks run from a clone")
    for name in listed.stdout.decode().split("\0"):
        if name and (REPO / name).is_file():
            (to / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, to / name)
    return to


@pytest.mark.slow      # about 7 minutes: 120 commands, the local models (the lab embeds 2,400 chunks), a batch job
def test_every_readme_block_runs_in_order_as_written(tmp_path):
    from tests.core.test_hhem import tiny_hhem

    blocks = readme_blocks((REPO / "README.md").read_text(encoding="utf-8"))
    skipped = [b for b in blocks if b.startswith(SET_UP)]
    assert len(skipped) == 3 and len(blocks) > 20
    clone = copy_of_the_clone(tmp_path / "my clone")
    home = tmp_path / "home"
    (home / "models").mkdir(parents=True)
    tiny_hhem(home / "models")
    site = tmp_path / "site"
    bin_dir = str(Path(sys.executable).parent)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAGEVAL_", "XDG_", "PIP_", "OPENAI_"))}
    env.update(PATH=os.pathsep.join([bin_dir, env.get("PATH", "")]), HOME=str(home), HF_HUB_OFFLINE="1",
               XDG_CONFIG_HOME=str(home / ".config"), XDG_STATE_HOME=str(home / ".local" / "state"),
               XDG_DATA_HOME=str(home / ".local" / "share"), XDG_CACHE_HOME=str(home / ".cache"),
               OPENAI_API_KEY="sk-readme-0123456789",
               # `pip install ./docs/examples/...` goes to a folder of this test's, not the suite's environment
               PIP_TARGET=str(site), PIP_NO_DEPS="1", PIP_NO_INDEX="1", PIP_NO_BUILD_ISOLATION="0",
               PYTHONPATH=str(site), QT_QPA_PLATFORM="offscreen")
    ran = []
    with FakeOpenAI(responder()) as server:
        env["OPENAI_BASE_URL"] = server.url
        server.embedder = lambda text: [float(len(text) % 7), float(text.count(" ") % 5), 1.0]
        for block in blocks:
            if block.startswith(SET_UP):
                continue
            for line, code in block_lines(block):
                for endpoint in ENDPOINTS:
                    line = line.replace(endpoint, server.url)
                done = subprocess.run(["bash", "-c", line], cwd=clone, env=env, capture_output=True, text=True,
                                      timeout=900, check=False)
                assert done.returncode == code, (f"README line {line!r} exited {done.returncode}, documented {code}"
                                                 f"\n--- stdout\n{done.stdout[-3000:]}\n--- stderr\n"
                                                 f"{done.stderr[-3000:]}")
                ran.append(line)
    assert len(ran) > 100
    # what the blocks made is there: the restored project, the report, the gold-free metrics, the plug-in's judge
    assert (clone / "report.html").is_file() and (clone / "golden-v3.jsonl").is_file()
    assert json.loads((clone / "decisions" / "decision-1.json").read_text())
    assert server.calls > 100 and server.embedding_requests       # the judges, synth and align; dedupe by endpoint
