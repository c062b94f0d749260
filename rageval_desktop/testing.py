"""Assertions for a team's own test suite (the pytest plugin, rageval_desktop.pytest_plugin, hands them out too).

    import rageval_desktop as rv
    from rageval_desktop.testing import assert_gate_passes

    def test_the_candidate_may_ship():
        with rv.open("eval.rageval", read_only=True) as project:
            assert_gate_passes(project.gate("main", "pr-42"))

A failed assertion's message is the gate's Markdown — the decision, what would settle it, every cell — so the test
report says why, in the words of the pull-request comment. A gate that could not decide fails too: "cannot tell"
is never a pass."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rageval_desktop.api import Gate


class GateNotPassed(AssertionError):
    """The gate did not pass: a regression was shown, or it was not decision-grade. `gate` is the decision."""

    def __init__(self, gate: Gate) -> None:
        super().__init__(gate.markdown())
        self.gate = gate


def assert_gate_passes(gate: Gate) -> Gate:
    """The gate passed (every gated cell shown safe), else `GateNotPassed` with its Markdown. Returns the gate."""
    if not gate.passed:
        raise GateNotPassed(gate)
    return gate
