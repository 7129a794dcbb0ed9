"""Metrics of predicted probabilities against 0/1 rulings (numpy only)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["bce", "accuracy", "auc", "min_recall", "binary_metrics", "majority_baseline", "metrics_by_group"]

_EPS = 1e-7


def bce(p: np.ndarray, y: np.ndarray) -> float:
    """Mean binary cross-entropy (natural log), probabilities clipped to [1e-7, 1 - 1e-7]."""
    p = np.clip(np.asarray(p, dtype=np.float64), _EPS, 1 - _EPS)
    y = np.asarray(y, dtype=np.float64)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log1p(-p)))


def accuracy(p: np.ndarray, y: np.ndarray) -> float:
    """Share of rulings matched by thresholding at 0.5 (p >= 0.5 predicts correct)."""
    return float(np.mean((np.asarray(p) >= 0.5) == (np.asarray(y) >= 0.5)))


def auc(p: np.ndarray, y: np.ndarray) -> float | None:
    """ROC AUC by the rank-sum (Mann-Whitney) formula with average ranks for ties; None for one class."""
    p = np.asarray(p, dtype=np.float64)
    y = np.asarray(y) >= 0.5
    n_pos = int(y.sum())
    n_neg = len(y) - n_pos
    if n_pos == 0 or n_neg == 0:
        return None
    order = np.argsort(p, kind="mergesort")
    sp = p[order]
    ranks = np.empty(len(p), dtype=np.float64)
    # average rank over runs of equal scores
    starts = np.r_[0, np.flatnonzero(np.diff(sp)) + 1]
    ends = np.r_[starts[1:], len(sp)]
    avg = (starts + ends + 1) / 2.0  # 1-based average rank of each run
    ranks[order] = np.repeat(avg, ends - starts)
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def min_recall(p: np.ndarray, y: np.ndarray) -> float | None:
    """The lower of the two per-class recalls (threshold 0.5); None unless both classes occur."""
    pred = np.asarray(p) >= 0.5
    y = np.asarray(y) >= 0.5
    if y.all() or not y.any():
        return None
    return float(min(pred[y].mean(), (~pred[~y]).mean()))


def binary_metrics(p: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    """``{"n", "positive_rate", "bce", "accuracy", "auc", "min_recall"}`` (empty input: only ``n``)."""
    y = np.asarray(y)
    if len(y) == 0:
        return {"n": 0}
    return {
        "n": int(len(y)),
        "positive_rate": float(np.mean(y >= 0.5)),
        "bce": bce(p, y),
        "accuracy": accuracy(p, y),
        "auc": auc(p, y),
        "min_recall": min_recall(p, y),
    }


def majority_baseline(y_train: np.ndarray, y_eval: np.ndarray) -> dict[str, Any]:
    """Predict the training base rate for everyone: accuracy of its majority class, BCE of the rate."""
    rate = float(np.mean(np.asarray(y_train) >= 0.5)) if len(y_train) else 0.5
    p = np.full(len(y_eval), rate)
    out = binary_metrics(p, y_eval)
    out["train_positive_rate"] = rate
    return out


def metrics_by_group(p: np.ndarray, y: np.ndarray, groups: Sequence[str] | np.ndarray) -> dict[str, dict[str, Any]]:
    """:func:`binary_metrics` for each distinct value of ``groups`` (e.g. the agent type of each response)."""
    g = np.asarray(groups)
    return {str(k): binary_metrics(p[g == k], y[g == k]) for k in sorted(set(g.tolist()))}
