"""Inter-annotator agreement in plain numpy (no Django): Fleiss' kappa and Krippendorff's alpha (nominal).

Both take a count table: one row per item (unit), one column per category, cell = how many annotators
put that item in that category. Items with fewer than two ratings carry no agreement and are dropped.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Kappa:
    kappa: float | None
    p_bar: float | None  # observed agreement, the mean over items of P_i
    p_e: float | None  # chance agreement, the sum of squared category shares
    n_items: int


def count_table(ratings: Iterable[Sequence[Hashable]]) -> np.ndarray:
    """Per item, the list of categories its annotators chose -> the item x category count table."""
    ratings = [list(r) for r in ratings]
    categories = sorted({c for r in ratings for c in r}, key=repr)
    index = {c: j for j, c in enumerate(categories)}
    table = np.zeros((len(ratings), max(len(categories), 1)), dtype=float)
    for i, r in enumerate(ratings):
        for c in r:
            table[i, index[c]] += 1
    return table


def _usable(table: np.ndarray) -> np.ndarray:
    table = np.asarray(table, dtype=float)
    if table.ndim != 2:
        raise ValueError("a count table has one row per item and one column per category")
    return table[table.sum(axis=1) >= 2]


def fleiss_kappa(table: np.ndarray) -> Kappa:
    """Fleiss' kappa with its parts. With the same number of ratings per item this is Fleiss (1971)
    exactly (what statsmodels computes); with varying numbers each item's P_i uses its own n_i and the
    category shares pool all ratings."""
    t = _usable(table)
    if len(t) == 0:
        return Kappa(None, None, None, 0)
    n_i = t.sum(axis=1)
    p_i = ((t * t).sum(axis=1) - n_i) / (n_i * (n_i - 1))
    p_bar = float(p_i.mean())
    shares = t.sum(axis=0) / t.sum()
    p_e = float((shares**2).sum())
    kappa = None if np.isclose(p_e, 1.0) else (p_bar - p_e) / (1 - p_e)
    return Kappa(None if kappa is None else float(kappa), p_bar, p_e, len(t))


def krippendorff_alpha_nominal(table: np.ndarray) -> float | None:
    """Krippendorff's alpha for nominal data from the coincidence matrix (Krippendorff 2011):
    alpha = 1 - D_o / D_e with D_o = sum_{c!=k} o_ck / n and D_e = sum_{c!=k} n_c n_k / (n (n - 1))."""
    t = _usable(table)
    if len(t) == 0:
        return None
    m_u = t.sum(axis=1)
    # o_ck = sum_u n_uc (n_uk - [c == k]) / (m_u - 1)
    weighted = t / (m_u - 1)[:, None]
    coincidence = weighted.T @ t - np.diag(weighted.sum(axis=0))
    n_c = coincidence.sum(axis=1)
    n = n_c.sum()
    disagree_observed = (coincidence.sum() - np.trace(coincidence)) / n
    disagree_expected = (n * n - (n_c**2).sum()) / (n * (n - 1))
    if np.isclose(disagree_expected, 0.0):
        return None
    return float(1 - disagree_observed / disagree_expected)


@dataclass(frozen=True)
class RobustScores:
    """RoMQA's figures for one agent: F1 and accuracy over its answers, and their robust forms, the
    minimum over each cluster's questions averaged over clusters (a cluster counts as correct only when
    every one of its questions is)."""

    f1: float | None
    accuracy: float | None
    robust_f1: float | None
    robust_accuracy: float | None
    n_answers: int
    n_clusters: int


def robust_scores(answers: Iterable[tuple[Hashable, float | None, bool | None]]) -> RobustScores:
    """answers: (cluster id, F1 or None, correct or None), one per question the agent answered."""
    rows = list(answers)
    clusters: dict[Hashable, list[tuple[float | None, bool | None]]] = {}
    for cluster, f1, correct in rows:
        clusters.setdefault(cluster, []).append((f1, correct))
    f1s = [f for _c, f, _ok in rows if f is not None]
    oks = [bool(ok) for _c, _f, ok in rows if ok is not None]

    def mean(values: list[float]) -> float | None:
        return float(np.mean(values)) if values else None

    robust_f1 = [
        min(f or 0.0 for f, _ok in rs) for rs in clusters.values() if any(f is not None for f, _ok in rs)
    ]
    robust_ok = [
        float(all(bool(ok) for _f, ok in rs))
        for rs in clusters.values()
        if any(ok is not None for _f, ok in rs)
    ]
    return RobustScores(
        mean(f1s), mean([float(o) for o in oks]), mean(robust_f1), mean(robust_ok), len(rows), len(clusters)
    )


def macro_f1(gold: Sequence[Hashable], predicted: Sequence[Hashable]) -> float | None:
    """Mean over classes of F1_c = 2 TP_c / (2 TP_c + FP_c + FN_c), the classes being every label that occurs
    in gold or predicted (scikit-learn's f1_score(average="macro") with those labels)."""
    if len(gold) != len(predicted):
        raise ValueError("gold and predicted differ in length")
    if not gold:
        return None
    scores = []
    for c in sorted(set(gold) | set(predicted), key=repr):
        tp = sum(1 for g, p in zip(gold, predicted, strict=True) if g == c and p == c)
        fp = sum(1 for g, p in zip(gold, predicted, strict=True) if g != c and p == c)
        fn = sum(1 for g, p in zip(gold, predicted, strict=True) if g == c and p != c)
        scores.append(2 * tp / (2 * tp + fp + fn))
    return float(np.mean(scores))


def position_effects(answers: Iterable[tuple[int, int]], n_slots: int) -> list[dict[str, float | int | None]]:
    """answers: (slot the true option was shown in, slot chosen), 0-based. Per slot s: how often the true
    option was shown there, the accuracy of those answers, and the share of all answers that chose slot s
    (1 / n_slots for an annotator without a position bias)."""
    rows = list(answers)
    out: list[dict[str, float | int | None]] = []
    for s in range(n_slots):
        shown = [chosen == true for true, chosen in rows if true == s]
        out.append(
            {
                "slot": s + 1,
                "true_shown": len(shown),
                "accuracy_when_true_here": float(np.mean(shown)) if shown else None,
                "chosen": sum(1 for _t, chosen in rows if chosen == s),
                "choice_rate": sum(1 for _t, chosen in rows if chosen == s) / len(rows) if rows else None,
            }
        )
    return out
