"""The pairwise desk's state and rules (gui/models/pair_desk.py) with no window and no Qt (issue 77.7): keys in the
score desk's flow, sides turned into the runs' preferences, a rating held until committed, a failed write giving its
pair back, and undo only of what has committed."""

from __future__ import annotations

import subprocess
import sys

from rageval_desktop.core.review.pairwise import PairItem
from rageval_desktop.gui.models.pair_desk import PairDesk, action_for


def items(n: int = 4, rated: dict[int, str] | None = None) -> list[PairItem]:
    rated = rated or {}
    return [PairItem(p, f"Q{p}?", f"A{p}", f"B{p}", None, a_left=p % 2 == 1, rated=rated.get(p))
            for p in range(1, n + 1)]


def test_the_module_imports_no_qt():
    code = "import sys, rageval_desktop.gui.models.pair_desk; print(any(m.startswith('PySide6') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_keys_mean_what_the_desk_says():
    assert [action_for(k, "", False) for k in "123tTsS"] == ["left", "right", "tie", "tie", "tie", "skip", "skip"]
    assert action_for("", "Down", False) == "next" and action_for("", "Up", False) == "previous"
    assert action_for("", "Backspace", False) == "undo" and action_for("", "Z", True) == "undo"
    assert action_for("1", "", True) is None and action_for("x", "", False) is None
    assert [action_for(k, "", False) for k in "ujk"] == ["undo", "next", "previous"]     # the score desk's keys


def test_a_key_rates_the_pair_on_screen_in_the_runs_terms_and_moves_on():
    desk = PairDesk(items(rated={1: "a"}))
    assert desk.index == 1                                   # opens on the first pair not yet rated
    item, preference = desk.rate("left")                     # pair 2 shows run B on the left
    assert (item.position, preference) == (2, "b") and desk.index == 2
    item, preference = desk.rate("left")                     # pair 3 shows run A on the left
    assert (item.position, preference) == (3, "a")
    assert desk.rate("skip")[1] is None and desk.index == 3           # a skipped pair comes back when all else is
    assert desk.progress() == "pair 4 of 4 · 3 rated, 1 skipped · saving 3…"
    desk.rate("tie")
    assert desk.current() is None and desk.progress() == "every pair is rated · 4 rated · saving 3…"


def test_a_failed_write_gives_its_pair_back_and_undo_and_redo_move_the_desk():
    desk = PairDesk(items())
    desk.rate("right")
    desk.rate("tie")
    assert desk.committed(1, 11) == "b" and not desk.pending.get(1)
    desk.failed(2)
    assert desk.index == 1 and desk.said(desk.items[1]) is None and not desk.pending
    assert desk.said_words(desk.items[0]) == "You said the right answer is better."
    desk.undone(1)
    assert desk.index == 0 and desk.items[0].rated is None
    desk.redone(1, "b", 12)
    assert desk.items[0].rating_id == 12 and desk.index == 1        # on to the next pair not rated
    desk.step(-5)
    assert desk.index == 0
