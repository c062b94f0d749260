"""The Audit page's words, read without a window (gui/page_numbers.py is Qt-free)."""

from __future__ import annotations


def test_the_audit_pages_transport_line_in_short():
    from rageval_desktop.gui.page_numbers import transport_short

    base = {"run": "v3", "n_run": 40.0, "errors_run": 0.05, "n_audit": 120.0, "errors_audit": 0.04, "plan": None}
    assert transport_short({**base, "status": "holds"}) == (
        "Does its audit hold on v3? Yes so far — it errs on 5% of 40 rated rows there, 4% elsewhere.")
    assert transport_short({**base, "status": "not checked", "plan": {"ratings": 160, "power_at": 0.81}}) == (
        "Does its audit hold on v3? Not checked — no ratings on v3 yet. A check of 160 rows sees a 5-point rise 81% "
        "of the time.")
    assert transport_short({**base, "status": "audited here"}) == "Does its audit hold on v3? Its audit is v3's own."
    assert transport_short({**base, "status": "cannot tell"}).startswith("Does its audit hold on v3? Cannot tell yet")
