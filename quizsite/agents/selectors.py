"""Reads for AI agents: configs, versions, runs, and how an agent did (per set, clue, category, vs humans)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.db.models import Count, Q, QuerySet

from quizsite.items.models import Item, Response

from .models import Agent, AgentConfig, AgentRun, AgentVersion


def agent_configs() -> QuerySet[AgentConfig]:
    return AgentConfig.objects.annotate(n_versions=Count("versions", distinct=True)).order_by("name")


def agentversion_latest(config: AgentConfig) -> AgentVersion | None:
    return config.versions.order_by("-number").first()


def agentversion_resolve(spec: str) -> AgentVersion:
    """`name` (its latest version) or `name@vN`; raises ValueError naming what is missing."""
    name, _, number = spec.partition("@")
    config = AgentConfig.objects.filter(name=name).first()
    if config is None:
        known = ", ".join(AgentConfig.objects.values_list("name", flat=True)[:30])
        raise ValueError(f"no agent named {name!r} (agents: {known or 'none'}; `agent_run --list`)")
    if number:
        n = number.lstrip("vV")
        version = config.versions.filter(number=int(n)).first() if n.isdigit() else None
        if version is None:
            raise ValueError(f"agent {name!r} has no version {number!r}")
        return version
    version = agentversion_latest(config)
    if version is None:
        raise ValueError(f"agent {name!r} has no version yet")
    return version


def agent_runs(*, config: AgentConfig | None = None, limit: int | None = None) -> QuerySet[AgentRun]:
    qs = AgentRun.objects.select_related("version__config", "item_set")
    if config is not None:
        qs = qs.filter(version__config=config)
    return qs[:limit] if limit else qs


def agent_run_get(pk: int) -> AgentRun:
    return AgentRun.objects.select_related("version__config", "item_set", "created_by").get(pk=pk)


def agent_run_progress(run: AgentRun) -> dict[str, Any]:
    return {
        "id": run.pk,
        "status": run.status,
        "phase": run.phase,
        "done": run.done,
        "total": run.total,
        "percent": run.percent,
        "correct": run.correct,
        "written": run.written,
        "finished": run.finished,
        "accuracy": round(run.correct / run.done, 4) if run.done else None,
        "error": run.error.split("\n", 1)[0],
        "attempts": run.attempts,
        "lost": run.lost,
        "heartbeat_at": run.heartbeat_at.isoformat() if run.heartbeat_at else None,
    }


def _rate(n: int, k: int) -> float | None:
    return round(k / n, 4) if n else None


def agent_results(config: AgentConfig) -> dict[str, Any]:
    """Accuracy of every version of `config` per item set, per clue position (beside the humans' buzz
    curve on the same items) and per category, and humans' accuracy on the same items."""
    agents = list(Agent.objects.filter(agent_version__config=config).values_list("pk", flat=True))
    mine = Response.objects.filter(agent_id__in=agents, source=Response.Source.AGENT_RUN)
    per_set = list(
        mine.values("item__item_set__slug")
        .annotate(n=Count("id"), k=Count("id", filter=Q(correct=True)))
        .order_by("item__item_set__slug")
    )
    per_cat = list(
        mine.values("item__category")
        .annotate(n=Count("id"), k=Count("id", filter=Q(correct=True)))
        .order_by("item__category")
    )
    item_ids = set(mine.values_list("item_id", flat=True).distinct())
    prefixes = _prefix_items(item_ids)
    humans = Response.objects.filter(
        item_id__in=item_ids | set(prefixes),
        agent__kind__in=[Agent.Kind.HUMAN, Agent.Kind.HUMAN_GROUP],
        correct__isnull=False,
    )
    h_sets: dict[str, tuple[int, int]] = {
        r["item__item_set__slug"]: (r["n"], r["k"])
        for r in humans.values("item__item_set__slug").annotate(
            n=Count("id"), k=Count("id", filter=Q(correct=True))
        )
    }
    sets = []
    for r in per_set:
        hn, hk = h_sets.get(r["item__item_set__slug"], (0, 0))
        sets.append(
            {
                "slug": r["item__item_set__slug"],
                "n": r["n"],
                "accuracy": _rate(r["n"], r["k"]),
                "human_n": hn,
                "human_accuracy": _rate(hn, hk),
            }
        )
    return {
        "sets": sets,
        "categories": [
            {"category": r["item__category"] or "-", "n": r["n"], "accuracy": _rate(r["n"], r["k"])}
            for r in per_cat
        ],
        "curve": buzz_curves(agents, item_ids, prefixes),
    }


def _prefix_items(tossup_ids: set[int]) -> dict[int, int]:
    """Imported clue-prefix items (CAIMIRA releases) of these tossups: {prefix item id: n_clues}. Their
    rulings are the humans' answers to the same questions as an agent's answer after clue n_clues."""
    tossups = Item.objects.filter(pk__in=tossup_ids, kind=Item.Kind.TOSSUP).values_list(
        "item_set_id", "external_id"
    )
    by_set: dict[int, list[str]] = defaultdict(list)
    for set_id, ext in tossups:
        by_set[set_id].append(ext)
    out: dict[int, int] = {}
    for set_id, exts in by_set.items():
        for pk, data in Item.objects.filter(
            item_set_id=set_id, kind=Item.Kind.CLUE_PREFIX, data__orig_qid__in=exts
        ).values_list("pk", "data"):
            if isinstance(data, dict) and isinstance(data.get("n_clues"), int):
                out[pk] = data["n_clues"]
    return out


def buzz_curves(
    agent_ids: list[int], item_ids: set[int], prefixes: dict[int, int] | None = None
) -> list[dict[str, Any]]:
    """Per clue k (1-based): the agent's accuracy after clue k, beside the humans' on the same tossups: the
    share of live answers correct by clue k (a right buzz at clue j <= k counts for every k >= j: one
    attempt per tossup, so cumulative), pooled with imported rulings on the clue-k prefix items."""
    agent_rows = Response.objects.filter(
        agent_id__in=agent_ids,
        item__kind=Item.Kind.TOSSUP,
        clue_index__isnull=False,
        source=Response.Source.AGENT_RUN,
    )
    by_k: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for k, correct in agent_rows.values_list("clue_index", "correct"):
        if k is not None:
            by_k[int(k)][0] += 1
            by_k[int(k)][1] += int(bool(correct))
    human_rows = [
        (int(c), bool(ok))
        for c, ok in Response.objects.filter(
            item_id__in=item_ids,
            item__kind=Item.Kind.TOSSUP,
            clue_index__isnull=False,
            agent__kind=Agent.Kind.HUMAN,
            correct__isnull=False,
        ).values_list("clue_index", "correct")
        if c is not None
    ]
    ruled: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    prefixes = prefixes or {}
    for item_id, ok in Response.objects.filter(
        item_id__in=list(prefixes),
        agent__kind__in=[Agent.Kind.HUMAN, Agent.Kind.HUMAN_GROUP],
        correct__isnull=False,
    ).values_list("item_id", "correct"):
        ruled[prefixes[item_id] - 1][0] += 1
        ruled[prefixes[item_id] - 1][1] += int(bool(ok))
    out = []
    for k in sorted(by_k):
        n, right = by_k[k]
        hn = len(human_rows) + ruled[k][0]
        h_right = sum(1 for c, ok in human_rows if ok and c <= k) + ruled[k][1]
        out.append(
            {
                "clue": k + 1,
                "n": n,
                "accuracy": _rate(n, right),
                "human_n": hn,
                "human_accuracy": _rate(hn, h_right),
            }
        )
    return out
