"""Figures of a fit as SVG made on the server with matplotlib (readable without a network, no JS needed).

- skills: agent skills per dimension, agents grouped by kind (the paper's Fig. 6)
- relevance: distribution of each dimension's relevance over the items, with the share of items for
  which it is relevant, r > 0.6 (Fig. 8)
- clusters: items clustered by effective difficulty; mean relevance and mean effective difficulty per
  cluster and dimension (Fig. 10)
- history: training and validation loss per epoch
"""

from __future__ import annotations

import io
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from .models import FitAgent, FitItem, FitRun

if TYPE_CHECKING:
    from matplotlib.collections import PolyCollection
    from matplotlib.figure import Figure


@lru_cache(maxsize=1)
def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend, imported with the first figure. The URLconf imports this
    module, so at import time it cost every Django process about a second of its start (a command, a
    worker, each test's subprocess; `manage.py check` 5.1 -> 3.9 s), and few of them ever draw. The
    ASGI server imports it up front (quizsite/asgi.py), so its objects are frozen with the rest."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


KIND_STYLE = {"human": ("Humans", "#c2410c"), "human_group": ("Human groups", "#a16207"), "ai": ("AI systems", "#1d4ed8")}
RELEVANT = 0.6


def _svg(fig: Figure) -> str:
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight")
    pyplot().close(fig)
    return buffer.getvalue()


def _empty(message: str) -> str:
    fig, ax = pyplot().subplots(figsize=(5, 1.2))
    ax.axis("off")
    ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=11, color="#667085")
    return _svg(fig)


def skills_svg(run: FitRun) -> str:
    agents = list(FitAgent.objects.filter(fit=run).values_list("kind", "skill"))
    if not agents:
        return _empty("no fitted agents")
    names = run.dim_names()
    m = len(names)
    kinds = [k for k in KIND_STYLE if any(kind == k for kind, _ in agents)]
    fig, axes = pyplot().subplots(1, m, figsize=(max(3.0, 2.3 * m), 3.6), sharey=True, squeeze=False)
    rng = np.random.default_rng(0)
    for k, ax in enumerate(axes[0]):
        for pos, kind in enumerate(kinds):
            values = np.asarray([s[k] for kk, s in agents if kk == kind and len(s) > k])
            label, color = KIND_STYLE[kind]
            if len(values) > 1:
                box = ax.boxplot(values, positions=[pos], widths=0.55, showfliers=False, patch_artist=True)
                for patch in box["boxes"]:
                    patch.set(facecolor=color, alpha=0.18, edgecolor=color)
                for part in ("medians", "whiskers", "caps"):
                    for line in box[part]:
                        line.set(color=color)
            jitter = rng.uniform(-0.16, 0.16, len(values))
            ax.scatter(pos + jitter, values, s=16, color=color, alpha=0.85, label=label if k == 0 else None, zorder=3)
        ax.set_xticks(range(len(kinds)))
        ax.set_xticklabels([KIND_STYLE[kd][0].split()[0] for kd in kinds], fontsize=8)
        ax.set_title(names[k], fontsize=10)
        ax.axhline(0, color="#999", lw=0.6, zorder=0)
    axes[0][0].set_ylabel("skill")
    fig.legend(loc="lower center", ncol=len(kinds), frameon=False, bbox_to_anchor=(0.5, -0.08), fontsize=9)
    return _svg(fig)


def relevance_svg(run: FitRun) -> str:
    rel = [r for r in FitItem.objects.filter(fit=run).values_list("relevance", flat=True) if r]
    if not rel:
        return _empty("this model has no relevance (CAIMIRA only)")
    r = np.asarray(rel)
    names = run.dim_names()
    fig, ax = pyplot().subplots(figsize=(max(4.0, 1.3 * len(names) + 1), 3.4))
    parts = ax.violinplot([r[:, k] for k in range(r.shape[1])], showmedians=True)
    # the stub types every entry as one Collection, but "bodies" is a list of them
    for body in cast("list[PolyCollection]", parts["bodies"]):
        body.set(facecolor="#3257d6", alpha=0.35)
    share = (r > RELEVANT).mean(axis=0)
    for k in range(r.shape[1]):
        ax.text(k + 1, 1.04, f"{share[k]:.0%} > {RELEVANT}", ha="center", fontsize=8, color="#1d2330")
    ax.axhline(RELEVANT, color="#c23b3b", lw=0.8, ls="--")
    ax.set_xticks(range(1, len(names) + 1))
    ax.set_xticklabels(names, fontsize=9)
    ax.set_ylim(0, 1.1)
    ax.set_ylabel("relevance r")
    ax.set_title(f"Relevance per dimension over {len(r)} items", fontsize=10)
    return _svg(fig)


def clusters_svg(run: FitRun) -> str:
    clusters = run.clusters or []
    if not clusters:
        return _empty("no clusters (CAIMIRA fits only)")
    names = run.dim_names()
    rel = np.asarray([c["mean_relevance"] for c in clusters])
    eff = np.asarray([c["mean_effective_difficulty"] for c in clusters])
    rows = [f"C{c['cluster'] + 1} (n={c['size']})" for c in clusters]
    fig, axes = pyplot().subplots(1, 2, figsize=(max(7.0, 2.2 * len(names) + 3), 0.45 * len(rows) + 1.8))
    bound = float(np.abs(eff).max()) or 1.0
    for ax, values, title, cmap, vmin, vmax in (
        (axes[0], rel, "mean relevance", "Blues", 0.0, 1.0),
        (axes[1], eff, "mean effective difficulty", "RdBu_r", -bound, bound),
    ):
        image = ax.imshow(values, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names, fontsize=8, rotation=30, ha="right")
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels(rows, fontsize=8)
        ax.set_title(title, fontsize=10)
        for i in range(values.shape[0]):
            for j in range(values.shape[1]):
                dark = (values[i, j] - vmin) / (vmax - vmin) > 0.65 or (vmin < 0 and values[i, j] < 0.65 * vmin)
                ax.text(j, i, f"{values[i, j]:.2f}", ha="center", va="center", fontsize=7, color="white" if dark else "black")
        fig.colorbar(image, ax=ax, shrink=0.8)
    return _svg(fig)


def history_svg(run: FitRun) -> str:
    history = run.history or []
    if not history:
        return _empty("no training history")
    epochs = [h["epoch"] for h in history]
    fig, ax = pyplot().subplots(figsize=(5.5, 2.6))
    ax.plot(epochs, [h["train_bce"] for h in history], label="train BCE", color="#3257d6")
    val = [h.get("val_bce") for h in history]
    if any(v is not None for v in val):
        ax.plot(epochs, [np.nan if v is None else v for v in val], label="validation BCE", color="#c2410c")
    best = run.metrics.get("best_epoch")
    if best:
        ax.axvline(best, color="#999", lw=0.8, ls=":", label=f"best epoch {best}")
    ax.set_xlabel("epoch")
    ax.legend(frameon=False, fontsize=8)
    return _svg(fig)


PLOTS: dict[str, Callable[[FitRun], str]] = {
    "skills": skills_svg,
    "relevance": relevance_svg,
    "clusters": clusters_svg,
    "history": history_svg,
}


# --- analysis figures (analyses.py) ----------------------------------------------------------------------


def _heatmap(values: np.ndarray, rows: list[str], columns: list[str], title: str, cmap: str, center: bool) -> str:
    fig, ax = pyplot().subplots(figsize=(max(4.5, 0.9 * len(columns) + 2.5), 0.42 * len(rows) + 1.6))
    finite = values[np.isfinite(values)]
    if center:
        bound = float(np.abs(finite).max()) if finite.size else 1.0
        vmin, vmax = -(bound or 1.0), bound or 1.0
    else:
        vmin, vmax = 0.0, 1.0
    image = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_xticks(range(len(columns)))
    ax.set_xticklabels(columns, fontsize=8, rotation=30, ha="right")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(rows, fontsize=8)
    ax.set_title(title, fontsize=10)
    for i in range(values.shape[0]):
        for j in range(values.shape[1]):
            v = values[i, j]
            if np.isfinite(v):
                # a diverging map is dark at both ends; viridis only at the low end
                dark = abs(v - (vmin + vmax) / 2) > 0.33 * (vmax - vmin) if center else v < vmin + 0.45 * (vmax - vmin)
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=7, color="white" if dark else "black")
    fig.colorbar(image, ax=ax, shrink=0.8)
    return _svg(fig)


def cluster_difficulty_svg(run: FitRun) -> str:
    """Fig. 10: relevance-weighted difficulty per question cluster and dimension, and Overall (mean r_j . d_j)."""
    from .analyses import cluster_difficulty_table

    table = cluster_difficulty_table(run)
    if not table or not table["clusters"]:
        return _empty("no relevance (CAIMIRA fits only)")
    rows = [f"C{c['cluster'] + 1} (n={c['size']})" for c in table["clusters"]]
    values = np.asarray([[np.nan if v is None else v for v in c["weighted_difficulty"]] + [np.nan if c["overall"] is None else c["overall"]]
                         for c in table["clusters"]], dtype=np.float64)
    return _heatmap(values, rows, [*table["dim_names"], "Overall"], "relevance-weighted difficulty", "RdBu_r", center=True)


def group_clusters_svg(run: FitRun) -> str:
    """Fig. 9: accuracy of each agent group on each question cluster."""
    from .analyses import group_cluster_accuracy

    acc = group_cluster_accuracy(run)
    if not acc or not acc["groups"]:
        return _empty("no relevance (CAIMIRA fits only)")
    values = np.asarray([[np.nan if v is None else v for v in g["accuracy"]] for g in acc["groups"]], dtype=np.float64)
    rows = [f"{g['label']} ({g['n_agents']})" for g in acc["groups"]]
    columns = [f"C{c['cluster'] + 1}" for c in acc["clusters"]]
    return _heatmap(values, rows, columns, "accuracy by agent group and question cluster", "viridis", center=False)


def group_skills_svg(run: FitRun) -> str:
    """Fig. 6: skills per dimension by agent group (the agent's sub-type)."""
    from .analyses import GROUP_LABEL, GROUPS, group_skill_values

    values = group_skill_values(run)
    if not values:
        return _empty("no fitted agents")
    names = run.dim_names()
    groups = [g for g, _label in GROUPS if any(gg == g for gg, _s in values)]
    colors = pyplot().get_cmap("tab10")
    fig, axes = pyplot().subplots(1, len(names), figsize=(max(3.0, 2.4 * len(names)), 3.8), sharey=True, squeeze=False)
    for k, ax in enumerate(axes[0]):
        data = [np.asarray([s[k] for gg, s in values if gg == g and len(s) > k]) for g in groups]
        box = ax.boxplot(data, positions=range(len(groups)), widths=0.6, showfliers=False, patch_artist=True)
        for i, patch in enumerate(box["boxes"]):
            patch.set(facecolor=colors(i), alpha=0.35)
        for i, d in enumerate(data):
            ax.scatter(np.full(len(d), i), d, s=10, color=colors(i), zorder=3)
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels([GROUP_LABEL[g] for g in groups], fontsize=7, rotation=40, ha="right")
        ax.set_title(names[k], fontsize=10)
        ax.axhline(0, color="#999", lw=0.6, zorder=0)
    axes[0][0].set_ylabel("skill")
    return _svg(fig)


PLOTS.update({
    "cluster-difficulty": cluster_difficulty_svg,
    "group-clusters": group_clusters_svg,
    "group-skills": group_skills_svg,
})
