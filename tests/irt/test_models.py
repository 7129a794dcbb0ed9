"""The model equations: relevance simplex, centred difficulty, m = 1 is Rasch, dense == gathered."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from irt import FitConfig, FitData, Responses, fit
from irt.models import MIRT, Caimira, OnePL, TwoPL, build_model
from irt.synthetic import make_synthetic


def _caimira(n_agents=7, n_items=11, dims=4, embed_dim=6, seed=0, temperature=1.0):
    g = torch.Generator().manual_seed(seed)
    emb = torch.randn(n_items, embed_dim, generator=g)
    m = Caimira(n_agents, n_items, dims, embed_dim, temperature=temperature, embeddings=emb, generator=g)
    with torch.no_grad():  # move away from the zero initialisation
        for p in (m.W_R, m.b_R, m.W_D):
            p.normal_(0, 1, generator=g)
    return m, emb


def test_relevance_rows_sum_to_one_and_difficulty_is_centred():
    m, _ = _caimira()
    bank = m.bank()
    assert torch.allclose(bank["relevance"].sum(dim=1), torch.ones(11), atol=1e-6)
    assert (bank["relevance"] > 0).all()
    assert torch.allclose(bank["difficulty"].mean(dim=0), torch.zeros(4), atol=1e-6)


def test_temperature_sharpens_relevance():
    m1, _ = _caimira(temperature=1.0)
    m2, _ = _caimira(temperature=0.25)
    assert m2.bank()["relevance"].max(dim=1).values.mean() > m1.bank()["relevance"].max(dim=1).values.mean()


def test_caimira_equation():
    m, emb = _caimira()
    with torch.no_grad():
        m.skill.normal_()
        W = m.weights_in_embedding_space()
        r = torch.softmax(emb @ W["W_R"].T + W["b_R"], dim=1)
        d_raw = emb @ W["W_D"].T
        d = d_raw - d_raw.mean(dim=0)
        a, q = torch.tensor([0, 3, 6, 2]), torch.tensor([1, 10, 4, 4])
        expected = (r[q] * (m.skill[a] - d[q])).sum(dim=1)
        assert torch.allclose(m(a, q).logits, expected, atol=1e-5)


def test_cold_start_uses_the_saved_bank_mean():
    m, emb = _caimira()
    m.freeze()
    with torch.no_grad():
        bank, cold = m.bank(), m.cold_params(len(emb), emb)
    # a bank item scored as if it were new gets exactly its fitted parameters
    assert torch.allclose(cold["difficulty"], bank["difficulty"], atol=1e-5)
    assert torch.allclose(cold["relevance"], bank["relevance"], atol=1e-6)
    W = m.weights_in_embedding_space()
    assert torch.allclose(emb @ W["W_D"].T - W["d_mean"], bank["difficulty"], atol=1e-4)


def test_m1_is_rasch_by_construction():
    m, _ = _caimira(dims=1)
    with torch.no_grad():
        m.skill.normal_()
        bank = m.bank()
        assert torch.allclose(bank["relevance"], torch.ones(11, 1))
        a, q = torch.arange(7).repeat(2), torch.arange(11).repeat(2)[:14]
        assert torch.allclose(m(a, q).logits, m.skill[a, 0] - bank["difficulty"][q, 0], atol=1e-6)


@pytest.mark.parametrize("kind", ["caimira", "1pl", "2pl", "mirt"])
def test_dense_logits_match_gathered(kind):
    g = torch.Generator().manual_seed(3)
    emb = torch.randn(9, 5, generator=g)
    m = build_model(kind, n_agents=4, n_items=9, dims=3, embed_dim=5, embeddings=emb, generator=g)
    with torch.no_grad():
        for p in m.parameters():
            p.normal_(0, 1, generator=g)
        bank = m.bank()
        dense = m.dense_logits(bank)
        a, q = torch.meshgrid(torch.arange(4), torch.arange(9), indexing="ij")
        assert torch.allclose(dense, m(a.reshape(-1), q.reshape(-1)).logits.reshape(4, 9), atol=1e-5)


def test_baselines_cold_params_are_the_mean_item():
    for cls in (OnePL, TwoPL):
        m = cls(3, 5)
        m.freeze()
        assert torch.equal(m.cold_params(2)["difficulty"], torch.zeros(2))
    m3 = MIRT(3, 5, 2)
    m3.freeze()
    assert torch.allclose(m3.cold_params(2)["discrimination"], m3.discrimination().mean(dim=0).expand(2, -1))


def test_m1_caimira_fit_matches_a_rasch_fit():
    """With one-hot item embeddings, CAIMIRA m = 1 can give every item its own difficulty: its fit
    must then be the 1PL (Rasch) fit of the same data."""
    rng = np.random.default_rng(5)
    n_agents, n_items = 40, 120
    theta, b = rng.normal(0, 1.2, n_agents), rng.normal(0, 1.2, n_items)
    a_idx, q_idx = np.nonzero(rng.random((n_agents, n_items)) < 0.8)
    p = 1 / (1 + np.exp(-(theta[a_idx] - b[q_idx])))
    y = (rng.random(len(p)) < p).astype(np.float32)
    data = FitData(
        items=[{"id": f"q{j}", "text": ""} for j in range(n_items)],
        agents=[{"id": f"a{i}", "type": "ai"} for i in range(n_agents)],
        responses=Responses(a_idx.astype(np.int64), q_idx.astype(np.int64), y),
        embeddings=np.eye(n_items, dtype=np.float32),
    )
    common = dict(dims=1, lr=0.05, lambda_skill=0.0, lambda_difficulty=0.0, val_fraction=0.0, max_epochs=3000,
                  patience=20, min_delta=1e-7)
    rasch = fit(data, FitConfig(model="1pl", **common))
    cai = fit(data, FitConfig(model="caimira", **common))
    A, Q = np.meshgrid(np.arange(n_agents), np.arange(n_items), indexing="ij")
    qs, ags = [f"q{j}" for j in Q.ravel()], [f"a{i}" for i in A.ravel()]
    p1, p2 = rasch.predict_proba(qs, ags), cai.predict_proba(qs, ags)
    assert np.max(np.abs(p1 - p2)) < 0.02
    assert np.corrcoef(p1, p2)[0, 1] > 0.999
    assert abs(rasch.metrics["train"]["bce"] - cai.metrics["train"]["bce"]) < 1e-3


def test_mirt_discriminations_are_positive_whatever_the_free_parameters():
    g = torch.Generator().manual_seed(4)
    m = MIRT(5, 30, 3, generator=g)
    with torch.no_grad():
        for p in m.parameters():
            p.normal_(0, 3, generator=g)  # free parameters of either sign
    a = m.bank()["discrimination"]
    assert a.shape == (30, 3) and bool((a > 0).all())
    assert torch.allclose(a, torch.nn.functional.softplus(m.a_raw))
    assert torch.allclose(MIRT(2, 4, 2, generator=g).bank()["discrimination"], torch.ones(4, 2), atol=0.5)


def test_mirt_short_fit_keeps_discriminations_positive_and_beats_chance():
    s = make_synthetic(n_agents=40, n_items=120, embed_dim=8, dims=2, density=0.9, seed=3)
    res = fit(s.data, FitConfig(model="mirt", dims=2, lr=0.05, max_epochs=300, patience=30))
    a = res.item_params["discrimination"]
    assert a.shape == (120, 2) and (a > 0).all()
    m = res.metrics
    assert m["val"]["accuracy"] > m["baseline"]["majority_class"]["accuracy"] + 0.05
    assert m["val"]["auc"] > 0.65


def test_mirt_loads_a_state_dict_saved_before_the_constraint():
    g = torch.Generator().manual_seed(6)
    new = MIRT(3, 4, 2, generator=g)
    old = {k: v for k, v in new.state_dict().items() if k != "a_raw"}
    old["a"] = torch.tensor([[0.5, 1.0], [2.0, 0.1], [1.0, 1.0], [3.0, 0.7]])
    loaded = MIRT(3, 4, 2)
    loaded.load_state_dict(old)
    assert torch.allclose(loaded.bank()["discrimination"], old["a"], atol=1e-5)
    old["a"] = old["a"] - 1.0  # a negative discrimination: not this model any more
    with pytest.raises(ValueError, match="refit"):
        MIRT(3, 4, 2).load_state_dict(old)
