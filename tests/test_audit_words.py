"""The Audit page's words, read without a window (gui/page_numbers.py is Qt-free)."""

from __future__ import annotations

from rageval_desktop.core.review.licence import Licence, TransportCheck
from rageval_desktop.core.review.transport import Plan, Transport
from rageval_desktop.gui.page_numbers import transport_short


def check(status: str, sized: Plan | None = None) -> TransportCheck:
    t = Transport("j", "v3", status, 40.0, 0.05, 120.0, 0.04, 0.3)
    return TransportCheck(t, Licence("j", "gate"), sized, "", "")


def test_the_audit_pages_transport_line_in_short():
    assert transport_short(check("holds")) == (
        "Does its audit hold on v3? Yes so far — it errs on 5% of 40 rated rows there, 4% elsewhere.")
    sized = Plan(0.05, 0.04, 120, 0.09, 0.8, 0.05, 160, None, 0.81)
    assert transport_short(check("not checked", sized)) == (
        "Does its audit hold on v3? Not checked — no ratings on v3 yet. A check of 160 rows sees a 5-point rise 81% "
        "of the time.")
    assert transport_short(check("audited here")) == "Does its audit hold on v3? Its audit is v3's own."
    assert transport_short(check("cannot tell")).startswith("Does its audit hold on v3? Cannot tell yet")
    too_small = Plan(0.05, 0.04, 120, 0.09, 0.8, 0.05, None, 805, None)
    assert transport_short(check("suspended", too_small)) == (
        "Does its audit hold on v3? No — it errs on 5% of 40 rated rows there, 4% elsewhere: its metrics on v3 do "
        "not gate. A 5-point rise is too small for its audit to show.")
