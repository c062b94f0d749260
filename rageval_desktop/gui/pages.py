"""The pages of the main window, one line each: where it sits in the navigation, its title, and its class (module
and name, imported on first visit). A page is a QWidget built with the app state (`gui/state.py`) alone, with a
`refresh(runs)` and a `shows` (the areas of the project whose changes make it refresh itself).

To add a page: write its module in gui/views/, add its line here. Nothing else changes."""

from __future__ import annotations

from typing import NamedTuple


class PageSpec(NamedTuple):      # (not a dataclass: importing dataclasses took 3 ms before the first paint)
    key: str
    title: str
    section: str            # the navigation's heading it sits under
    module: str             # in rageval_desktop.gui.views
    cls: str
    counted: str | None = None   # a count from project_info shown beside the title ("Judges (4)")


PAGES: tuple[PageSpec, ...] = (
    PageSpec("dashboard", "Dashboard", "EVALUATE", "analysis_views", "DashboardView"),
    PageSpec("compare", "Compare", "EVALUATE", "analysis_views", "CompareView"),
    PageSpec("failures", "Failures", "EVALUATE", "analysis_views", "FailuresView"),
    PageSpec("judges", "Judges", "EVALUATE", "judges_view", "JudgesView", counted="judges"),
    PageSpec("jobs", "Jobs", "EVALUATE", "jobs_view", "JobsView"),
    PageSpec("review", "Review", "HUMANS", "review_view", "ReviewView"),
    PageSpec("pairwise", "Pairwise", "HUMANS", "pairwise_view", "PairwiseView"),
    PageSpec("audit", "Audit", "HUMANS", "audit_view", "AuditView"),
    PageSpec("team", "Team", "HUMANS", "team_view", "TeamView"),
)
BY_KEY = {p.key: p for p in PAGES}
BY_CLASS = {p.cls: p for p in PAGES}
