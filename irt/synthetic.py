"""Synthetic CAIMIRA data drawn from known parameters (tests and benchmarks)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .data import FitData, Responses

__all__ = ["SyntheticSet", "make_synthetic"]


@dataclass
class SyntheticSet:
    data: FitData
    p_true: np.ndarray  # (n_agents, n_items): the true p(correct) of every pair
    skills: np.ndarray  # (n_agents, m)
    relevance: np.ndarray  # (n_items, m)
    difficulty: np.ndarray  # (n_items, m), zero mean per dimension
    W_R: np.ndarray
    b_R: np.ndarray
    W_D: np.ndarray

    def true_proba(self, agent_idx: np.ndarray, item_idx: np.ndarray) -> np.ndarray:
        return self.p_true[agent_idx, item_idx]


def make_synthetic(
    n_agents: int = 133,
    n_items: int = 3042,
    embed_dim: int = 768,
    dims: int = 5,
    density: float = 0.84,
    temperature: float = 1.0,
    relevance_scale: float = 2.0,
    difficulty_scale: float = 1.5,
    skill_scale: float = 1.5,
    spectrum_decay: float = 1.0,
    seed: int = 0,
) -> SyntheticSet:
    """Draw a CAIMIRA world and responses from it.

    Embeddings are unit-norm Gaussian vectors whose variance along the k-th principal direction
    falls as ``k ** -spectrum_decay`` (0: isotropic; sentence embeddings concentrate their variance
    in few directions, which is what the default 1.0 imitates); ``W_R``, ``W_D`` have i.i.d. normal entries of std
    ``relevance_scale`` / ``difficulty_scale`` (so raw relevance and difficulty have about that
    spread); skills are ``N(0.5, skill_scale^2)``. Each (agent, item) pair is observed with
    probability ``density``; the default sizes are the paper's (133 agents, 3,042 items, 768-d,
    about 340,000 responses). Agent types alternate ``ai`` / ``human``.
    """
    rng = np.random.default_rng(seed)
    # variance of the k-th principal direction ~ k^-spectrum_decay, in a random orientation
    scale = np.arange(1, embed_dim + 1, dtype=np.float64) ** (-spectrum_decay / 2.0)
    basis, _ = np.linalg.qr(rng.standard_normal((embed_dim, embed_dim)))
    emb = ((rng.standard_normal((n_items, embed_dim)) * scale) @ basis.T).astype(np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    W_R = rng.normal(0.0, relevance_scale, (dims, embed_dim))
    b_R = rng.normal(0.0, 0.5, dims)
    W_D = rng.normal(0.0, difficulty_scale, (dims, embed_dim))
    r_raw = (emb @ W_R.T + b_R) / temperature
    r = np.exp(r_raw - r_raw.max(axis=1, keepdims=True))
    r /= r.sum(axis=1, keepdims=True)
    d_raw = emb @ W_D.T
    d = d_raw - d_raw.mean(axis=0)
    skills = rng.normal(0.5, skill_scale, (n_agents, dims))
    logits = np.einsum("jk,ijk->ij", r, skills[:, None, :] - d[None, :, :])
    p_true = 1.0 / (1.0 + np.exp(-logits))
    observed = rng.random((n_agents, n_items)) < density
    a_idx, q_idx = np.nonzero(observed)
    y = (rng.random(len(a_idx)) < p_true[a_idx, q_idx]).astype(np.float32)
    items = [{"id": f"q{j}", "text": f"synthetic item {j}"} for j in range(n_items)]
    agents = [{"id": f"a{i}", "name": f"agent {i}", "type": "ai" if i % 2 == 0 else "human"} for i in range(n_agents)]
    data = FitData(
        items=items,
        agents=agents,
        responses=Responses(a_idx.astype(np.int64), q_idx.astype(np.int64), y),
        embeddings=emb,
        embedder={"model": "synthetic"},
    )
    return SyntheticSet(data, p_true, skills, r, d, W_R, b_R, W_D)
