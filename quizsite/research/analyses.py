"""Reads behind the paper's analysis figures of a fit (CAIMIRA Fig. 5, 6, 9, 10) and RoMQA scores per agent.

- question clusters: KMeans over the items' relevance vectors r_j (12 clusters), recomputed from the
  stored parameters, independent of the fit's own `cluster` column (KMeans over effective difficulty, the
  fit's "Item clusters" setting)
- Fig. 10: per cluster and dimension the relevance-weighted difficulty sum r_jk d_jk / sum r_jk, and
  Overall, the cluster's mean of r_j . d_j
- Fig. 5: per dimension a class-balanced logistic regression of [r_jk > 0.6] on item features
- Fig. 9: accuracy of each agent group on each cluster (the mean of its agents' accuracies there)
- Fig. 6: skills by agent group, the group being the agent's sub-type (Agent.subtype)
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from irt.interpret import RELEVANT, cluster_difficulty, relevance_clusters, relevance_regressions
from quizsite.agents.models import Agent
from quizsite.annotate.agreement import robust_scores
from quizsite.items.models import Item, Response

from .artifacts import fit_data_load
from .models import FitAgent, FitItem, FitRun

N_CLUSTERS = 12
MIN_CATEGORY_ITEMS = 10  # a category with fewer items joins the reference level of the regression

GROUPS: list[tuple[str, str]] = [
    ("human", "Humans"),
    ("human_group", "Human groups"),
    *[(s.value, str(s.label)) for s in Agent.Subtype if s.value != "human"],
    ("ai", "AI (no sub-type)"),
]
GROUP_LABEL = dict(GROUPS)


def agent_group(kind: str, subtype: str) -> str:
    """Humans and groups of humans by kind; an AI system by its sub-type, "ai" when it has none."""
    if kind == Agent.Kind.HUMAN_GROUP:
        return "human_group"
    if kind == Agent.Kind.HUMAN or subtype == Agent.Subtype.HUMAN:
        return "human"
    return subtype or "ai"


@dataclass
class FitClusters:
    keys: list[str]
    relevance: np.ndarray  # (n, m)
    difficulty: np.ndarray  # (n, m)
    labels: np.ndarray  # (n,)


def _params(run: FitRun) -> tuple[list[str], np.ndarray, np.ndarray]:
    rows = [
        (k, r, d)
        for k, r, d in FitItem.objects.filter(fit=run)
        .order_by("key")
        .values_list("key", "relevance", "difficulty")
        if r
    ]
    keys = [k for k, _r, _d in rows]
    return (
        keys,
        np.asarray([r for _k, r, _d in rows], dtype=np.float64),
        np.asarray([d for _k, _r, d in rows], dtype=np.float64),
    )


@lru_cache(maxsize=8)
def _clusters(fit_id: int, finished: str, n_clusters: int, seed: int) -> FitClusters | None:
    run = FitRun.objects.defer("artifact").get(pk=fit_id)
    keys, r, d = _params(run)
    if not keys:
        return None
    return FitClusters(keys, r, d, relevance_clusters(r, n_clusters=n_clusters, seed=seed))


def fit_clusters(run: FitRun, n_clusters: int = N_CLUSTERS) -> FitClusters | None:
    """The run's question clusters (None for a model without relevance). Cached: a succeeded run never changes."""
    if run.status != FitRun.Status.SUCCEEDED:
        return None
    return _clusters(run.pk, str(run.finished_at), n_clusters, int(run.settings.get("seed") or 0))


def cluster_difficulty_table(run: FitRun, n_clusters: int = N_CLUSTERS) -> dict[str, Any] | None:
    """Fig. 10 as records: {dim_names, clusters: [{cluster, size, weighted_difficulty, overall, mean_relevance}]}."""
    found = fit_clusters(run, n_clusters)
    if found is None:
        return None
    table = cluster_difficulty(found.relevance, found.difficulty, found.labels)
    return {
        "dim_names": run.dim_names(),
        "n_clusters": len(table.sizes),
        "method": "kmeans on relevance r_j",
        "clusters": table.as_records(),
    }


# --- Fig. 5: what makes a dimension relevant --------------------------------------------------------------

PERSON = {
    "man",
    "woman",
    "person",
    "people",
    "author",
    "writer",
    "poet",
    "novelist",
    "playwright",
    "dramatist",
    "composer",
    "artist",
    "painter",
    "sculptor",
    "architect",
    "philosopher",
    "thinker",
    "scientist",
    "physicist",
    "chemist",
    "biologist",
    "mathematician",
    "economist",
    "king",
    "queen",
    "emperor",
    "empress",
    "ruler",
    "leader",
    "president",
    "general",
    "pope",
    "pharaoh",
    "monarch",
    "prince",
    "princess",
    "saint",
    "explorer",
    "figure",
    "singer",
    "musician",
    "director",
    "actor",
    "actress",
    "god",
    "goddess",
    "deity",
    "hero",
    "heroine",
    "character",
    "politician",
    "inventor",
}
PLACE = {
    "city",
    "country",
    "nation",
    "state",
    "province",
    "region",
    "river",
    "mountain",
    "mountains",
    "lake",
    "sea",
    "ocean",
    "island",
    "islands",
    "desert",
    "continent",
    "capital",
    "town",
    "village",
    "valley",
    "peninsula",
    "empire",
    "kingdom",
    "republic",
    "place",
    "site",
    "location",
    "bay",
    "strait",
    "volcano",
    "planet",
    "moon",
}
WORK = {
    "novel",
    "poem",
    "play",
    "opera",
    "painting",
    "work",
    "book",
    "symphony",
    "film",
    "movie",
    "album",
    "song",
    "story",
    "sculpture",
    "essay",
    "treatise",
    "ballet",
    "piece",
    "collection",
    "series",
    "epic",
    "concerto",
    "sonata",
    "text",
    "tragedy",
    "comedy",
    "novella",
    "memoir",
    "poems",
}
_POINTER = re.compile(r"\b(?:this|these)((?:\s+[a-z'-]+){1,3})", re.IGNORECASE)


def answer_type(text: str) -> str:
    """person / place / work / other: the first word on one of three short word lists among the three words
    after each "this" or "these" of the question, in order (quizbowl points at its answer that way: "this
    Baroque composer", "this capital")."""
    for match in _POINTER.finditer(text or ""):
        for word in match.group(1).lower().split():
            for name, words in (("person", PERSON), ("place", PLACE), ("work", WORK)):
                if word in words:
                    return name
    return "other"


def item_features(run: FitRun, keys: list[str]) -> tuple[np.ndarray, list[str]]:
    """The regressors of Fig. 5 for the run's IRT items, in the order of `keys`: category one-hot (the most
    common category and those under MIN_CATEGORY_ITEMS items are the reference), the number of clues in the
    item, answer type one-hot (reference: other), and text length in words / 100."""
    texts = {q["id"]: q.get("text", "") for q in fit_data_load(run.pk)["queries"]}
    # the run's items, not `key__in=keys`: a fit can have more items than an SQLite statement takes parameters
    wanted = set(keys)
    rows = {fi.key: fi for fi in FitItem.objects.filter(fit=run).select_related("item") if fi.key in wanted}
    categories, clues, types, lengths = [], [], [], []
    for key in keys:
        fi = rows[key]
        item: Item | None = fi.item
        categories.append((item.category if item else "") or "(none)")
        clues.append(float(fi.clue or (item.data.get("n_clues") if item else None) or 1))
        text = texts.get(key) or (item.text if item else "")
        types.append(answer_type(item.text if item else text))
        lengths.append(len(text.split()) / 100)
    counts = Counter(categories)
    common = [c for c, n in counts.most_common() if n >= MIN_CATEGORY_ITEMS][1:]
    columns: list[list[float]] = [[float(c == name) for c in categories] for name in common]
    names = [f"category: {name}" for name in common]
    columns.append(clues)
    names.append("clues")
    for t in ("person", "place", "work"):
        if t in types:
            columns.append([float(x == t) for x in types])
            names.append(f"answer: {t}")
    columns.append(lengths)
    names.append("length (100 words)")
    return np.asarray(columns, dtype=np.float64).T.reshape(len(keys), len(names)), names


def dimension_regressions(run: FitRun) -> dict[str, Any] | None:
    """Fig. 5 as records, one regression per dimension; None for a model without relevance."""
    keys, r, _d = _params(run) if run.status == FitRun.Status.SUCCEEDED else ([], np.zeros(0), np.zeros(0))
    if not keys:
        return None
    x, names = item_features(run, keys)
    fits = relevance_regressions(r, x, names)
    dims = run.dim_names()
    return {
        "threshold": RELEVANT,
        "features": names,
        "n_items": len(keys),
        "dimensions": [
            {
                **f.as_record(),
                "name": dims[f.dimension] if f.dimension < len(dims) else f"dim {f.dimension + 1}",
            }
            for f in fits
        ],
    }


# --- Fig. 9 and Fig. 6: agent groups ---------------------------------------------------------------------


def _fit_agent_groups(run: FitRun) -> dict[str, str]:
    subtype = dict(
        Agent.objects.filter(pk__in=FitAgent.objects.filter(fit=run).values("agent_id")).values_list(
            "pk", "subtype"
        )
    )
    return {
        a.key: agent_group(a.kind, subtype.get(a.agent_id, "") if a.agent_id else "")
        for a in FitAgent.objects.filter(fit=run)
    }


def group_cluster_accuracy(run: FitRun, n_clusters: int = N_CLUSTERS) -> dict[str, Any] | None:
    """Fig. 9: for each agent group and question cluster, the mean over the group's agents of each agent's
    accuracy on the cluster's items (the rulings the fit was trained and validated on)."""
    found = fit_clusters(run, n_clusters)
    if found is None:
        return None
    cluster_of = dict(zip(found.keys, found.labels.tolist(), strict=True))
    groups = _fit_agent_groups(run)
    tallies: dict[tuple[str, int], list[int]] = defaultdict(
        lambda: [0, 0]
    )  # (agent, cluster) -> [correct, total]
    for r in fit_data_load(run.pk)["responses"]:
        c = cluster_of.get(r["query_id"])
        if c is None or r["agent_id"] not in groups:
            continue
        t = tallies[(r["agent_id"], c)]
        t[0] += int(r["ruling"])
        t[1] += 1
    k = int(found.labels.max()) + 1
    per_group: dict[str, list[list[float]]] = defaultdict(lambda: [[] for _ in range(k)])
    for (agent, c), (correct, total) in tallies.items():
        per_group[groups[agent]][c].append(correct / total)
    order = [g for g, _label in GROUPS if g in per_group]
    sizes = np.bincount(found.labels, minlength=k).tolist()
    return {
        "clusters": [{"cluster": c, "size": sizes[c]} for c in range(k)],
        "groups": [
            {
                "group": g,
                "label": GROUP_LABEL[g],
                "n_agents": len({a for a in groups if groups[a] == g}),
                "accuracy": [float(np.mean(v)) if v else None for v in per_group[g]],
                "n_agents_by_cluster": [len(v) for v in per_group[g]],
            }
            for g in order
        ],
    }


def group_skills(run: FitRun) -> list[dict[str, Any]]:
    """Fig. 6's numbers: per agent group, how many agents and the mean and spread of each skill dimension."""
    groups = _fit_agent_groups(run)
    skills: dict[str, list[list[float]]] = defaultdict(list)
    for a in FitAgent.objects.filter(fit=run).values("key", "skill"):
        if a["skill"]:
            skills[groups[a["key"]]].append(a["skill"])
    return [
        {
            "group": g,
            "label": GROUP_LABEL[g],
            "n": len(skills[g]),
            "mean": np.asarray(skills[g]).mean(axis=0).tolist(),
            "std": np.asarray(skills[g]).std(axis=0).tolist(),
        }
        for g, _label in GROUPS
        if skills.get(g)
    ]


def group_skill_values(run: FitRun) -> list[tuple[str, list[float]]]:
    """(group, skill vector) of every fitted agent, for the Fig. 6 plot."""
    groups = _fit_agent_groups(run)
    return [(groups[k], s) for k, s in FitAgent.objects.filter(fit=run).values_list("key", "skill") if s]


def fit_figures(run: FitRun, n_clusters: int = N_CLUSTERS) -> dict[str, Any]:
    """Every analysis figure of a run as one JSON-able dict (the page, the JSON export and the command)."""
    return {
        "fit": run.pk,
        "dim_names": run.dim_names(),
        "cluster_difficulty": cluster_difficulty_table(run, n_clusters),
        "dimension_regressions": dimension_regressions(run),
        "group_cluster_accuracy": group_cluster_accuracy(run, n_clusters),
        "group_skills": group_skills(run) if run.status == FitRun.Status.SUCCEEDED else [],
    }


# --- RoMQA -----------------------------------------------------------------------------------------------


def romqa_by_agent(item_sets: list[str] | None = None) -> list[dict[str, Any]]:
    """RoMQA's F1, accuracy and their robust forms (the minimum over a cluster's questions, averaged over
    clusters; clusters are `Item.data["cluster_id"]`) for every agent, human or AI, that answered multi-answer
    items; an agent's latest answer to an item counts. Humans are their public id."""
    qs = Response.objects.filter(item__kind=Item.Kind.ROMQA)
    if item_sets:
        qs = qs.filter(item__item_set__slug__in=item_sets)
    answers: dict[tuple[str, str, str], dict[int, tuple[str, float | None, bool | None]]] = defaultdict(dict)
    rows = qs.order_by("created_at", "id").values_list(
        "agent__kind",
        "agent__subtype",
        "agent__name",
        "agent__public_id",
        "item_id",
        "item__data__cluster_id",
        "score",
        "correct",
    )
    for kind, subtype, name, public_id, item_id, cluster, score, correct in rows:
        who = public_id if kind != Agent.Kind.AI else name
        answers[(kind, subtype, who)][item_id] = (f"{cluster}", score, correct)
    out = []
    for (kind, subtype, who), by_item in sorted(
        answers.items(), key=lambda kv: (kv[0][0] != Agent.Kind.AI, kv[0][2])
    ):
        s = robust_scores(by_item.values())
        out.append(
            {
                "agent": who,
                "kind": kind,
                "group": agent_group(kind, subtype),
                "f1": s.f1,
                "accuracy": s.accuracy,
                "robust_f1": s.robust_f1,
                "robust_accuracy": s.robust_accuracy,
                "n_answers": s.n_answers,
                "n_clusters": s.n_clusters,
            }
        )
    return out
