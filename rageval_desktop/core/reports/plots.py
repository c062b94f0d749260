"""Report charts as PNG bytes (matplotlib, Agg backend: no display, no Qt).

Run, slice, judge and metric names come from data: every chart is drawn with math text off, so a name such as
`$\\undefinedmacro$` prints as it is instead of crashing the chart (and the dashboard or report drawing it).
"""

from __future__ import annotations

import functools
import io
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rageval_desktop.core.metrics.retrieval import named

if TYPE_CHECKING:
    from matplotlib.axes import Axes

ACCENT, GREY = "#1a73e8", "#9aa0a6"
DPI = 100


@dataclass(frozen=True)
class Theme:
    """Colours of one theme. Charts for the app are drawn on a transparent background (the pane's own colour
    shows through: no white block in dark mode); reports use the light theme on white."""

    dark: bool = False

    @property
    def text(self) -> str:
        return "#e8eaed" if self.dark else "#202124"

    @property
    def muted(self) -> str:
        return "#9aa0a6" if self.dark else "#5f6368"

    @property
    def accent(self) -> str:
        return "#8ab4f8" if self.dark else ACCENT

    @property
    def baseline(self) -> str:
        return "#5f6368" if self.dark else "#bdc1c6"

    @property
    def worse(self) -> str:     # red and green that keep their contrast on either background
        return "#f28b82" if self.dark else "#c5221f"

    @property
    def better(self) -> str:
        return "#81c995" if self.dark else "#188038"

    def rc(self) -> dict[str, Any]:
        return {"text.color": self.text, "axes.labelcolor": self.text, "axes.edgecolor": self.muted,
                "xtick.color": self.muted, "ytick.color": self.muted, "axes.titlecolor": self.text,
                "legend.labelcolor": self.text}


@dataclass
class Region:
    """A clickable area of a chart, in the PNG's pixels (origin top left): what a click there is about."""

    x0: float
    y0: float
    x1: float
    y1: float
    slice: str
    metric: str

    def contains(self, x: float, y: float) -> bool:
        return self.x0 <= x <= self.x1 and self.y0 <= y <= self.y1


def _plain_text(chart: Callable[..., bytes]) -> Callable[..., bytes]:
    @functools.wraps(chart)
    def draw(*args: Any, **kwargs: Any) -> bytes:
        import matplotlib

        matplotlib.use("Agg")
        theme = kwargs.get("theme") or Theme()
        rc: Any = {"text.parse_math": False, "text.usetex": False, **theme.rc()}
        with matplotlib.rc_context(rc):
            return chart(*args, **kwargs)

    return draw


def _png(fig: Any, *, transparent: bool = False, fixed: bool = False) -> bytes:
    """`fixed`: keep the figure's exact pixel size (so regions measured on the canvas match the PNG)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI if fixed else 110, bbox_inches=None if fixed else "tight",
                transparent=transparent)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return buf.getvalue()


def _figure(size: tuple[int, int] | None, default: tuple[float, float], **kw: Any) -> tuple[Any, Any]:
    import matplotlib.pyplot as plt

    figsize = (max(size[0], 320) / DPI, max(size[1], 200) / DPI) if size else default
    return plt.subplots(figsize=figsize, dpi=DPI, squeeze=False, **kw)


def _regions_of(fig: Any, items: list[tuple[Any, str, str]], pad: float = 0.0) -> list[Region]:
    """Pixel boxes (top-left origin) of drawn artists or of (x0, y0, x1, y1) display boxes."""
    height = fig.get_figheight() * fig.dpi
    out = []
    for thing, slice_name, metric in items:
        x0, y0, x1, y1 = thing if isinstance(thing, tuple) else thing.get_window_extent().extents
        # plain floats (matplotlib gives numpy's): a region crosses from the app's helper process to the window,
        # which then need not import numpy to read it
        out.append(Region(float(x0 - pad), float(height - y1 - pad), float(x1 + pad), float(height - y0 + pad),
                          slice_name, metric))
    return out


def _keep_labels_in(fig: Any) -> bool:
    """After tight_layout: if rotated tick labels still run off the figure's foot (a short pane), raise the plots'
    bottom until they fit (was: "time-sensitive" cut to "ne-sensitive" at 1024 px). Leaves the figure drawn; True
    when it moved the plots (then it must be drawn again before anything is measured on it)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    lowest = min((t.get_window_extent(renderer).y0 for ax in fig.axes for t in ax.get_xticklabels()
                  if t.get_text()), default=0.0)
    if lowest < 2:
        height = fig.get_figheight() * fig.dpi
        bottom = fig.subplotpars.bottom + (2 - lowest) / height
        fig.subplots_adjust(bottom=min(bottom, 0.6))
        return True
    return False


def _err(values: list[float | None], cis: list[Any]) -> Any:
    import numpy as np

    low = [(v - c[0]) if v is not None and c else 0 for v, c in zip(values, cis, strict=True)]
    high = [(c[1] - v) if v is not None and c else 0 for v, c in zip(values, cis, strict=True)]
    return np.clip(np.array([low, high], dtype=float), 0, None)


def label_slant(width_px: float, n_plots: int, n_slices: int) -> dict[str, object]:
    """How the slice names under bars stand: slanted, or upright where a slant would run each into the next and the
    first off the plot's left — under ~24 px a slice, as on a 1024-px dashboard's four plots of seven slices."""
    spacing = width_px / max(1, n_plots) * 0.75 / max(1, n_slices)
    return {"rotation": 35, "ha": "right"} if spacing >= 24 else {"rotation": 90, "ha": "center"}


@_plain_text
def slice_bars(report: dict[str, Any], *, theme: Theme | None = None, size: tuple[int, int] | None = None,
               regions: list[Region] | None = None) -> bytes:
    """One panel per headline metric: the run per slice with 95% CI error bars, the baseline run beside it (grey,
    with its CIs) when there is one — a dashboard summary in `report["baseline_dashboard"]`, or a comparison's baseline
    means in `report["comparison"]`. `size` (pixels) draws for a pane, transparent; `regions` receives the bars."""
    import numpy as np

    theme = theme or Theme()
    summary = report["dashboard"]
    has_gold = any((v.get("n_with_gold") or 0) > 0 for v in summary["slices"].values())
    judged = summary["judge_metrics"]
    # without gold ids the gold-based bars would be empty: the judge-based UMBRELA scores come first instead
    umbrela = [m for m in ("umbrela_p@5", "umbrela_mrr") if m in judged]
    others = [m for m in judged if m not in umbrela]
    brief = named("brief")       # the retrieval metrics a dashboard chart shows, then the judge metrics
    metrics = ([*brief, *umbrela, *others] if has_gold else [*umbrela, *others] or brief)[:4]
    slices = list(summary["slices"])
    base = report.get("baseline_dashboard")
    comparison: dict[str, Any] = report.get("comparison") or {}
    base_name = base["run"] if base else comparison["baseline"] if comparison else None
    fig, axes = _figure(size, (3.4 * len(metrics), 3.4), ncols=len(metrics))
    x = np.arange(len(slices))
    drawn: list[tuple[Any, str, str]] = []
    slant = label_slant(fig.get_figwidth() * fig.dpi, len(metrics), len(slices))
    for ax, metric in zip(axes[0], metrics, strict=True):
        values = [summary["slices"][s].get(metric) for s in slices]
        cis = [summary["slices"][s].get(f"{metric}_ci") for s in slices]
        width = 0.38 if base_name else 0.7
        kw = {"capsize": 2, "error_kw": {"ecolor": theme.muted, "elinewidth": 0.8}}
        if base_name:
            if base:
                bvals = [(base["slices"].get(s) or {}).get(metric) for s in slices]
                bcis = [(base["slices"].get(s) or {}).get(f"{metric}_ci") for s in slices]
            else:
                bvals = [((comparison["slices"].get(s) or {}).get(metric) or {}).get("baseline") for s in slices]
                bcis = [None] * len(slices)
            ax.bar(x - width / 2, [v if v is not None else 0 for v in bvals], width, color=theme.baseline,
                   label=base_name, yerr=_err(bvals, bcis), **kw)
        bars = ax.bar(x + (width / 2 if base_name else 0), [v if v is not None else 0 for v in values], width,
                      color=theme.accent, label=summary["run"], yerr=_err(values, cis), **kw)
        drawn += [(bar, s, metric) for bar, s in zip(bars, slices, strict=True)]
        ax.set_title(metric, fontsize=10)
        ax.set_xticks(x, slices, fontsize=7, **slant)
        ax.set_ylim(0, 100)
        ax.set_ylabel("score (0–100), 95% CI", fontsize=8)
        ax.set_facecolor("none")
        ax.spines[["top", "right"]].set_visible(False)
    if base_name:      # one legend for the figure, above the plots: inside an axis it covered the tallest bars
        handles, labels = axes[0][0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="upper right", ncol=2, fontsize=7, frameon=False)
        fig.tight_layout(rect=(0, 0, 1, 0.93))
    else:
        fig.tight_layout()
    moved = _keep_labels_in(fig)
    if regions is not None:
        if moved:          # the bars moved: measure them where they are drawn now (else drawn once already)
            fig.canvas.draw()
        regions.extend(_regions_of(fig, drawn))
    return _png(fig, transparent=size is not None, fixed=size is not None)


BOX_METRICS = ("umbrela_mean", "umbrela_p@5", "nugget_weighted", "nugget_vital", "citation_f1", "hhem", "answered")


@_plain_text
def box_plot(report: dict[str, Any], *, theme: Theme | None = None, size: tuple[int, int] | None = None) -> bytes:
    """Open-rag-eval-style box plots of the gold-free metrics: one panel per metric, one box per run (the
    per-question values), the median as the box's line and the mean as a diamond, n under each box."""
    theme = theme or Theme()
    dist = report.get("distributions") or {}
    runs = list(dist)
    metrics = [m for m in BOX_METRICS if any(dist[r].get(m) for r in runs)][:6]
    if not metrics:
        metrics = sorted({m for r in runs for m, v in dist[r].items() if v})[:6]
    fig, axes = _figure(size, (2.6 * max(1, len(metrics)), 3.4), ncols=max(1, len(metrics)))
    for ax, metric in zip(axes[0], metrics, strict=False):
        data = [dist[r].get(metric) or [] for r in runs]
        shown = [d if d else [float("nan")] for d in data]
        colours = [theme.baseline if i < len(runs) - 1 else theme.accent for i in range(len(runs))]
        box = ax.boxplot(shown, patch_artist=True, showmeans=True, widths=0.55,
                         medianprops={"color": theme.text, "linewidth": 1.4},
                         meanprops={"marker": "D", "markerfacecolor": theme.text, "markeredgecolor": theme.text,
                                    "markersize": 4},
                         flierprops={"markersize": 3, "markeredgecolor": theme.muted},
                         whiskerprops={"color": theme.muted}, capprops={"color": theme.muted})
        for patch, colour in zip(box["boxes"], colours, strict=True):
            patch.set_facecolor(colour)
            patch.set_alpha(0.75)
            patch.set_edgecolor(theme.muted)
        ax.set_xticks(range(1, len(runs) + 1), [f"{r}\nn={len(d)}" for r, d in zip(runs, data, strict=True)],
                      fontsize=7)
        ax.set_title(metric, fontsize=10)
        ax.set_ylim(-3, 103)
        ax.set_ylabel("per question (0–100)", fontsize=8)
        ax.set_facecolor("none")
        ax.spines[["top", "right"]].set_visible(False)
    if not metrics:
        axes[0][0].text(0.5, 0.5, "no gold-free metric scored", ha="center", va="center", color=theme.muted)
        axes[0][0].set_axis_off()
    fig.tight_layout()
    return _png(fig, transparent=size is not None, fixed=size is not None)


def forest_grid(n_metrics: int) -> tuple[int, int]:
    """(rows, columns) of the forest plots: three to a row."""
    cols = min(3, n_metrics) or 1
    return -(-n_metrics // cols) or 1, cols


def forest_height(n_metrics: int, n_slices: int) -> int:
    """The height in pixels the forest plots need to stay readable on a screen: each slice a line of its own
    (16 px: the labels never overlap), a title and an axis per row of plots, the axis label below."""
    rows, _ = forest_grid(n_metrics)
    return rows * (16 * max(1, n_slices) + 72) + 28


def no_estimate(comparison: dict[str, Any], metric: str) -> str | None:
    """Why a metric's forest plot is empty: it was not compared, or no slice has an estimate under the estimator
    (the reason each cell gave, when they agree). None when some slice has one."""
    why = next((x["why"] for x in comparison.get("missing", []) if x["metric"] == metric), None)
    if why is not None:
        return f"not compared: {why}"
    if any(comparison["slices"][s].get(metric) for s in comparison["slices"]):
        return None
    reasons = list(dict.fromkeys(u["why"] for u in comparison.get("unavailable", []) if u["metric"] == metric))
    if len(reasons) == 1:
        return f"no estimate: {reasons[0]}"
    return "no estimate in any slice under this estimator (the table's cells say why)"


def _forest(ax: Axes, comparison: dict[str, Any], m: str, slices: list[str], theme: Theme
            ) -> list[tuple[Axes, float, float, str, str]]:
    """One metric's forest plot on `ax`; the (axes, CI low, CI high, slice, metric) of each point drawn. A plot with
    nothing to draw says why, rather than draw empty axes."""
    why = no_estimate(comparison, m)
    if why is not None:
        ax.text(0.5, 0.5, textwrap.fill(why, 38), transform=ax.transAxes, ha="center", va="center", fontsize=7,
                color=theme.muted)
        ax.set_xticks([])
    points = []
    for y, s in enumerate(slices):
        cell = comparison["slices"][s].get(m)
        if not cell:
            continue
        within = cell["ci"][0] <= 0 <= cell["ci"][1]
        colour = GREY if within else theme.worse if cell["delta"] < 0 else theme.better
        ax.errorbar(cell["delta"], y, xerr=[[cell["delta"] - cell["ci"][0]], [cell["ci"][1] - cell["delta"]]],
                    fmt="o", color=colour, ms=4, capsize=2, lw=1, markerfacecolor="none" if within else colour)
        points.append((ax, float(cell["ci"][0]), float(cell["ci"][1]), s, m))
    ax.axvline(0, color=theme.muted, lw=0.8)
    ax.set_title(f"Δ {m}", fontsize=9)
    ax.set_yticks(range(len(slices)), slices, fontsize=7)
    ax.tick_params(axis="x", labelsize=7)
    ax.set_ylim(len(slices) - 0.5, -0.5)
    ax.set_facecolor("none")
    ax.spines[["top", "right"]].set_visible(False)
    return points


@_plain_text
def delta_chart(comparison: dict[str, Any], *, theme: Theme | None = None, size: tuple[int, int] | None = None,
                regions: list[Region] | None = None) -> bytes:
    """A forest plot per metric (small multiples): each slice's delta (candidate − baseline) with its paired 95% CI.
    A delta whose CI includes 0 is grey, a hollow point (within noise); red and green, filled, only where the CI
    lies wholly below or above 0 — so colour is never the only sign (the point's fill says it too)."""
    theme = theme or Theme()
    metrics = comparison.get("shown_metrics") or comparison["metrics"]   # (a simulated comparison has none)
    slices = list(comparison["slices"])
    rows, cols = forest_grid(len(metrics))
    fig, axes = _figure(size, (3.3 * cols, 0.22 * len(slices) * rows + 1.0 * rows), nrows=rows, ncols=cols,
                        sharey=True)
    points: list[tuple[Axes, float, float, str, str]] = []
    for i, ax in enumerate(axes.flat):
        if i >= len(metrics):
            ax.set_visible(False)
            continue
        points += _forest(ax, comparison, metrics[i], slices, theme)
    fig.supxlabel(f"points ({comparison['candidate']} − {comparison['baseline']}), paired 95% CI", fontsize=8)
    fig.tight_layout()
    if regions is not None:
        fig.canvas.draw()
        drawn: list[tuple[Any, str, str]] = []
        for ax, low, high, s, m in points:
            at = slices.index(s)
            (x0, y0), (x1, _) = ax.transData.transform([(low, at), (high, at)])
            drawn.append(((min(x0, x1), y0 - 6, max(x0, x1), y0 + 6), s, m))
        regions.extend(_regions_of(fig, drawn, pad=3))
    return _png(fig, transparent=size is not None, fixed=size is not None)


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
