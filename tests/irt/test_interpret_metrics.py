"""Interpretation helpers and metrics."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from irt import FitConfig, cluster_items, effective_difficulty, fit, relevance_share
from irt.metrics import auc, bce, binary_metrics, majority_baseline, metrics_by_group, min_recall


def test_effective_difficulty_and_relevance_share():
    r = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.65, 0.3, 0.05], [0.4, 0.3, 0.3]])
    d = np.array([[1.0, -2.0, 3.0]] * 4)
    assert np.allclose(effective_difficulty(r, d)[0], [0.7, -0.4, 0.3])
    assert np.allclose(relevance_share(r), [0.5, 0.25, 0.0])


def test_clusters_fig10(small_set):
    res = fit(small_set.data, FitConfig(dims=3, max_epochs=200))
    c = cluster_items(res.item_params["relevance"], res.item_params["difficulty"], n_clusters=4, seed=0)
    assert c.labels.shape == (300,) and c.sizes.sum() == 300
    assert list(c.sizes) == sorted(c.sizes, reverse=True)
    assert np.allclose(c.mean_relevance.sum(axis=1), 1.0, atol=1e-5)
    eff = res.effective_difficulty
    assert np.allclose(c.mean_effective_difficulty[0], eff[c.labels == 0].mean(axis=0))
    assert len(c.as_records()) == 4
    again = cluster_items(res.item_params["relevance"], res.item_params["difficulty"], n_clusters=4, seed=0)
    assert np.array_equal(c.labels, again.labels)


def test_clusters_of_a_bank_with_fewer_distinct_items_than_clusters_are_fewer_not_empty():
    """A 1PL fit (relevance 1 everywhere) of a bank every agent got wrong (one difficulty): KMeans left five
    of six clusters empty, their mean NaN, and storing the fit failed (no JSON column takes NaN)."""
    import json

    from irt.interpret import relevance_clusters

    r, d = np.ones((40, 1)), np.full((40, 1), -2.5)
    c = cluster_items(r, d, n_clusters=6, seed=0)
    assert list(c.sizes) == [40] and np.isfinite(c.mean_effective_difficulty).all()
    json.dumps(c.as_records(), allow_nan=False)
    two = cluster_items(r, np.repeat([[-1.0], [2.0]], 20, axis=0), n_clusters=6, seed=0)
    assert sorted(two.sizes) == [20, 20]
    assert set(relevance_clusters(r, n_clusters=12)) == {0}


def test_auc_matches_sklearn_with_ties():
    rng = np.random.default_rng(0)
    y = rng.random(500) < 0.4
    p = np.round(rng.random(500) * 0.6 + 0.4 * y, 1)  # many ties
    assert auc(p, y) == pytest.approx(roc_auc_score(y, p), abs=1e-12)
    assert auc(p, np.ones(500)) is None


def test_bce_accuracy_min_recall_baseline():
    y = np.array([1, 1, 0, 0, 1])
    p = np.array([0.9, 0.4, 0.2, 0.6, 0.5])
    assert bce(p, y) == pytest.approx(-np.mean(np.log([0.9, 0.4, 0.8, 0.4, 0.5])))
    assert min_recall(p, y) == pytest.approx(0.5)  # recall of 0: 1/2, of 1: 2/3
    m = binary_metrics(p, y)
    assert m["accuracy"] == pytest.approx(0.6) and m["n"] == 5
    base = majority_baseline(np.array([1, 1, 0]), y)
    assert base["accuracy"] == pytest.approx(0.6) and base["bce"] == pytest.approx(bce(np.full(5, 2 / 3), y))
    assert base["min_recall"] == 0.0
    by = metrics_by_group(p, y, np.array(["ai", "ai", "human", "human", "ai"]))
    assert by["ai"]["n"] == 3 and by["human"]["accuracy"] == pytest.approx(0.5)
    assert binary_metrics(np.array([]), np.array([])) == {"n": 0}
