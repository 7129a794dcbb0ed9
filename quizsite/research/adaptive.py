"""Adaptive item choice, as computerized adaptive tests do: serve the item that tells the most about the
people present, while no item is overused.

Information of item j for agent i is the trace of its Fisher information, p_ij (1 - p_ij) times the
squared norm of the item's loading: for CAIMIRA sum_k r_jk^2 (p(1-p) weighted by relevance), for 2PL/MIRT
the squared discrimination, for 1PL one. A tossup's information is summed over its clue prefixes (each
buzz is backfilled onto all of them) and over the agents present. Agents the fit does not know (new
players, or players pooled into groups by the fit) get the mean skill of the fit's human agents; items it
does not know get the bank's mean item. Exposure: over the last `RESEARCH_ADAPTIVE_WINDOW` adaptive
serves, an item already served more than `RESEARCH_ADAPTIVE_MAX_EXPOSURE` of the time is left out (unless
every candidate is).

Only light imports at module level: the play app imports this module; `irt` (torch) loads on first use.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from django.conf import settings

from quizsite.agents.models import Agent
from quizsite.items.models import Item

from .models import AdaptiveServe, FitRun

WARMUP_SERVES = 20  # the exposure cap starts once this many adaptive serves are on record


@dataclass(frozen=True)
class _Bank:
    row_of: dict[str, int]  # IRT item id -> row of params
    params: dict[str, Any]  # torch tensors: the fitted bank's item parameters, plus the mean item as the last row
    skill_of: dict[str, Any]  # agent public id -> skill tensor
    default_skill: Any  # for agents the fit does not know
    model: Any


@lru_cache(maxsize=2)
def _bank(fit_id: int) -> _Bank:
    import torch

    from .artifacts import fit_result_load

    result = fit_result_load(fit_id)
    params = {k: torch.as_tensor(v) for k, v in result.item_params.items()}
    mean_item = {k: v.mean(dim=0, keepdim=True) for k, v in params.items()}
    if "difficulty" in mean_item:
        mean_item["difficulty"] = torch.zeros_like(mean_item["difficulty"])  # difficulties are centred: the mean is 0
    params = {k: torch.cat([v, mean_item[k]]) for k, v in params.items()}
    skills = result.model.skills().detach()
    humans = [i for i, t in enumerate(result.agent_types) if t in (Agent.Kind.HUMAN, Agent.Kind.HUMAN_GROUP)]
    default = skills[humans].mean(dim=0) if humans else skills.mean(dim=0)
    return _Bank(
        row_of={q: j for j, q in enumerate(result.item_ids)},
        params=params,
        skill_of={a: skills[i] for i, a in enumerate(result.agent_ids)},
        default_skill=default,
        model=result.model,
    )


def _information(bank: _Bank, rows: list[int], skills: Any) -> float:
    import torch

    with torch.no_grad():
        idx = torch.as_tensor(rows)
        p = {k: v[idx] for k, v in bank.params.items()}  # (n_rows, ...)
        n_agents, n_rows = skills.shape[0], len(rows)
        s = skills.repeat_interleave(n_rows, dim=0)
        tiled = {k: v.repeat(n_agents, *([1] * (v.dim() - 1))) for k, v in p.items()}
        prob = torch.sigmoid(bank.model.score(s, tiled))
        if "relevance" in tiled:
            weight = tiled["relevance"].pow(2).sum(dim=-1)
        elif "discrimination" in tiled:
            a = tiled["discrimination"]
            weight = a.pow(2).sum(dim=-1) if a.dim() > 1 else a.pow(2)
        else:
            weight = torch.ones_like(prob)
        return float((prob * (1 - prob) * weight).sum())


def item_information(*, item: Item, agents: Sequence[Agent], fit: FitRun) -> float:
    """Summed Fisher information of an item's IRT items for these agents under a fit."""
    import torch

    from .prepare import item_keys  # imports irt (torch): not at module level

    bank = _bank(fit.pk)
    mean_row = len(bank.row_of)
    rows = [bank.row_of.get(key, mean_row) for key in item_keys(item)]
    chosen = [bank.skill_of.get(a.public_id, bank.default_skill) for a in agents] or [bank.default_skill]
    return _information(bank, rows, torch.stack(chosen))


def _choose(
    candidates: Sequence[Item], agents: Sequence[Agent], fit: FitRun, exposure: Mapping[int, int] | None, max_exposure: float | None
) -> tuple[Item, float]:
    if not candidates:
        raise ValueError("no candidate items")
    cap = float(getattr(settings, "RESEARCH_ADAPTIVE_MAX_EXPOSURE", 0.2) if max_exposure is None else max_exposure)
    exposure = exposure or {}
    total = sum(exposure.values())
    pool = list(candidates)
    if total >= WARMUP_SERVES:
        pool = [c for c in pool if exposure.get(c.pk, 0) < cap * total] or pool
    scored = [(item_information(item=c, agents=agents, fit=fit), -c.pk, c) for c in pool]
    best = max(scored, key=lambda t: (t[0], t[1]))
    return best[2], best[0]


def adaptive_next_item(
    *, candidates: Sequence[Item], agents: Sequence[Agent], fit: FitRun,
    exposure: Mapping[int, int] | None = None, max_exposure: float | None = None,
) -> Item:
    """The candidate with the most information for `agents` under `fit`, respecting the exposure cap.

    Pure: reads the fit, writes nothing. `exposure` maps item id -> recent serves. Ties go to the lower id.
    """
    return _choose(candidates, agents, fit, exposure, max_exposure)[0]


def recent_exposure() -> Counter[int]:
    window = int(getattr(settings, "RESEARCH_ADAPTIVE_WINDOW", 500))
    return Counter(AdaptiveServe.objects.order_by("-id").values_list("item_id", flat=True)[:window])


# A room scores at most this many unread tossups (a random sample of them) when it picks adaptively.
MAX_ROOM_CANDIDATES = 200


def adaptive_pick_for_room(*, room_slug: str, present: Sequence[Agent],
                           candidate_ids: Sequence[int]) -> tuple[Item, AdaptiveServe] | None:
    """Called by the play app when a room has `adaptive` on: the next tossup, or None without an active fit.

    `present` are the agents of the players connected now (the play app passes everyone who joined, if
    nobody is). With the item comes its serve, for the exposure cap and the responses' `adaptive` flag,
    not saved: the room writes it with the rest of its transition's rows (play/work.py).
    """
    fit = FitRun.objects.filter(is_active=True, status=FitRun.Status.SUCCEEDED).defer("artifact", "history").first()
    if fit is None or not candidate_ids:
        return None
    if len(candidate_ids) > MAX_ROOM_CANDIDATES:  # bound the work done while the room waits
        candidate_ids = random.sample(list(candidate_ids), MAX_ROOM_CANDIDATES)
    candidates = list(Item.objects.select_related("item_set").filter(pk__in=candidate_ids).order_by("id"))
    item, information = _choose(candidates, list(present), fit, recent_exposure(), None)
    return item, AdaptiveServe(fit=fit, item=item, room=room_slug, information=information, n_agents=len(present))


def adaptive_meta(*, room_slug: str, settings: dict[str, Any], item_id: int | None) -> dict[str, Any]:
    """What a response in this room records about adaptive choice: nothing when the room has it off."""
    if not (settings or {}).get("adaptive"):
        return {}
    serve = AdaptiveServe.objects.filter(room=room_slug).order_by("-id").values("item_id", "fit_id").first()
    if serve is None or serve["item_id"] != item_id:
        return {"adaptive": False}  # adaptive was on but no active fit chose this item
    return {"adaptive": True, "adaptive_fit": serve["fit_id"]}


__all__ = ["adaptive_meta", "adaptive_next_item", "adaptive_pick_for_room", "item_information"]
