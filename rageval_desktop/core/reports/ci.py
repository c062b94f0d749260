"""The gate's decision in the forms CI systems read: a JUnit XML file (the decision itself first — it fails unless the
gate passed, so a suite of skipped cells never reads as green — then one test case per gated cell: a regression
fails, a cell the evidence cannot settle is skipped as not decision-grade, a cell shown safe passes; a metric asked
to gate that could not be evaluated is skipped with its reason and fix) and a Markdown summary for a job's step
summary (GitHub's `$GITHUB_STEP_SUMMARY`, GitLab's and Buildkite's annotations: the pull-request comment's text).

Names from data are inert: XML escapes them, characters XML 1.0 cannot carry become their code points, and
bidirectional controls are shown, not obeyed."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

from rageval_desktop.core.base.text import inert_text
from rageval_desktop.core.metrics.gate import Decision, GateResult
from rageval_desktop.core.metrics.gate_text import SAID, covers_text, drop_text, gate_markdown, headline, settle_hint

SUITE = "rageval gate"
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def _text(value: object) -> str:
    return _NOT_XML.sub(lambda m: f"[U+{ord(m.group()):04X}]", inert_text(value))


def _case_name(r: dict[str, Any]) -> str:
    return _text(f"{r.get('slice') or 'every slice'} · {r.get('metric') or 'every metric'}")


def junit_xml(result: GateResult, *, head: str | None = None) -> str:
    """The decision as JUnit XML: a test suite named for the two runs; its first case the decision (failing unless
    the gate passed), then one case per gated cell. `head`: the hash of the decision's record, when recorded (the
    chain's end, kept where the project cannot reach it)."""
    c = result.comparison
    cases: list[tuple[str, str, dict[str, Any]]] = (
        [("regression", _case_name(r), r) for r in result.regressions]
        + [("undecided", _case_name(r), r) for r in result.undecided]
        + [("not evaluated", _case_name(u), u) for u in result.not_evaluated]
        + [("safe", _case_name(r), r) for r in result.safe])
    passed = result.decision is Decision.PASS
    failures = sum(1 for status, _, _ in cases if status == "regression") + (not passed)
    skipped = sum(1 for status, _, _ in cases if status in ("undecided", "not evaluated"))
    total = len(cases) + 1
    counts = {"tests": str(total), "failures": str(failures), "errors": "0", "skipped": str(skipped)}
    suites = ET.Element("testsuites", {"name": SUITE, **counts})
    suite = ET.SubElement(suites, "testsuite", {"name": _text(f"{SUITE}: {c['candidate']} vs {c['baseline']}"),
                                                **counts})
    _properties(suite, result, head)
    # the decision itself, first: green only when every gated cell was shown safe — a suite of skipped cells must
    # not read as a pass ("cannot tell" fails here, as the exit code 3 fails the job)
    decision = ET.SubElement(suite, "testcase", classname="rageval.gate",
                             name=_text(f"the decision: may {c['candidate']} replace {c['baseline']}?"))
    covers = covers_text(result)
    if covers:                         # what a pass covered, and what it left out, in the report CI shows
        said = ET.SubElement(decision, "system-out")
        said.text = _text(f"covered: {covers}")
    if not passed:
        failure = ET.SubElement(decision, "failure", type=result.decision.value,
                                message=_text(f"{SAID[result.decision]}: {headline(result)}"))
        hint = settle_hint(result)
        failure.text = _text(hint and f"what would settle it: {hint}")
    for status, name, r in cases:
        case = ET.SubElement(suite, "testcase", classname=_text(f"rageval.gate.{r.get('metric') or 'metric'}"),
                             name=name)
        if status == "regression":
            failure = ET.SubElement(case, "failure", message=_text(f"regression shown: {drop_text(r)}; "
                                                                    f"allowed {r['allowed']:g}"), type="regression")
            failure.text = _text(drop_text(r))
        elif status == "undecided":
            ET.SubElement(case, "skipped", message=_text(f"not decision-grade: {r['why']} ({drop_text(r)})"))
        elif status == "not evaluated":
            ET.SubElement(case, "skipped", message=_text(f"not evaluated: {r['why']}"
                                                          + (f"; to fix: {r['fix']}" if r.get("fix") else "")))
        else:
            out = ET.SubElement(case, "system-out")
            out.text = _text(f"shown safe: {r['why']} ({drop_text(r)})")
    ET.indent(suites)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def _properties(suite: ET.Element, result: GateResult, head: str | None) -> None:
    """The suite's properties: the decision, the runs, the rule, what it covered, and its record's hash."""
    c = result.comparison
    props = ET.SubElement(suite, "properties")
    for name, value in (("decision", result.decision.value), ("baseline", c["baseline"]),
                        ("candidate", c["candidate"]), ("shared_questions", c["shared_questions"]),
                        ("alpha", result.alpha), ("rule", result.rule), ("covers", covers_text(result)),
                        ("not_gated_shown_to_drop", len(result.hidden_drops)),
                        *((("decision_record", head),) if head else ())):
        ET.SubElement(props, "property", name=name, value=_text(value))


def step_summary(result: GateResult) -> str:
    """Markdown for a CI job's summary: the pull-request comment (the decision, what would settle it, every cell's
    row; every name escaped), ending with the exit code the job sees."""
    return gate_markdown(result).rstrip() + f"\n\n`rageval gate` exit code: {result.exit_code}\n"
