"""Interpreting a CAIMIRA fit: effective difficulty, item clusters (the paper's Fig. 10), relevance shares."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["effective_difficulty", "relevance_share", "ItemClusters", "cluster_items"]

RELEVANT = 0.6
"""A dimension k is relevant to item j when r_jk > 0.6 (the paper's threshold)."""


def effective_difficulty(relevance: np.ndarray, difficulty: np.ndarray) -> np.ndarray:
    """r_jk * d_jk, elementwise (items x dimensions)."""
    return np.asarray(relevance) * np.asarray(difficulty)


def relevance_share(relevance: np.ndarray, threshold: float = RELEVANT) -> np.ndarray:
    """For each dimension, the share of items for which it is relevant (r_jk > threshold)."""
    r = np.asarray(relevance)
    if len(r) == 0:
        return np.zeros(r.shape[1] if r.ndim == 2 else 0)
    return (r > threshold).mean(axis=0)


@dataclass
class ItemClusters:
    labels: np.ndarray  # (n_items,) cluster of each item
    sizes: np.ndarray  # (k,)
    mean_relevance: np.ndarray  # (k, m)
    mean_effective_difficulty: np.ndarray  # (k, m)
    centers: np.ndarray  # (k, m) KMeans centres in effective-difficulty space

    def as_records(self) -> list[dict[str, object]]:
        return [
            {
                "cluster": c,
                "size": int(self.sizes[c]),
                "mean_relevance": self.mean_relevance[c].tolist(),
                "mean_effective_difficulty": self.mean_effective_difficulty[c].tolist(),
            }
            for c in range(len(self.sizes))
        ]


def cluster_items(relevance: np.ndarray, difficulty: np.ndarray, n_clusters: int = 6, seed: int = 0) -> ItemClusters:
    """KMeans of items on their effective difficulty, with per-cluster mean relevance and mean
    effective difficulty (the paper's Fig. 10). Clusters are numbered by decreasing size."""
    from sklearn.cluster import KMeans

    r, d = np.asarray(relevance, dtype=np.float64), np.asarray(difficulty, dtype=np.float64)
    eff = effective_difficulty(r, d)
    k = min(n_clusters, len(eff))
    if k < 1:
        raise ValueError("no items to cluster")
    km = KMeans(n_clusters=k, n_init=10, random_state=seed).fit(eff)
    raw = km.labels_
    sizes = np.bincount(raw, minlength=k)
    order = np.argsort(-sizes, kind="stable")  # new cluster c = old cluster order[c]
    relabel = np.empty(k, dtype=np.int64)
    relabel[order] = np.arange(k)
    labels = relabel[raw]
    return ItemClusters(
        labels=labels,
        sizes=sizes[order],
        mean_relevance=np.stack([r[labels == c].mean(axis=0) for c in range(k)]),
        mean_effective_difficulty=np.stack([eff[labels == c].mean(axis=0) for c in range(k)]),
        centers=km.cluster_centers_[order],
    )
