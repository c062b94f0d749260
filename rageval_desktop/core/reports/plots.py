"""Report charts as PNG bytes (matplotlib, Agg backend: no display, no Qt).

Run, slice, judge and metric names come from data: every chart is drawn with math text off, so a name such as
`$\\undefinedmacro$` prints as it is instead of crashing the chart (and the dashboard or report drawing it).
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable
from typing import Any

ACCENT, GREY = "#1a73e8", "#9aa0a6"


def _plain_text(chart: Callable[..., bytes]) -> Callable[..., bytes]:
    @functools.wraps(chart)
    def draw(*args: Any, **kwargs: Any) -> bytes:
        import matplotlib

        matplotlib.use("Agg")
        with matplotlib.rc_context({"text.parse_math": False, "text.usetex": False}):
            return chart(*args, **kwargs)

    return draw


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return buf.getvalue()


@_plain_text
def slice_bars(report: dict[str, Any]) -> bytes:
    """One panel per headline metric: the run (and the baseline, grey) per slice."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    summary = report["dashboard"]
    metrics = ["hit@5", "mrr", *summary["judge_metrics"]][:4]
    slices = list(summary["slices"])
    comparison = report.get("comparison")
    fig, axes = plt.subplots(1, len(metrics), figsize=(3.4 * len(metrics), 3.4), squeeze=False)
    x = np.arange(len(slices))
    for ax, metric in zip(axes[0], metrics, strict=True):
        values = [summary["slices"][s].get(metric) for s in slices]
        width = 0.38 if comparison else 0.7
        if comparison:
            base = [((comparison["slices"].get(s) or {}).get(metric) or {}).get("baseline") for s in slices]
            ax.bar(x - width / 2, [v if v is not None else 0 for v in base], width, color=GREY,
                   label=comparison["baseline"])
            ax.bar(x + width / 2, [v if v is not None else 0 for v in values], width, color=ACCENT,
                   label=summary["run"])
            ax.legend(fontsize=7, frameon=False)
        else:
            ax.bar(x, [v if v is not None else 0 for v in values], width, color=ACCENT)
        ax.set_title(metric, fontsize=10)
        ax.set_xticks(x, slices, fontsize=7, rotation=35, ha="right")
        ax.set_ylim(0, 100)
        ax.set_ylabel("score (0–100)", fontsize=8)
        ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return _png(fig)


@_plain_text
def delta_chart(comparison: dict[str, Any]) -> bytes:
    """Per slice, each metric's delta (candidate - baseline) with its 95% CI."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = comparison["metrics"]
    slices = list(comparison["slices"])
    fig, ax = plt.subplots(figsize=(9, 0.16 * len(slices) * len(metrics) + 1.2))
    y, labels = 0, []
    for s in slices:
        for m in metrics:
            cell = comparison["slices"][s].get(m)
            if cell:
                # a zero delta is neutral; a colour says the direction, not that the change is real
                colour = "#b3261e" if cell["delta"] < 0 else "#1f7a4d" if cell["delta"] > 0 else GREY
                ax.errorbar(cell["delta"], y, xerr=[[cell["delta"] - cell["ci"][0]], [cell["ci"][1] - cell["delta"]]],
                            fmt="o", color=colour, ms=4, capsize=2)
            labels.append(f"{s} · {m}")
            y += 1
    ax.axvline(0, color=GREY, lw=1)
    ax.set_yticks(range(len(labels)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(f"delta in points ({comparison['candidate']} − {comparison['baseline']}), 95% CI", fontsize=8)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return _png(fig)


@_plain_text
def lab_chart(data: dict[str, Any]) -> bytes:
    """The retrieval lab: hit@5/10/50 and MRR for each configuration ("chunk size matters")."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    configs = data["configs"]
    metrics = ["hit@5", "hit@10", "hit@50", "mrr"]
    x = np.arange(len(metrics))
    width = 0.8 / max(1, len(configs))
    fig, ax = plt.subplots(figsize=(8, 3.6))
    colours = ["#9aa0a6", ACCENT, "#1f7a4d", "#b06000", "#6a1b9a", "#00838f"]
    for i, c in enumerate(configs):
        values = [c["slices"]["all"][m] for m in metrics]
        ax.bar(x + (i - (len(configs) - 1) / 2) * width, values, width, label=f"{c['config']} · {c['model']}",
               color=colours[i % len(colours)])
    ax.set_xticks(x, metrics)
    ax.set_ylim(0, 100)
    ax.set_ylabel("score (0–100)")
    ax.set_title(f"Retrieval lab: {data['questions']} golden questions")
    ax.legend(fontsize=7, frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return _png(fig)
