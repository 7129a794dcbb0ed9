"""The item response models: CAIMIRA and three id-based baselines (1PL, 2PL, MIRT).

All four share one interface so one trainer fits them:

* ``bank()``: the parameters of every item of the fitted bank, difficulties centred over the bank
  (``{"difficulty": (n_items, m), ...}``), computed in one pass (for CAIMIRA: one matrix product
  of the fixed embeddings); ``params_at(item_idx)``: the same for some items only.
* ``cold_params(n, embeddings)``: parameters for ``n`` items that were not in the fit. CAIMIRA
  computes them from text embeddings with the saved weights and the saved bank mean; the id models
  have nothing to go on and return the mean item of the bank.
* ``score(skill, params) -> logits`` for gathered rows, ``dense_logits(bank)`` for every
  (agent, item) pair at once, and ``forward(agent_idx, item_idx)``.

``freeze()`` (after fitting) stores what the id models need for new items (mean discrimination).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

__all__ = ["IRTModel", "Caimira", "OnePL", "TwoPL", "MIRT", "MODELS", "build_model", "Output"]

Params = dict[str, Tensor]


class Output(NamedTuple):
    logits: Tensor  # (B,)
    skill: Tensor  # (B, m) or (B,) : what the L1 penalty on skills sees
    difficulty: Tensor  # (B, m) or (B,) : what the L1 penalty on difficulties sees


class IRTModel(nn.Module):
    """Base class: agent skills plus item parameters from ``bank()``."""

    kind: str = ""
    uses_embeddings: bool = False

    def __init__(self, n_agents: int, n_items: int, dims: int) -> None:
        super().__init__()
        self.n_agents, self.n_items, self.dims = n_agents, n_items, dims

    def init_kwargs(self) -> dict[str, Any]:
        """Constructor arguments (without data) to rebuild the module for loading a state dict."""
        return {"n_agents": self.n_agents, "n_items": self.n_items, "dims": self.dims}

    def skills(self) -> Tensor:  # (n_agents, m) or (n_agents,)
        raise NotImplementedError

    def bank(self) -> Params:
        raise NotImplementedError

    def cold_params(self, n: int, embeddings: Tensor | None = None) -> Params:
        raise NotImplementedError

    def score(self, skill: Tensor, params: Params) -> Tensor:
        raise NotImplementedError

    def freeze(self) -> None:
        """Store the bank mean(s) used for items outside the fitted bank."""

    def dense_logits(self, bank: Params) -> Tensor:
        """Logits of every (agent, item) pair of the bank, ``(n_agents, n_items)``.

        The same numbers as ``score`` on gathered rows, computed as a matrix product: cheaper
        than gathering when most pairs are observed.
        """
        raise NotImplementedError

    def params_at(self, item_idx: Tensor) -> Params:
        """Parameters of the bank items ``item_idx`` (one row per index)."""
        return {k: v[item_idx] for k, v in self.bank().items()}

    def forward(self, agent_idx: Tensor, item_idx: Tensor) -> Output:
        params = self.params_at(item_idx)
        skill = self.skills()[agent_idx]
        return Output(self.score(skill, params), skill, params["difficulty"])


class Caimira(IRTModel):
    r"""CAIMIRA (Gor et al., 2024), with the bank-centred difficulty of the paper.

    For agent i with skill s_i in R^m and item j with fixed text embedding e_j in R^n::

        r'_j = W_R e_j + b_R                  raw relevance
        d'_j = W_D e_j                        raw difficulty (no bias)
        r_j  = softmax(r'_j / T)              relevance, sums to 1 over the m dimensions
        d_j  = d'_j - mean_{j' in bank} d'_j' difficulty, zero mean per dimension over the bank
        p(correct_ij) = sigmoid( r_j . (s_i - d_j) )

    How the bank centring is computed: d'_j is linear in e_j, so its bank mean is W_D ebar, with
    ebar the bank's mean embedding, and d_j = W_D (e_j - ebar). The model therefore reads centred
    embeddings x_j = (e_j - ebar) / c (c: see ``input_scaling``), and d_j = W_D x_j has zero mean
    over the bank at every step by construction, for the whole bank or any mini-batch of it. ebar is
    kept with the fitted model (a buffer), so a new item gets d = W_D (e_new - ebar) / c: the same
    scale as the bank's. ``weights_in_embedding_space()`` returns the paper's W_R, b_R, W_D for raw e
    and the kept difficulty mean d_mean = W_D ebar (so d = W_D e - d_mean).

    ``input_scaling``: "rms" divides the centred embeddings by their per-coordinate RMS over the bank
    (c), a preconditioner for full-batch Adam: weights of order lr then move difficulties by order
    one per step, whatever the embedder's norm. "none" (c = 1) is the paper's parametrization; with
    mini-batches the larger effective step of "rms" is too noisy at lr 0.005. Both are the same
    model: an affine map of x is an affine map of e.

    With m = 1 the relevance is 1 and the model is Rasch: ``sigmoid(s_i - d_j)``.
    """

    kind = "caimira"
    uses_embeddings = True
    e_shift: Tensor
    e_scale: Tensor
    x: Tensor | None

    def __init__(
        self,
        n_agents: int,
        n_items: int,
        dims: int,
        embed_dim: int,
        temperature: float = 1.0,
        embeddings: Tensor | None = None,
        generator: torch.Generator | None = None,
        input_scaling: str = "rms",
    ) -> None:
        super().__init__(n_agents, n_items, dims)
        if temperature <= 0:
            raise ValueError("temperature must be positive")
        if input_scaling not in ("rms", "none"):
            raise ValueError("input_scaling must be 'rms' or 'none'")
        self.embed_dim, self.temperature, self.input_scaling = embed_dim, float(temperature), input_scaling
        # small random skills break the symmetry between dimensions (zero init: a long plateau);
        # W_R = 0 (uniform relevance) and W_D = 0 (all difficulties 0) at the start
        self.skill = nn.Parameter(0.1 * torch.randn(n_agents, dims, generator=generator))
        self.W_R = nn.Parameter(torch.zeros(dims, embed_dim))
        self.b_R = nn.Parameter(torch.zeros(dims))
        self.W_D = nn.Parameter(torch.zeros(dims, embed_dim))
        self.register_buffer("e_shift", torch.zeros(embed_dim))  # the bank's mean embedding
        self.register_buffer("e_scale", torch.ones(()))
        x = None
        if embeddings is not None:
            if embeddings.shape != (n_items, embed_dim):
                raise ValueError(f"embeddings must be ({n_items}, {embed_dim}), got {tuple(embeddings.shape)}")
            shift = embeddings.mean(dim=0)
            self.e_shift.copy_(shift)
            if input_scaling == "rms":
                rms = (embeddings - shift).pow(2).mean().sqrt()
                self.e_scale.copy_(rms.clamp_min(1e-12))
            x = (embeddings - self.e_shift) / self.e_scale
        # the fitted bank's (centred) embeddings are data, not state: not saved with the model
        self.register_buffer("x", x, persistent=False)

    def init_kwargs(self) -> dict[str, Any]:
        return {
            **super().init_kwargs(),
            "embed_dim": self.embed_dim,
            "temperature": self.temperature,
            "input_scaling": self.input_scaling,
        }

    def skills(self) -> Tensor:
        return self.skill

    def _maps(self, x: Tensor) -> Params:
        # one product with [W_R; W_D]: the (n_items, n) embedding matrix is read once forward and once
        # backward instead of twice each; on a CPU those reads are most of a full-batch step's time
        both = x @ torch.cat([self.W_R, self.W_D]).T
        raw_r, d = both[:, : self.dims], both[:, self.dims :]
        return {"relevance": torch.softmax((raw_r + self.b_R) / self.temperature, dim=-1), "difficulty": d}

    def _bank_x(self) -> Tensor:
        if self.x is None:
            raise RuntimeError("this Caimira has no item bank embeddings (a loaded fit scores new items only)")
        return self.x

    def bank(self) -> Params:
        return self._maps(self._bank_x())

    def params_at(self, item_idx: Tensor) -> Params:
        x = self._bank_x()
        if item_idx.numel() >= len(x):  # more rows than the bank: map the bank once, then gather
            return super().params_at(item_idx)
        return self._maps(x[item_idx])  # a mini-batch: only the rows it needs

    def cold_params(self, n: int, embeddings: Tensor | None = None) -> Params:
        if embeddings is None or embeddings.shape != (n, self.embed_dim):
            raise ValueError(f"caimira needs a ({n}, {self.embed_dim}) embedding matrix for new items")
        return self._maps((embeddings - self.e_shift) / self.e_scale)

    @torch.no_grad()
    def weights_in_embedding_space(self) -> dict[str, Tensor]:
        """The paper's ``W_R``, ``b_R``, ``W_D`` for raw embeddings and the kept difficulty mean:
        r' = W_R e + b_R, d = W_D e - d_mean."""
        W_R, W_D = self.W_R / self.e_scale, self.W_D / self.e_scale
        return {"W_R": W_R, "b_R": self.b_R - W_R @ self.e_shift, "W_D": W_D, "d_mean": W_D @ self.e_shift}

    def score(self, skill: Tensor, params: Params) -> Tensor:
        return (params["relevance"] * (skill - params["difficulty"])).sum(dim=-1)

    def dense_logits(self, bank: Params) -> Tensor:
        # r_j . (s_i - d_j) = (S R^T)_ij - (r_j . d_j)
        r, d = bank["relevance"], bank["difficulty"]
        return self.skill @ r.T - (r * d).sum(dim=-1)


class OnePL(IRTModel):
    r"""Rasch / 1PL with item-id parameters::

        p(correct_ij) = sigmoid(s_i - d_j),   d_j = d'_j - mean_j' d'_j'

    ``dims`` is ignored (always 1). A new item gets the bank mean, d = 0.
    """

    kind = "1pl"

    def __init__(self, n_agents: int, n_items: int, dims: int = 1) -> None:
        super().__init__(n_agents, n_items, 1)
        self.skill = nn.Parameter(torch.zeros(n_agents))
        self.d_raw = nn.Parameter(torch.zeros(n_items))

    def skills(self) -> Tensor:
        return self.skill

    def bank(self) -> Params:
        return {"difficulty": self.d_raw - self.d_raw.mean()}

    def cold_params(self, n: int, embeddings: Tensor | None = None) -> Params:
        return {"difficulty": self.d_raw.new_zeros(n)}

    def score(self, skill: Tensor, params: Params) -> Tensor:
        return skill - params["difficulty"]

    def dense_logits(self, bank: Params) -> Tensor:
        return self.skill[:, None] - bank["difficulty"][None, :]


class TwoPL(IRTModel):
    r"""2PL with item-id parameters, discrimination kept positive::

        p(correct_ij) = sigmoid( a_j (s_i - d_j) ),   a_j = softplus(a'_j),   d_j centred over the bank

    ``dims`` is ignored. A new item gets d = 0 and the mean discrimination of the bank.
    """

    kind = "2pl"
    a_mean: Tensor

    def __init__(self, n_agents: int, n_items: int, dims: int = 1) -> None:
        super().__init__(n_agents, n_items, 1)
        self.skill = nn.Parameter(torch.zeros(n_agents))
        self.d_raw = nn.Parameter(torch.zeros(n_items))
        self.a_raw = nn.Parameter(torch.full((n_items,), math.log(math.e - 1.0)))  # softplus = 1
        self.register_buffer("a_mean", torch.ones(()))

    def skills(self) -> Tensor:
        return self.skill

    def bank(self) -> Params:
        return {"difficulty": self.d_raw - self.d_raw.mean(), "discrimination": F.softplus(self.a_raw)}

    @torch.no_grad()
    def freeze(self) -> None:
        self.a_mean.copy_(F.softplus(self.a_raw).mean())

    def cold_params(self, n: int, embeddings: Tensor | None = None) -> Params:
        return {"difficulty": self.d_raw.new_zeros(n), "discrimination": self.a_mean.expand(n).clone()}

    def score(self, skill: Tensor, params: Params) -> Tensor:
        return params["discrimination"] * (skill - params["difficulty"])

    def dense_logits(self, bank: Params) -> Tensor:
        return bank["discrimination"][None, :] * (self.skill[:, None] - bank["difficulty"][None, :])


class MIRT(IRTModel):
    r"""Compensatory multidimensional 2PL with item-id parameters, discriminations kept positive::

        p(correct_ij) = sigmoid( a_j . s_i - d_j ),   a_jk = softplus(a'_jk) > 0,   d_j centred over the bank

    Positive discriminations are the paper's assumption for its MIRT baseline: a higher skill on
    any dimension never lowers p(correct). They are a softplus of a free parameter ``a_raw``
    (a'), like 2PL's, rather than ``exp``: softplus is close to the identity above about 2, so an
    Adam step of size lr moves a large discrimination by about lr (exp would move it by a factor
    exp(lr), and its gradient grows with a), while it still goes smoothly to 0 (never reaching
    it) for items that carry no information about a dimension. The start is a = 1 + 0.1 noise.

    With positive discriminations the sign of the skill dimensions is identified; the skill space
    is still identified only up to a rotation that keeps every a_j positive. A new item gets d = 0
    and the bank's mean discrimination vector.
    """

    kind = "mirt"
    a_mean: Tensor

    def __init__(self, n_agents: int, n_items: int, dims: int, generator: torch.Generator | None = None) -> None:
        super().__init__(n_agents, n_items, dims)
        self.skill = nn.Parameter(0.1 * torch.randn(n_agents, dims, generator=generator))
        self.d_raw = nn.Parameter(torch.zeros(n_items))
        a0 = (1.0 + 0.1 * torch.randn(n_items, dims, generator=generator)).clamp_min(0.05)
        self.a_raw = nn.Parameter(a0 + torch.log(-torch.expm1(-a0)))  # softplus^-1(a0) = log(e^a0 - 1)
        self.register_buffer("a_mean", torch.ones(dims))

    def _load_from_state_dict(self, state_dict: dict[str, Any], prefix: str, *args: Any, **kwargs: Any) -> None:
        # fits saved before discriminations were constrained hold a free ``a``: positive ones map
        # to the same model; a fit with a negative discrimination cannot be represented
        old = state_dict.pop(prefix + "a", None)
        if old is not None and prefix + "a_raw" not in state_dict:
            if not bool((old > 0).all()):
                raise ValueError("this MIRT fit predates positive discriminations and has a negative one: refit it")
            state_dict[prefix + "a_raw"] = old + torch.log(-torch.expm1(-old))
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    def skills(self) -> Tensor:
        return self.skill

    def discrimination(self) -> Tensor:
        """The positive discriminations ``softplus(a_raw)``, ``(n_items, m)``."""
        return F.softplus(self.a_raw)

    def bank(self) -> Params:
        return {"difficulty": self.d_raw - self.d_raw.mean(), "discrimination": self.discrimination()}

    @torch.no_grad()
    def freeze(self) -> None:
        self.a_mean.copy_(self.discrimination().mean(dim=0))

    def cold_params(self, n: int, embeddings: Tensor | None = None) -> Params:
        return {"difficulty": self.d_raw.new_zeros(n), "discrimination": self.a_mean.expand(n, -1).clone()}

    def score(self, skill: Tensor, params: Params) -> Tensor:
        return (params["discrimination"] * skill).sum(dim=-1) - params["difficulty"]

    def dense_logits(self, bank: Params) -> Tensor:
        return self.skill @ bank["discrimination"].T - bank["difficulty"][None, :]


MODELS: dict[str, type[IRTModel]] = {m.kind: m for m in (Caimira, OnePL, TwoPL, MIRT)}


def build_model(kind: str, **kwargs: Any) -> IRTModel:
    """Construct a model by name (``caimira``, ``1pl``, ``2pl``, ``mirt``) from its init kwargs."""
    if kind not in MODELS:
        raise ValueError(f"unknown model {kind!r}; choose one of {', '.join(MODELS)}")
    cls = MODELS[kind]
    if cls is OnePL or cls is TwoPL:
        kwargs = {k: v for k, v in kwargs.items() if k in ("n_agents", "n_items", "dims")}
    elif cls is MIRT:
        kwargs = {k: v for k, v in kwargs.items() if k in ("n_agents", "n_items", "dims", "generator")}
    return cls(**kwargs)
