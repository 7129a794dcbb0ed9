"""Interpreting a CAIMIRA fit: effective difficulty, item clusters, relevance shares, the relevance-weighted
difficulty of question clusters (the paper's Fig. 10) and the regressions that name a dimension (Fig. 5)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "effective_difficulty", "relevance_share", "ItemClusters", "cluster_items", "relevance_clusters",
    "ClusterDifficulty", "cluster_difficulty", "DimensionRegression", "relevance_regressions", "balanced_weights",
]

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


def _distinct_rows(x: np.ndarray) -> int:
    """How many clusters KMeans can make of these points: no more than the distinct rows (a 1PL fit's
    relevance is 1 for every item; a bank every agent got wrong has one difficulty). More clusters than
    that leaves some empty, whose mean is NaN, which no JSON column stores."""
    return len(np.unique(np.round(x, 12), axis=0)) if len(x) else 0


def cluster_items(relevance: np.ndarray, difficulty: np.ndarray, n_clusters: int = 6, seed: int = 0) -> ItemClusters:
    """KMeans of items on their effective difficulty, with per-cluster mean relevance and mean
    effective difficulty (the paper's Fig. 10). Clusters are numbered by decreasing size."""
    from sklearn.cluster import KMeans

    r, d = np.asarray(relevance, dtype=np.float64), np.asarray(difficulty, dtype=np.float64)
    eff = effective_difficulty(r, d)
    k = min(n_clusters, _distinct_rows(eff))
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


# --- analyses of a fit (the paper's Fig. 5 and Fig. 10) ------------------------------------------------


def relevance_clusters(relevance: np.ndarray, n_clusters: int = 12, seed: int = 0) -> np.ndarray:
    """KMeans of items on their relevance vectors r_j (the paper's question clusters, 12 of them), numbered
    0.. by decreasing size (ties by the lowest first item), so cluster 0 is always the largest."""
    from sklearn.cluster import KMeans

    r = np.asarray(relevance, dtype=np.float64)
    k = min(n_clusters, _distinct_rows(r))
    if k < 1:
        raise ValueError("no items to cluster")
    raw = KMeans(n_clusters=k, n_init=10, random_state=seed).fit(r).labels_
    sizes = np.bincount(raw, minlength=k)
    first = np.array([np.flatnonzero(raw == c)[0] for c in range(k)])
    order = np.lexsort((first, -sizes))
    relabel = np.empty(k, dtype=np.int64)
    relabel[order] = np.arange(k)
    return relabel[raw]


@dataclass
class ClusterDifficulty:
    """Per cluster c and dimension k, sum_{j in c} r_jk d_jk / sum_{j in c} r_jk (relevance-weighted mean
    difficulty), and Overall: the mean over the cluster's items of r_j . d_j."""

    sizes: np.ndarray  # (k,)
    weighted: np.ndarray  # (k, m); nan where a cluster's relevance on a dimension sums to 0
    overall: np.ndarray  # (k,)
    mean_relevance: np.ndarray  # (k, m)

    def as_records(self) -> list[dict[str, object]]:
        return [
            {
                "cluster": c,
                "size": int(self.sizes[c]),
                "weighted_difficulty": [None if np.isnan(v) else float(v) for v in self.weighted[c]],
                "overall": None if np.isnan(self.overall[c]) else float(self.overall[c]),
                "mean_relevance": self.mean_relevance[c].tolist(),
            }
            for c in range(len(self.sizes))
        ]


def cluster_difficulty(relevance: np.ndarray, difficulty: np.ndarray, labels: np.ndarray) -> ClusterDifficulty:
    r, d = np.asarray(relevance, dtype=np.float64), np.asarray(difficulty, dtype=np.float64)
    labels = np.asarray(labels)
    k = int(labels.max()) + 1 if len(labels) else 0
    m = r.shape[1] if r.ndim == 2 else 0
    weighted = np.full((k, m), np.nan)
    overall = np.full(k, np.nan)
    mean_rel = np.full((k, m), np.nan)
    sizes = np.bincount(labels, minlength=k) if k else np.zeros(0, dtype=np.int64)
    for c in range(k):
        mask = labels == c
        if not mask.any():
            continue
        rc, dc = r[mask], d[mask]
        total = rc.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            weighted[c] = np.where(total > 0, (rc * dc).sum(axis=0) / np.where(total > 0, total, 1), np.nan)
        overall[c] = float((rc * dc).sum(axis=1).mean())
        mean_rel[c] = rc.mean(axis=0)
    return ClusterDifficulty(sizes=sizes, weighted=weighted, overall=overall, mean_relevance=mean_rel)


@dataclass
class DimensionRegression:
    """One dimension's logistic regression of [r_jk > 0.6] on item features, class-balanced."""

    dimension: int
    n_items: int
    n_relevant: int
    coefficients: dict[str, float]
    std_errors: dict[str, float]
    p_values: dict[str, float]
    note: str = ""  # why there is no fit (every item relevant, none, a singular design)

    def as_record(self) -> dict[str, object]:
        return {
            "dimension": self.dimension, "n_items": self.n_items, "n_relevant": self.n_relevant, "note": self.note,
            "terms": [
                {"feature": f, "coef": _finite(self.coefficients[f]), "std_err": _finite(self.std_errors[f]),
                 "p_value": _finite(self.p_values[f])}
                for f in self.coefficients
            ],
        }


def _finite(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def balanced_weights(y: np.ndarray) -> np.ndarray:
    """n / (2 n_class) for each row (scikit-learn's "balanced"): both classes weigh n/2 in all, so the sum of
    the weights stays n and the standard errors keep the data's size."""
    y = np.asarray(y).astype(bool)
    n, n_pos = len(y), int(y.sum())
    if n_pos in (0, n):
        return np.ones(n)
    return np.where(y, n / (2 * n_pos), n / (2 * (n - n_pos)))


def relevance_regressions(
    relevance: np.ndarray, features: np.ndarray, names: list[str], threshold: float = RELEVANT
) -> list[DimensionRegression]:
    """For each dimension k: a logistic regression of [r_jk > threshold] on the features with an intercept,
    class-balanced frequency weights (statsmodels GLM, binomial family) and Wald p-values. Positive
    coefficients name what makes a dimension relevant (the paper's Fig. 5)."""
    import warnings

    import statsmodels.api as sm

    r = np.asarray(relevance, dtype=np.float64)
    x = np.column_stack([np.ones(len(r)), np.asarray(features, dtype=np.float64).reshape(len(r), -1)])
    terms = ["intercept", *names]
    out = []
    for k in range(r.shape[1] if r.ndim == 2 else 0):
        y = (r[:, k] > threshold).astype(np.float64)
        n_pos = int(y.sum())
        empty = DimensionRegression(k, len(y), n_pos, {}, {}, {})
        if n_pos in (0, len(y)):
            empty.note = "no item is relevant" if n_pos == 0 else "every item is relevant"
            out.append(empty)
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = sm.GLM(y, x, family=sm.families.Binomial(), freq_weights=balanced_weights(y)).fit()
        except Exception as exc:  # noqa: BLE001 - perfect separation, singular design: reported, not raised
            empty.note = f"no fit: {exc}"
            out.append(empty)
            continue
        params, bse, pvalues = (np.asarray(v, dtype=np.float64) for v in (res.params, res.bse, res.pvalues))
        out.append(DimensionRegression(
            k, len(y), n_pos,
            coefficients=dict(zip(terms, params.tolist(), strict=True)),
            std_errors=dict(zip(terms, bse.tolist(), strict=True)),
            p_values=dict(zip(terms, pvalues.tolist(), strict=True)),
        ))
    return out
