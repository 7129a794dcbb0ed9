"""From the responses table to CAIMIRA records: the one data preparation that fits and exports share.

What a researcher chooses (`DataSpec`): item sets, item kinds, agent kinds, a date range and how human
players are grouped. What comes out (`Prepared`): CAIMIRA queries, agents and 0/1 responses, plus counts.

Rules (CAIMIRA.md):
- A tossup with clues 1..n gives IRT items `<set>/<tossup>_1 .. _n`, the text of `_k` being clues 1..k
  as the play clock splits them. An imported `clue_prefix` item (orig_qid q, n_clues k) is the same IRT
  item `<set>/<q>_<k>`, so live buzzes on a rebuilt tossup and published rulings meet on one item.
  Any other item is one IRT item `<set>/<external id>`.
- Only judged responses count (a prompt is not judged, its follow-up answer is). A researcher's
  override replaces the original ruling here (the latest override wins); the original row is never
  changed. "First" always means earliest by `created_at`, then by id: a rule on the data, not on the
  order in which rows happened to be inserted or imported.
- Humans (players, groups): per item, the first judged response counts (QANTA keeps a player's first
  record per question; a second row on one tossup is a replay).
- AI systems: every judged response on a tossup counts at its own clue (`irt.tossup_rulings`): an
  answer given after clue k is the system's response to q_k. Several answers at one clue: the first.
- A single buzz (every human, and an AI system that answered at one clue only) is backfilled
  (`irt.backfill`): correct at t -> 1 for k >= t, wrong -> 0 for k <= t. Answers at several clues are
  not. A player who heard a tossup without buzzing left no row, so gives no ruling.
- When two source items give one IRT item (a live tossup and an imported clue prefix of it), a ruling
  answered at that clue beats a backfilled one, then the first answer wins.
- Grouping `groups`: individual human players are replaced by synthetic `human_group` agents of the
  chosen sizes (`irt.group_humans`, majority vote with a seeded tie-break); `individual` keeps them;
  `paper` builds the CAIMIRA paper's groups (`irt.group_humans_paper`, see `group_players`). The scheme
  and its numbers are `Prepared.grouping`, kept in the counts and in the fit's metadata.
- Only IRT items with at least one ruling are in the data; the others get cold-start predictions.
- The same rows give the same fit in every installation: agents are ordered, grouped and split into
  validation by a key of what was imported (`agent_split_key`), not by their pseudonyms, which each
  installation draws at random. (Before, one file imported into three fresh databases gave validation
  accuracy 0.921, 0.924 and 0.931 with the same settings.)
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypedDict

from django.db.models import BooleanField, Case, CharField, OuterRef, Q, QuerySet, Subquery, Value, When
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Coalesce
from django.utils.dateparse import parse_date, parse_datetime

import irt
from quizsite.agents.models import Agent
from quizsite.items.models import Item, Response, ResponseOverride
from quizsite.items.tossups import TossupText

from .rulings import Answer, Ruling, item_rulings, merge_rulings

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

GROUPING_CHOICES = [
    ("individual", "each player is an agent"),
    ("groups", "pool players into groups (every player at every size)"),
    ("paper", "CAIMIRA paper: a few disjoint groups per size, widest-coverage players alone"),
]
GROUPINGS = tuple(name for name, _label in GROUPING_CHOICES)

# The least data a fit is made from (README, "The least data a fit is made from"). With one agent a fit
# cannot tell its skill from the items' difficulty (only their difference is in the data), and with one
# item the other way round; with every ruling the same the likelihood has no maximum (parameters run off
# to infinity); and under 10 rulings the default 10% validation share expects less than one pair. A floor
# against degenerate fits, not a promise of a good one: the run's validation metrics say how good it is.
FIT_MIN_AGENTS = 2
FIT_MIN_ITEMS = 2
FIT_MIN_RULINGS = 10


def fit_data_shortfall(*, counts: dict[str, Any]) -> str | None:
    """Why prepared data (`Prepared.counts`) is too little for a fit, in words for the researcher; None
    when it is enough. The New-fit form, `fit_caimira`, the run itself and activation all ask this. A
    count that `counts` lacks is not held against the data (a quick check knows only some of them)."""
    if counts.get("responses") == 0:
        return "Too little data for a fit: no judged responses match this data selection."
    short = []
    # Items are the item bank's rows (`source_items`), not the fit's IRT items: one tossup's clue prefixes
    # are several IRT items of one question. Counts without `source_items` fall back on the IRT items:
    # never fewer than the items, so the fallback never refuses data of 2 items.
    items = counts.get("source_items", counts.get("items"))
    queries = counts.get("items")
    clues = (f": the {queries} IRT items are clue prefixes of one item"
             if items == 1 and queries is not None and int(queries) > 1 else "")
    for n, least, noun, why in (
        (counts.get("agents"), FIT_MIN_AGENTS, "agent",
         ": with one agent a fit cannot tell its skill from the items' difficulty"),
        (items, FIT_MIN_ITEMS, "item", clues),
        (counts.get("responses"), FIT_MIN_RULINGS, "ruling", ""),
    ):
        if n is not None and int(n) < least:
            short.append(f"{n} {noun}{'' if n == 1 else 's'} (at least {least}{why})")
    alike = _rulings_alike(counts)
    if alike is not None:
        short.append(f"every ruling is {'correct' if alike else 'wrong'} (a fit needs some of each)")
    if not short:
        return None
    return "Too little data for a fit: " + "; ".join(short) + ". Widen the data selection."


# `positive_rate` is rounded to this many decimals: for display, never for deciding (see _rulings_alike).
RATE_DECIMALS = 4


def _rulings_alike(counts: dict[str, Any]) -> bool | None:
    """True when every ruling is correct, False when every one is wrong, None when some of each (or when
    the counts cannot tell).

    Decided on the exact count of correct rulings (`positive`), not on the rounded `positive_rate`: over
    20,000 rulings one wrong ruling rounds to a rate of 1.0, and a fit of fine data was refused. Runs stored
    before `positive` was counted have only the rate; it is trusted while one ruling moves it by at least a
    rounding step (under 10**RATE_DECIMALS rulings), and above that the answer is unknown, so an old run is
    not refused on a rounding."""
    n = counts.get("responses")
    if not n:
        return None
    positive = counts.get("positive")
    if positive is not None:
        return True if int(positive) == int(n) else False if int(positive) == 0 else None
    rate = counts.get("positive_rate")
    if rate not in (0, 1) or int(n) >= 10**RATE_DECIMALS:
        return None
    return rate == 1


@dataclass
class DataSpec:
    item_sets: list[str] = field(default_factory=list)  # slugs; empty: every set
    item_kinds: list[str] = field(default_factory=list)  # empty: every kind
    agent_kinds: list[str] = field(default_factory=lambda: [k.value for k in Agent.Kind])
    since: str = ""  # ISO date or datetime, inclusive
    until: str = ""  # ISO date or datetime, exclusive
    grouping: str = "individual"
    group_sizes: list[int] = field(default_factory=lambda: [1, 5, 10, 15])
    groups_per_size: int = 5  # grouping "paper" only
    seed: int = 0
    include_practice: bool = False  # annotation practice answers (Response.meta "practice") are left out by default
    campaigns: list[str] = field(default_factory=list)  # annotation campaign slugs; empty: every response

    def __post_init__(self) -> None:
        if self.grouping not in GROUPINGS:
            raise ValueError(f"grouping must be one of {', '.join(GROUPINGS)}")
        unknown = set(self.agent_kinds) - {k.value for k in Agent.Kind}
        if unknown:
            raise ValueError(f"unknown agent kind {sorted(unknown)[0]!r}")
        unknown = set(self.item_kinds) - {k.value for k in Item.Kind}
        if unknown:
            raise ValueError(f"unknown item kind {sorted(unknown)[0]!r}")
        if any(int(s) < 1 for s in self.group_sizes):
            raise ValueError("group sizes must be positive")
        if int(self.groups_per_size) < 1:
            raise ValueError("groups per size must be positive")
        for name in ("since", "until"):
            if getattr(self, name) and _when(getattr(self, name)) is None:
                raise ValueError(f"{name} must be an ISO date or datetime")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DataSpec:
        names = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass
class Prepared:
    queries: list[dict[str, Any]]
    agents: list[dict[str, Any]]
    responses: list[dict[str, Any]]
    counts: dict[str, Any]
    grouping: dict[str, Any] = field(default_factory=dict)  # how humans became agents; kept with the fit


def group_players(
    spec: DataSpec, by_player: dict[str, dict[str, int]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """Group agents, their responses, and a record of the scheme (what the fit keeps in its metadata).

    `groups`: every player in one group of every size (`irt.group_humans`). `paper`: the CAIMIRA paper's
    `groups_per_size` groups of each size, a player in at most one (`irt.group_humans_paper`); players in
    no group are left out of the fit, as in the paper, and counted. Either way a group's response on an
    item is the majority of the members who answered it, a tie drawn from seed, group and item
    (`irt.group_responses`).
    """
    record: dict[str, Any] = {"scheme": spec.grouping}
    if spec.grouping == "individual":
        return [], [], record
    sizes = [int(s) for s in spec.group_sizes]
    if spec.grouping == "paper":
        groups = irt.group_humans_paper(by_player, sizes=sizes, per_size=int(spec.groups_per_size))
        record["groups_per_size"] = int(spec.groups_per_size)
    else:
        groups = irt.group_humans(by_player, sizes=sizes)
    grouped = {m for g in groups for m in g.members}
    record.update({
        "sizes": sizes, "seed": int(spec.seed), "combine": "majority of members who answered; tie drawn (seeded)",
        "groups_by_size": {str(s): sum(g.size == s for g in groups) for s in sizes},
        "players": len(by_player), "players_grouped": len(grouped), "players_left_out": len(set(by_player) - grouped),
    })
    return irt.group_responses(groups, by_player, seed=int(spec.seed)), irt.group_agents(groups), record


def _when(value: str) -> datetime | None:
    parsed = parse_datetime(value)
    if parsed is None and parse_date(value) is not None:
        parsed = datetime.combine(parse_date(value), datetime.min.time())  # type: ignore[arg-type]
    if parsed is not None and parsed.tzinfo is None:
        from django.utils import timezone

        parsed = timezone.make_aware(parsed)
    return parsed


_TAGS = re.compile(r"<[^>]+>")
_DIRECTIVES = re.compile(r"\[[^\]]*\]|\([^)]*(?:accept|prompt|antiprompt)[^)]*\)", re.IGNORECASE)


def clean_answer(answer: str) -> str:
    """The answer as a reader would say it: no HTML, no [accept ...] directives, no {required} braces."""
    text = _DIRECTIVES.sub(" ", _TAGS.sub("", answer or ""))
    return " ".join(text.replace("{", "").replace("}", "").replace("_", " ").split())


def item_key(item: Item, k: int | None = None) -> str:
    """The IRT id of an item (and clue k of a tossup) in fits and exports."""
    slug = item.item_set.slug
    if item.kind == Item.Kind.CLUE_PREFIX and item.data.get("orig_qid") is not None:
        return f"{slug}/{item.data['orig_qid']}_{item.data['n_clues']}"
    if item.kind == Item.Kind.TOSSUP and k is not None:
        return f"{slug}/{item.external_id}_{k}"
    return f"{slug}/{item.external_id}"


def item_keys(item: Item) -> list[str]:
    """The IRT ids of an item, cheaply (no clue texts): every clue prefix of a tossup, else one id."""
    if item.kind == Item.Kind.TOSSUP and item.data.get("clue_ends"):
        return [item_key(item, k) for k in range(1, len(item.data["clue_ends"]) + 1)]
    return [item_key(item)]


def tossup_text(item: Item) -> TossupText:
    data = item.data
    return TossupText(words=data["words"], clue_ends=data["clue_ends"], power_index=data.get("power_index"))


def item_queries(item: Item) -> list[dict[str, Any]]:
    """CAIMIRA query records of one item (every clue prefix of a tossup), whether or not it was answered.

    `text`, `answer` and, when the item carries one (`item.data["summary"]`, from the importers), `summary`
    are what `irt.item_text` embeds: fits, cold-start pages and `python -m irt` on an export all build the
    embedding input from these records with that one function, so they embed the same text. Extra fields:
    `item_pk`, `clue`, `kind`, `category`, used by the pages and the templates.
    """
    base = {"answer": clean_answer(item.answer), "category": item.category, "item_pk": item.pk, "kind": item.kind}
    summary = item.data.get("summary")
    if isinstance(summary, str) and summary.strip():
        base["summary"] = summary.strip()
    if item.kind == Item.Kind.TOSSUP and item.data.get("clue_ends"):
        clues = tossup_text(item).clues()
        return [
            {**c.as_query(**base), "id": item_key(item, c.n_clues), "orig_qid": item_key(item), "clue": c.n_clues}
            for c in irt.clue_items(item_key(item), clues)
        ]
    query = {"id": item_key(item), "text": item.text, **base, "clue": None}
    if item.kind == Item.Kind.CLUE_PREFIX and item.data.get("orig_qid") is not None:
        query.update(
            {
                "orig_qid": f"{item.item_set.slug}/{item.data['orig_qid']}",
                "n_clues": item.data["n_clues"],
                "total_clues": item.data.get("total_clues") or item.data["n_clues"],
                "clue": item.data["n_clues"],
            }
        )
    return [query]


# has_key first: a key lookup on a row without the key is NULL, and NOT NULL would drop the row too.
# Practice answers carry meta.practice; those written before that flag only their role, "training".
PRACTICE_FLAGGED = Q(meta__has_key="practice") & Q(meta__practice=True)
PRACTICE_BY_ROLE = Q(source=Response.Source.ANNOTATION) & Q(meta__has_key="role") & Q(meta__role="training")


def responses_selected(spec: DataSpec) -> QuerySet[Response]:
    """Rows a fit or an export reads. Annotation practice answers are left out unless asked for: they were
    given with feedback on screen, so they measure the tutorial, not the annotator. A campaign filter keeps
    the annotation answers of those campaigns only (the slug each answer carries in its meta)."""
    qs = Response.objects.all()
    if not spec.include_practice:
        qs = qs.exclude(PRACTICE_FLAGGED).exclude(PRACTICE_BY_ROLE)
    if spec.campaigns:
        qs = qs.filter(source=Response.Source.ANNOTATION, meta__campaign__in=spec.campaigns)
    if spec.item_sets:
        qs = qs.filter(item__item_set__slug__in=spec.item_sets)
    if spec.item_kinds:
        qs = qs.filter(item__kind__in=spec.item_kinds)
    if spec.agent_kinds:
        qs = qs.filter(agent__kind__in=spec.agent_kinds)
    if spec.since:
        qs = qs.filter(created_at__gte=_when(spec.since))
    if spec.until:
        qs = qs.filter(created_at__lt=_when(spec.until))
    return qs


class LatestOverride(TypedDict):
    override_verdict: str | None
    override_correct: bool | None
    override_by: str | None
    override_at: datetime | None


def with_latest_override(qs: QuerySet[Response]) -> QuerySet[WithAnnotations[Response, LatestOverride]]:
    """Annotate the latest override of each response (verdict, correct, by, at); None where there is none."""
    latest = ResponseOverride.objects.filter(response=OuterRef("pk")).order_by("-at", "-id")
    return qs.annotate(
        override_verdict=Subquery(latest.values("verdict")[:1]),
        override_correct=Subquery(latest.values("correct")[:1]),
        override_by=Subquery(latest.values("by__username")[:1]),
        override_at=Subquery(latest.values("at")[:1]),
    )


class CampaignPractice(TypedDict):
    campaign: str
    practice: bool


def with_campaign_and_practice(qs: QuerySet[Response]) -> QuerySet[WithAnnotations[Response, CampaignPractice]]:
    """Annotate `campaign` (the annotation campaign's slug, "" for every row that is not an annotation
    answer, even one whose meta happens to name a campaign) and `practice` (exactly the rows that
    `responses_selected` leaves out unless `include_practice`).

    One definition for the responses export and the API, so their columns cannot drift apart. Both are read
    from each row's own meta in the same query (no join, no query per row): the slug an answer carries
    outlives its campaign's assignments.
    """
    return qs.annotate(
        campaign=Case(
            When(source=Response.Source.ANNOTATION, then=Coalesce(KeyTextTransform("campaign", "meta"), Value(""))),
            default=Value(""), output_field=CharField(),
        ),
        practice=Case(
            When(PRACTICE_FLAGGED | PRACTICE_BY_ROLE, then=Value(True)), default=Value(False), output_field=BooleanField(),
        ),
    )


def _judged(correct: bool | None, override_verdict: str | None, override_correct: bool | None) -> bool | None:
    if override_verdict is not None:
        return override_correct
    return correct


def agent_record(agent: Agent) -> dict[str, Any]:
    """CAIMIRA agent record: humans are their pseudonym, AI systems keep their name."""
    name = agent.name if agent.kind == Agent.Kind.AI else agent.public_id
    return {"id": agent.public_id, "name": name, "type": agent.kind, "agent_pk": agent.pk,
            "split_key": agent_split_key(agent)}


def agent_split_key(agent: Agent) -> str:
    """What orders an agent among the others and hashes its pairs into validation (`irt` reads
    `split_key`). An AI system: its kind and external id, or its name. A human from an imported file:
    the id the file gives it. Both are hashed, and both are the same wherever the file is imported.
    Every other human (players, crowd workers, whose external id is their platform id) keeps its
    pseudonym: it exists in this installation only, and nothing it did may be linked to it."""
    if agent.kind == Agent.Kind.AI:
        basis = f"{agent.kind}:{agent.external_id}" if agent.external_id else f"{agent.kind}:name:{agent.name}"
    elif agent.external_id and (agent.meta or {}).get("imported_from"):
        basis = f"{agent.kind}:{agent.external_id}"
    else:
        return agent.public_id
    return "k-" + hashlib.blake2b(basis.encode(), digest_size=8).hexdigest()


def _unique_split_keys(records: dict[int, dict[str, Any]]) -> None:
    """Two agents with one key (two AI systems of one name) keep it apart with their pseudonyms."""
    seen = Counter(rec["split_key"] for rec in records.values())
    for rec in records.values():
        if seen[rec["split_key"]] > 1:
            rec["split_key"] = f"{rec['split_key']}-{rec['id']}"


def prepare(spec: DataSpec) -> Prepared:
    """The CAIMIRA records of a data selection (the rules: this module's docstring). One pass over the
    selected responses; the same selection of the same rows always gives the same records, in sorted order."""
    rows = with_latest_override(responses_selected(spec)).order_by("id").values_list(
        "id", "agent_id", "item_id", "correct", "clue_index", "created_at", "override_verdict", "override_correct"
    )
    answers: dict[tuple[int, int], list[Answer]] = defaultdict(list)
    n_source, max_id = 0, 0
    for rid, agent_id, item_id, correct, clue_index, created_at, o_verdict, o_correct in rows.iterator(chunk_size=5000):
        n_source += 1
        max_id = max(max_id, rid)
        judged = _judged(correct, o_verdict, o_correct)
        if judged is not None:
            answers[(agent_id, item_id)].append(Answer(created_at, rid, judged, clue_index))

    items = Item.objects.select_related("item_set").in_bulk({item_id for _a, item_id in answers})
    agents = Agent.objects.in_bulk({agent_id for agent_id, _i in answers})
    queries: dict[str, dict[str, Any]] = {}
    merged: dict[int, dict[str, Ruling]] = defaultdict(dict)  # agent pk -> {query id: ruling}
    queries_of: dict[int, list[dict[str, Any]]] = {}  # per item, computed once (clue texts are joins)
    for (agent_id, item_id), given in answers.items():
        given.sort(key=lambda a: (a.at, a.id))
        if agents[agent_id].kind != Agent.Kind.AI:
            given = given[:1]  # a player's first record per question counts (QANTA); later rows are replays
        item = items[item_id]
        if item_id not in queries_of:
            queries_of[item_id] = item_queries(item)
        got = item_rulings(item, queries_of[item_id], given)
        merge_rulings(merged[agent_id], got)
        for q in queries_of[item_id]:
            if q["id"] in got:
                queries.setdefault(q["id"], q)
    rulings = {a: {q: r.ruling for q, r in sorted(mine.items())} for a, mine in sorted(merged.items())}

    agent_records = {a: agent_record(agents[a]) for a in rulings}
    _unique_split_keys(agent_records)
    pooled = set() if spec.grouping == "individual" else {a for a in rulings if agents[a].kind == Agent.Kind.HUMAN}
    responses = [
        {"query_id": q, "agent_id": agent_records[a]["id"], "ruling": r}
        for a in rulings
        if a not in pooled
        for q, r in rulings[a].items()
    ]
    agent_list = [rec for a, rec in agent_records.items() if a not in pooled]
    # grouped by split key, so that ties between players fall the same way in every installation
    by_player = {agent_records[a]["split_key"]: rulings[a] for a in rulings if a in pooled}
    group_rows, group_list, grouping = group_players(spec, by_player)
    pseudonym = {agent_records[a]["split_key"]: agent_records[a]["id"] for a in pooled}
    for group in group_list:
        group["members"] = [pseudonym[m] for m in group.get("members", [])]
    responses += group_rows
    agent_list += group_list

    used_agents = {r["agent_id"] for r in responses}
    order = {a["id"]: (str(a.get("split_key") or a["id"]), a["id"]) for a in agent_list}
    agent_list = sorted((a for a in agent_list if a["id"] in used_agents), key=lambda a: order[a["id"]])
    used_queries = {r["query_id"] for r in responses}
    query_list = sorted((q for q in queries.values() if q["id"] in used_queries), key=lambda q: q["id"])
    responses.sort(key=lambda r: (order[r["agent_id"]], r["query_id"]))
    types = {a["id"]: a["type"] for a in agent_list}
    positive = sum(int(r["ruling"]) for r in responses)
    counts = {
        "source_responses": n_source,
        "judged_pairs": len(answers),
        "max_response_id": max_id,
        "items": len(query_list),
        "source_items": len({q["item_pk"] for q in query_list}),
        "agents": len(agent_list),
        "agents_by_kind": dict(Counter(types.values())),
        "responses": len(responses),
        "responses_by_kind": dict(Counter(types[r["agent_id"]] for r in responses)),
        "positive": positive,  # exact: what the minimum is checked on (fit_data_shortfall)
        "positive_rate": round(positive / len(responses), RATE_DECIMALS) if responses else None,  # for display
        "human_grouping": grouping,
    }
    return Prepared(queries=query_list, agents=agent_list, responses=responses, counts=counts, grouping=grouping)
