"""The outcomes decisions have, and the exit codes they map to: vocabulary every floor and both shells share.

A gate has three outcomes, never one for another (core.metrics.gate): PASS — shown safe; REGRESSION — a drop
shown; NOT_DECISION_GRADE — the evidence cannot tell, or something asked to gate could not be evaluated. A usage
error and a tool that failed have codes of their own, so no verdict's code ever doubles as "the tool failed"."""

from __future__ import annotations

from enum import StrEnum

EXIT_PASS, EXIT_REGRESSION, EXIT_USAGE, EXIT_NOT_DECISION_GRADE, EXIT_TOOL_FAILED = 0, 1, 2, 3, 4


class Decision(StrEnum):
    """What a gate decided. `exit_code` is the CLI's; `bool()` of a gate result is true only for PASS."""

    PASS = "pass"
    REGRESSION = "regression"
    NOT_DECISION_GRADE = "not_decision_grade"

    @property
    def exit_code(self) -> int:
        return {Decision.PASS: EXIT_PASS, Decision.REGRESSION: EXIT_REGRESSION,
                Decision.NOT_DECISION_GRADE: EXIT_NOT_DECISION_GRADE}[self]


GATE_EXIT_CODES = {
    EXIT_PASS: "pass: every gated cell shown safe (its drop shown within the tolerance, or - under a "
               "configuration - no drop shown and a drop of the tolerance would have been caught with 80% power)",
    EXIT_REGRESSION: "regression: a drop beyond the allowed one is shown (each listed with its CI, n and adjusted p)",
    EXIT_USAGE: "usage error: an impossible request (a run or metric that does not exist, a bad limit or "
                "configuration)",
    EXIT_NOT_DECISION_GRADE: "not decision-grade: cells the evidence cannot settle, or metrics asked to gate that "
                             "could not be evaluated (no gate licence, not judged on both runs); each is listed with "
                             "what would settle it",
    EXIT_TOOL_FAILED: "the tool failed (a damaged or unreadable file, a full disk, an internal error, "
                      "interrupted): no decision",
}
