"""Project settings that decide retirement, kept in the project's meta table."""

from __future__ import annotations

import math
from dataclasses import dataclass

from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.store.changes import Area
from rageval_desktop.core.store.project import Project

STATISTICS = ("auto", "quadratic_kappa", "cohen_kappa", "krippendorff_alpha", "spearman", "exact")
RULES = {"interval": "the evidence decides: keep when the anytime-valid interval (valid however often you look) lies "
                     "at or above the threshold, retire when below it",
         "point": "point estimate (the old rule): the estimate alone is compared with the threshold"}


@dataclass(frozen=True)
class RetirementPolicy:
    statistic: str = "auto"   # auto: quadratic-weighted kappa for ordinal scales, Cohen's kappa for binary
    threshold: float = 0.7
    min_n: int = 30
    rule: str = "interval"    # interval | point (see RULES)
    bias_margin: float = 5.0  # points (0-100): a judge whose mean bias is shown to exceed this is flagged
    monitor_floor: float = 0.4   # a judge whose agreement's lower bound reaches this may monitor, not gate
    selective_alpha: float = 0.1  # selective judging: the disagreement allowed on the rows a judge decides
    selective_delta: float = 0.1  # and the chance that guarantee fails (core.review.selective)

    def deciding(self, points: int) -> str:
        """The statistic that decides on a scale of `points` scores: Cohen's kappa on a yes/no scale, quadratic
        weighted kappa on an ordered one (0-3, 1-5, or not/partial/full support)."""
        if self.statistic != "auto":
            return self.statistic
        return "cohen_kappa" if points <= 2 else "quadratic_kappa"


def policy(project: Project) -> RetirementPolicy:
    return RetirementPolicy(statistic=project.meta("retirement.statistic", "auto") or "auto",
                            threshold=float(project.meta("retirement.threshold", "0.7") or 0.7),
                            min_n=int(project.meta("retirement.min_n", "30") or 30),
                            rule=project.meta("retirement.rule", "interval") or "interval",
                            bias_margin=float(project.meta("retirement.bias_margin", "5") or 5),
                            monitor_floor=float(project.meta("licence.monitor_floor", "0.4") or 0.4),
                            selective_alpha=float(project.meta("selective.alpha", "0.1") or 0.1),
                            selective_delta=float(project.meta("selective.delta", "0.1") or 0.1))


def selective_levels(project: Project, alpha: float | None = None, delta: float | None = None) -> tuple[float, float]:
    """The α and δ of selective judging: those given, else the project's (`rageval settings set --selective-alpha`),
    else 0.1 and 0.1."""
    if alpha is not None and delta is not None:
        return alpha, delta
    pol = policy(project)
    return (pol.selective_alpha if alpha is None else alpha), (pol.selective_delta if delta is None else delta)


def set_policy(project: Project, *, statistic: str | None = None, threshold: float | None = None,
               min_n: int | None = None, rule: str | None = None,
               bias_margin: float | None = None, selective_alpha: float | None = None,
               selective_delta: float | None = None) -> RetirementPolicy:
    if statistic is not None and statistic not in STATISTICS:
        raise RagevalError(f"unknown statistic '{statistic}'; choose one of {', '.join(STATISTICS)}")
    if threshold is not None and not -1 <= threshold <= 1:
        raise RagevalError("the threshold is an agreement value between -1 and 1")
    if rule is not None and rule not in RULES:
        raise RagevalError(f"unknown rule '{rule}'; choose one of {', '.join(RULES)}")
    if min_n is not None and min_n < 2:
        raise RagevalError("the minimum number of ratings must be at least 2")
    if bias_margin is not None and not (math.isfinite(bias_margin) and 0 <= bias_margin <= 100):
        raise RagevalError("the bias margin is a number of points between 0 and 100")
    for name, share in (("selective alpha", selective_alpha), ("selective delta", selective_delta)):
        if share is not None and not (math.isfinite(share) and 0 < share < 0.5):
            raise RagevalError(f"the {name} is a probability between 0 and 0.5 (for example 0.1)")
    with project.write("set retirement policy", changed=(Area.SETTINGS,)) as conn:
        for key, value in (("retirement.statistic", statistic), ("retirement.threshold", threshold),
                           ("retirement.min_n", min_n), ("retirement.rule", rule),
                           ("retirement.bias_margin", bias_margin), ("selective.alpha", selective_alpha),
                           ("selective.delta", selective_delta)):
            if value is not None:
                project.set_meta(conn, key, str(value))
        project.audit(conn, "set retirement policy", "settings", None, statistic=statistic, threshold=threshold,
                      min_n=min_n, rule=rule, bias_margin=bias_margin, selective_alpha=selective_alpha,
                      selective_delta=selective_delta)
    return policy(project)
