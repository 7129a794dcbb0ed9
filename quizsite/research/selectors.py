"""Reads for the research pages and the API: runs, fitted agents and items, predictions next to actual rulings."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from django.db.models import Count, Exists, OuterRef, Q, QuerySet

import irt
from quizsite.agents.models import Agent
from quizsite.annotate.models import Campaign
from quizsite.items.models import Item, ItemSet, ResponseOverride, RulingReport

from .artifacts import fit_data_load, fit_result_load
from .embedding import cache_dir, encoder_for
from .models import FitAgent, FitItem, FitRun
from .prepare import DataSpec, fit_data_shortfall, item_keys, item_queries, prepare, responses_selected

KIND_ORDER: dict[str, int] = {Agent.Kind.HUMAN: 0, Agent.Kind.HUMAN_GROUP: 1, Agent.Kind.AI: 2}


def fit_runs(limit: int | None = None) -> QuerySet[FitRun]:
    qs = FitRun.objects.defer("artifact", "history").select_related("created_by")
    return qs[:limit] if limit else qs


def fit_active() -> FitRun | None:
    """The active fit (the one adaptive play and the default pages use), if any."""
    return FitRun.objects.filter(is_active=True).defer("artifact").first()


def fit_run_get(pk: int) -> FitRun:
    return FitRun.objects.defer("artifact").get(pk=pk)


def fit_runs_compare(ids: list[int]) -> list[FitRun]:
    by_id = {r.pk: r for r in FitRun.objects.defer("artifact", "history").filter(pk__in=ids)}
    return [by_id[i] for i in ids if i in by_id]


def fit_agents(run: FitRun) -> list[FitAgent]:
    """Agents grouped by kind (humans, groups, AI), then by skill summed over dimensions."""
    rows = list(FitAgent.objects.filter(fit=run))
    return sorted(rows, key=lambda a: (KIND_ORDER.get(a.kind, 9), -sum(a.skill), a.name))


def fit_items(run: FitRun, *, cluster: int | None = None, order: str = "-effective_total", search: str = "") -> QuerySet[FitItem]:
    qs = FitItem.objects.filter(fit=run).select_related("item", "item__item_set")
    if cluster is not None:
        qs = qs.filter(cluster=cluster)
    if search:
        qs = qs.filter(Q(key__icontains=search) | Q(item__text__icontains=search) | Q(item__answer__icontains=search))
    allowed = {"effective_total", "-effective_total", "accuracy", "-accuracy", "n_responses", "-n_responses", "key"}
    return qs.order_by(order if order in allowed else "-effective_total", "id")


def items_without_fit(run: FitRun, limit: int = 50) -> list[Item]:
    """Items of the run's item sets of which the fit saw no IRT item (no judged response): cold start.

    Matched by IRT id, not by item row: a tossup rebuilt from imported clue prefixes is in the fit through
    those prefixes' rows.
    """
    sets = run.settings.get("data", {}).get("item_sets") or []
    qs = Item.objects.exclude(kind=Item.Kind.CLUE_PREFIX).select_related("item_set").order_by("item_set__slug", "external_id")
    if sets:
        qs = qs.filter(item_set__slug__in=sets)
    fitted = set(FitItem.objects.filter(fit=run).values_list("key", flat=True))
    out: list[Item] = []
    for item in qs.iterator(chunk_size=500):
        if not fitted.intersection(item_keys(item)):
            out.append(item)
            if len(out) == limit:
                break
    return out


def tossup_of_prefix(item: Item) -> Item | None:
    """The tossup an imported clue-prefix item belongs to, when the import rebuilt it."""
    orig = item.data.get("orig_qid") if item.kind == Item.Kind.CLUE_PREFIX else None
    if orig is None:
        return None
    return Item.objects.filter(item_set_id=item.item_set_id, kind=Item.Kind.TOSSUP, external_id=str(orig)).first()


@lru_cache(maxsize=4)
def _rulings_by_query(fit_id: int) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for r in fit_data_load(fit_id)["responses"]:
        out.setdefault(r["query_id"], {})[r["agent_id"]] = int(r["ruling"])
    return out


@dataclass
class ClueColumn:
    key: str
    clue: int | None
    text: str
    cold: bool  # not in the fit: predicted from its text alone
    params: FitItem | None


@dataclass
class ItemPredictions:
    item: Item
    columns: list[ClueColumn]
    rows: list[dict[str, Any]]  # {"agent": FitAgent, "cells": [{"p", "actual"}]}
    dim_names: list[str]
    cold_params: dict[str, dict[str, list[float]]]


def item_predictions(run: FitRun, item: Item) -> ItemPredictions:
    """p(correct) of every agent of the fit on every IRT item of `item`, beside the rulings the fit saw.

    IRT items the fit did not see are cold start: CAIMIRA places them from their text embedding (same
    embedder and template as the fit); the id baselines can only give them the bank's mean item.
    """
    queries = item_queries(item)
    fitted = {fi.key: fi for fi in FitItem.objects.filter(fit=run, key__in=[q["id"] for q in queries])}
    columns = [ClueColumn(q["id"], q.get("clue"), q["text"], q["id"] not in fitted, fitted.get(q["id"])) for q in queries]
    agents = fit_agents(run)
    result = fit_result_load(run.pk)
    pairs = [(q["id"], a.key) for a in agents for q in queries]
    spec = run.settings
    probs = irt.predict(
        result, pairs, queries=queries, encoder=encoder_for(spec.get("embedder", "")), cache=cache_dir()
    ) if pairs else np.zeros(0)
    rulings = _rulings_by_query(run.pk)
    rows = []
    for i, agent in enumerate(agents):
        cells = []
        for j, q in enumerate(queries):
            cells.append({"p": float(probs[i * len(queries) + j]), "actual": rulings.get(q["id"], {}).get(agent.key)})
        rows.append({"agent": agent, "cells": cells})
    cold = {c.key: _cold_params(result, run, c.key, queries) for c in columns if c.cold}
    return ItemPredictions(item=item, columns=columns, rows=rows, dim_names=run.dim_names(), cold_params=cold)


def _cold_params(result: irt.FitResult, run: FitRun, key: str, queries: list[dict[str, Any]]) -> dict[str, list[float]]:
    """Relevance and difficulty of an unseen item, from the saved model (CAIMIRA only)."""
    if not result.model.uses_embeddings:
        return {}
    import torch

    query = next(q for q in queries if q["id"] == key)
    ids, emb, _meta = irt.embed_queries(
        [query], model=run.settings.get("embedder"), template=run.settings.get("template"),
        encoder=encoder_for(run.settings.get("embedder", "")), cache=cache_dir(),
    )
    with torch.no_grad():
        params = result.model.cold_params(1, torch.as_tensor(emb))
    r, d = params["relevance"][0].numpy(), params["difficulty"][0].numpy()
    return {"relevance": r.tolist(), "difficulty": d.tolist(), "effective_difficulty": (r * d).tolist()}


def agent_kind_summary(run: FitRun) -> list[dict[str, Any]]:
    """Mean skill per dimension and kind (the numbers behind the skills figure)."""
    by_kind: dict[str, list[list[float]]] = {}
    for a in FitAgent.objects.filter(fit=run):
        by_kind.setdefault(a.kind, []).append(a.skill)
    return [
        {"kind": kind, "n": len(skills), "mean": np.asarray(skills).mean(axis=0).tolist()}
        for kind, skills in sorted(by_kind.items(), key=lambda kv: KIND_ORDER.get(kv[0], 9))
    ]


def reports_open() -> QuerySet[RulingReport]:
    return RulingReport.objects.filter(status=RulingReport.Status.OPEN).select_related(
        "response", "response__item", "response__item__item_set", "response__agent", "reporter"
    ).prefetch_related("response__overrides__by").order_by("created_at")


def reports_recent(limit: int = 30) -> QuerySet[RulingReport]:
    return RulingReport.objects.exclude(status=RulingReport.Status.OPEN).select_related(
        "response", "response__item", "reporter"
    ).prefetch_related("response__overrides__by").order_by("-created_at")[:limit]


def item_sets_with_counts() -> QuerySet[ItemSet]:
    return ItemSet.objects.annotate(n_items=Count("items", distinct=True)).order_by("slug")


def data_spec_names_check(spec: DataSpec) -> None:
    """Raise ValueError for an item set or campaign in `spec` that does not exist: a mistyped name is a
    mistake to point out, not a filter whose empty result looks like an answer (an export of no rows)."""
    for label, wanted, known in (
        ("item set", spec.item_sets, ItemSet.objects.filter(slug__in=spec.item_sets).values_list("slug", flat=True)),
        ("campaign", spec.campaigns, Campaign.objects.filter(slug__in=spec.campaigns).values_list("slug", flat=True)),
    ):
        unknown = sorted(set(wanted) - set(known)) if wanted else []
        if unknown:
            raise ValueError(f"unknown {label}{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)}")


def export_campaigns() -> QuerySet[Campaign]:
    """The annotation campaigns the export page offers as a filter (its answers carry the slug)."""
    return Campaign.objects.select_related("item_set").order_by("slug")


# Up to this many selected rows the New-fit form and `fit_caimira` prepare the data to check it (about 1 s
# for 20,000 rows on a busy two-core machine); above it, preparing would hold the form for longer.
FIT_CHECK_MAX_ROWS = 20_000


def fit_data_check(*, spec: DataSpec) -> str | None:
    """Why the data `spec` selects is too little for a fit (`prepare.fit_data_shortfall`), before a run is
    queued; None when it is enough, or when only the run can tell.

    A small selection is prepared here, so the answer is exact. A large one gets quick queries only: with
    each player their own agent, the agents with a judged row are the fit's agents, so one agent over many
    rows is refused at once. Whatever else a large selection might lack (grouping that leaves one agent,
    rulings all alike) the run finds after preparing the data itself: it fails, saying why, and is never
    active.

    Quick because this runs inside the form's request on tables of millions of rows: the size is counted
    only up to the bound (LIMIT), "judged" is an EXISTS on the overrides (a LEFT JOIN with an OR reads every
    row), and "two agents" is one agent found and then any row of another, not a COUNT(DISTINCT).
    """
    selected = responses_selected(spec)
    if selected[: FIT_CHECK_MAX_ROWS + 1].count() <= FIT_CHECK_MAX_ROWS:
        return fit_data_shortfall(counts=prepare(spec).counts)
    if spec.grouping != "individual":
        return None
    # judged as `prepare` reads it, or wider (an override that clears the ruling): never a false refusal
    judged = selected.filter(
        Q(correct__isnull=False) | Exists(ResponseOverride.objects.filter(response=OuterRef("pk")))
    ).order_by()
    first = next(iter(judged.values_list("agent_id", flat=True)[:1]), None)  # any agent: no ORDER BY to sort for
    if first is None:
        return fit_data_shortfall(counts={"responses": 0})
    return fit_data_shortfall(counts={"agents": 2 if judged.exclude(agent_id=first).exists() else 1})
