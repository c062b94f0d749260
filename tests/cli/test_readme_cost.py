"""The README's integrity and incremental near-duplicate commands, run as written (issue 15)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from rageval_desktop.cli import main
from tests.conftest import REPO


def _block(after: str) -> list[list[str]]:
    text = (REPO / "README.md").read_text()
    block = text.split(after, 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    return [shlex.split(re.sub(r"\s+#.*$", "", line)) for line in block.strip().splitlines() if line.strip()]


def test_the_check_commands_run_as_written(tmp_path, monkeypatch, capsys, demo_file):
    import shutil

    monkeypatch.chdir(tmp_path)
    shutil.copy(demo_file, tmp_path / "project.rageval")     # the project the block before made
    commands = _block("Every page is read on demand and after an unclean shutdown")
    assert [c[:2] for c in commands] == [["rageval", "check"], ["rageval", "check"]]
    for argv in commands:
        assert main(argv[1:]) == 0, argv
    out = capsys.readouterr().out
    report = json.loads(out[out.index("{"):])
    assert report["ok"] is True and report["kind"] == "quick_check"


def test_golden_dedupe_new_is_documented_and_checks_only_new_rows(tmp_path, monkeypatch, capsys, demo_file):
    import shutil

    from rageval_desktop.core.judges import embedded
    from tests.core.test_dedupe_incremental import BagOfWords

    text = (REPO / "README.md").read_text()
    assert "rageval golden dedupe eval.rageval --new" in text
    fake = BagOfWords()
    monkeypatch.setattr(embedded, "load_model", lambda model_id=embedded.MINILM_ID: fake)
    path = tmp_path / "eval.rageval"
    shutil.copy(demo_file, path)
    assert main(["golden", "dedupe", str(path), "--json"]) == 0            # the whole set: embeds it, clears the list
    capsys.readouterr()
    fake.encoded.clear()
    new = Path(tmp_path / "new.jsonl")
    new.write_text(json.dumps({"question": "A brand new question?", "gold_answer": "x", "slice_tag": "easy"}) + "\n")
    assert main(["import", "golden", str(path), str(new)]) == 0
    assert "1 new question(s) not yet checked" in capsys.readouterr().err and fake.encoded == []
    assert main(["golden", "dedupe", str(path), "--new", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["checked"] == 1
    assert fake.encoded == ["A brand new question?"]
