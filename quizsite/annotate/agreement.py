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
