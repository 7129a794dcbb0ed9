"""Reads for annotation pages and for researchers: progress, per-annotator and per-item figures,
agreement, task-specific scores, and humans beside AI systems on the same items.

Everything is computed from the responses table (via each assignment's response); training answers
are left out of every figure, gold answers appear only as the attention-check columns.
"""

from __future__ import annotations

import json
import re
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Count, Q, QuerySet

from quizsite.agents.models import Agent
from quizsite.core.roles import may_join_campaign
from quizsite.items.models import Item, Response

from . import agreement
from .models import Assignment, AuthoredItem, Campaign, Participant
from .tasks import TASK_KIND, Task


def campaign_admits(campaign: Campaign, user: Any) -> bool:
    """May this visitor take part (quizsite.core.roles decides; this only fetches the invitation list)?"""
    if not campaign.invite_only:
        return True
    invited = set(campaign.invited.values_list("pk", flat=True)) if user is not None and user.is_authenticated else set()
    return may_join_campaign(user, invite_only=True, invited_user_ids=invited)


def campaigns_open() -> QuerySet[Campaign]:
    return Campaign.objects.filter(is_open=True).select_related("item_set").order_by("name")


def campaigns_all() -> QuerySet[Campaign]:
    return Campaign.objects.select_related("item_set").annotate(n_participants=Count("participants")).order_by("-created_at")


def participant_progress(participant: Participant) -> dict[str, int]:
    """Items handled and the session's size, for the progress bar (an estimate when there is no quota)."""
    campaign = participant.campaign
    if campaign.task == Task.ARCHAEOLOGY_AUTHOR:
        return {"done": participant.authored.count(), "total": max(campaign.quota, 1)}
    done = participant.assignments.filter(state__in=(Assignment.State.DONE, Assignment.State.SKIPPED)).count()
    pool = Item.objects.filter(item_set=campaign.item_set, kind=TASK_KIND[campaign.task]).count()
    extra = campaign.training_items.count() + campaign.gold_items.count()
    target = campaign.quota if campaign.quota else pool - extra
    return {"done": done, "total": max(target + extra, done, 1)}


def participant_answer_count(participant: Participant) -> int:
    """Real answers toward the completion code: pool items answered (a skip, a training item or an
    attention check does not count); for authoring, entries written."""
    if participant.campaign.task == Task.ARCHAEOLOGY_AUTHOR:
        return participant.authored.count()
    return participant.assignments.filter(role=Assignment.Role.POOL, state=Assignment.State.DONE).count()


@dataclass(frozen=True)
class Tally:
    """What the end page says an annotator did: the study's items answered and skipped, and, apart, the
    practice items. Attention checks count as the study's items: to the annotator they are, and the
    page must not tell them which were checks."""

    answered: int
    skipped: int
    practice: int


def participant_tally(participant: Participant) -> Tally:
    """The end page's counts (the progress bar's `done` counts practice and skips too: it is the session's
    position, not what was done). For authoring, the entries written."""
    if participant.campaign.task == Task.ARCHAEOLOGY_AUTHOR:
        return Tally(answered=participant.authored.count(), skipped=0, practice=0)
    real = ~Q(role=Assignment.Role.TRAINING)
    counts = participant.assignments.aggregate(
        answered=Count("id", filter=real & Q(state=Assignment.State.DONE)),
        skipped=Count("id", filter=real & Q(state=Assignment.State.SKIPPED)),
        practice=Count("id", filter=~real & Q(state__in=(Assignment.State.DONE, Assignment.State.SKIPPED))),
    )
    return Tally(**counts)


@dataclass(frozen=True)
class Completion:
    """Where an annotator stands against the campaign's minimum of real answers."""

    answered: int
    needed: int

    @property
    def earned(self) -> bool:
        return self.answered >= self.needed

    @property
    def remaining(self) -> int:
        return max(0, self.needed - self.answered)


def participant_completion(participant: Participant) -> Completion:
    """Whether the end page may show the completion code: only with the campaign's minimum of real answers,
    so skipping every item (or leaving at once) earns no payment on a crowd platform."""
    return Completion(answered=participant_answer_count(participant), needed=participant.campaign.min_answers)


def authored_pending(campaign: Campaign) -> QuerySet[AuthoredItem]:
    return campaign.authored.filter(status=AuthoredItem.Status.PENDING).select_related("participant__agent")


def _median(values: list[float]) -> float | None:
    return float(statistics.median(values)) if values else None


def _mean(values: list[float]) -> float | None:
    return float(statistics.fmean(values)) if values else None


def _share(flags: list[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def _norm(text: str) -> str:
    return re.sub(r"[^\w]+", " ", text.casefold()).strip()


def _chosen(response: Response) -> list[str]:
    try:
        return list(json.loads(response.given or "[]"))
    except ValueError:
        return []


def _answer(a: Assignment) -> Response:
    """The response of a done assignment: campaign_stats passes the helpers below only those that have one."""
    assert a.response is not None
    return a.response


def _responses(rows: list[Assignment]) -> list[Response]:
    return [_answer(a) for a in rows]


def _kappa_record(units: dict[Any, list[Any]]) -> dict[str, Any]:
    table = agreement.count_table(units.values())
    kappa = agreement.fleiss_kappa(table)
    return {
        "fleiss_kappa": kappa.kappa,
        "observed_p_bar": kappa.p_bar,
        "chance_p_e": kappa.p_e,
        "krippendorff_alpha": agreement.krippendorff_alpha_nominal(table),
        "n_units": kappa.n_items,
    }


def option_role(task: str, item: Item, option: str) -> str:
    """A category every item shares: archaeology's true question / decoy 1 / decoy 2 (the order of
    `other_questions` in the item), Ghigliottina's solution / distractor n (the item's order of `choices`)."""
    if task == Task.ARCHAEOLOGY_CHOOSE:
        if option == item.data["true_question"]:
            return "true question"
        others = list(item.data.get("other_questions") or [])
        return f"decoy {others.index(option) + 1}" if option in others else "unknown"
    choices = list(item.data.get("choices") or [])
    if option not in choices:
        return "unknown"
    index, label = choices.index(option), item.data.get("label")
    if index == label:
        return "solution"
    return f"distractor {index + 1 - (label is not None and index > label)}"


def _truth(task: str, item: Item) -> str:
    return item.data["true_question"] if task == Task.ARCHAEOLOGY_CHOOSE else item.data["choices"][item.data["label"]]


AGREEMENT_CATEGORIES: dict[str, str] = {
    Task.ARCHAEOLOGY_CHOOSE: "option role (true question, decoy 1, decoy 2)",
    Task.GHIGLIOTTINA_CHOOSE: "option role (solution, distractor 1-3)",
    Task.GHIGLIOTTINA_OPEN: "typed word (normalised)",
    Task.ROMQA_SELECT: "ticked or not",
}


def _agreement_reason(*, per_item: int, answered: int, overlap: int, pool_items: int, kappa: float | None) -> str:
    """Why the figures are missing, in words ('' when they are there): agreement needs items that two or
    more annotators answered, and assignment is breadth-first, so a small pilot has none."""
    if not overlap:
        if per_item < 2:
            return ("Agreement cannot be computed: each item goes to one annotator only (k = 1), so no item is "
                    "answered by 2 or more annotators.")
        return (f"Agreement cannot be computed yet: no item has answers from 2 or more annotators (items with overlap: 0; "
                f"{answered} of {pool_items} items have one answer). Items go to the least-answered first, so overlap "
                f"starts only once every item has an answer.")
    if kappa is None:
        return "Kappa is undefined: every answer falls in one category, so chance agreement is 1."
    return ""


def _agreement(task: str, done: list[Assignment], *, per_item: int, pool_items: int) -> dict[str, Any] | None:
    """Units and categories: for choose tasks each item is a unit and the category is the chosen option's
    role (true question / decoy 1 / decoy 2), which every item shares, so chance agreement P_e is the
    pooled share of each role; the typed word (open game); or each (question, candidate) ticked or not
    (romqa). Written questions (and authored items) have no categories to agree on: None.

    `computable` is false until some item has answers from 2 or more annotators (`items_with_overlap`);
    `reason` then says why in words."""
    if task not in AGREEMENT_CATEGORIES:
        return None
    units: dict[Any, list[Any]] = defaultdict(list)
    for a in done:
        if task in (Task.ARCHAEOLOGY_CHOOSE, Task.GHIGLIOTTINA_CHOOSE):
            units[a.item_id].append(option_role(task, a.item, _answer(a).given))
        elif task == Task.GHIGLIOTTINA_OPEN:
            units[a.item_id].append(_norm(_answer(a).given) or "(blank)")
        else:
            chosen = set(_chosen(_answer(a)))
            for cand in a.item.data["candidates"]:
                units[(a.item_id, cand["text"])].append(cand["text"] in chosen)
    record = _kappa_record(units)
    record["unit"] = "question-candidate pair" if task == Task.ROMQA_SELECT else "item"
    record["categories"] = AGREEMENT_CATEGORIES[task]
    per_item_answers = Counter(a.item_id for a in done)
    overlap = sum(1 for n in per_item_answers.values() if n >= 2)
    record["items_answered"] = len(per_item_answers)
    record["items_with_overlap"] = overlap
    record["computable"] = overlap > 0
    record["reason"] = _agreement_reason(
        per_item=per_item, answered=len(per_item_answers), overlap=overlap, pool_items=pool_items, kappa=record["fleiss_kappa"]
    )
    return record


def _choose(task: str, done: list[Assignment]) -> dict[str, Any]:
    """Choose tasks: agreement over the slot shown (is the position chosen shared?), agreement over the
    option's own text (the older, per-item categories, for comparison), macro-F1 with the true option's
    slot as the class, and accuracy and choice rate by the slot the true option was shown in. The order
    shown is the response's `choices` (the assignment's when a response lacks it)."""
    by_slot: dict[Any, list[Any]] = defaultdict(list)
    by_text: dict[Any, list[Any]] = defaultdict(list)
    gold: list[int] = []
    predicted: list[int] = []
    n_slots = 0
    for a in done:
        response = _answer(a)
        shown = list(response.choices or a.choices or [])
        by_text[a.item_id].append(response.given)
        truth = _truth(task, a.item)
        if response.given not in shown or truth not in shown:
            continue
        n_slots = max(n_slots, len(shown))
        by_slot[a.item_id].append(shown.index(response.given))
        gold.append(shown.index(truth))
        predicted.append(shown.index(response.given))
    return {
        "agreement_by_slot": _kappa_record(by_slot),
        "agreement_by_option_text": _kappa_record(by_text),
        "macro_f1": agreement.macro_f1(gold, predicted),
        "macro_f1_classes": "slot of the true option (1..n), predicted: slot chosen",
        "positions": agreement.position_effects(zip(gold, predicted, strict=True), n_slots),
        "n_answers_with_order": len(gold),
    }


def _robust(scores: agreement.RobustScores) -> dict[str, Any]:
    return {"f1": scores.f1, "accuracy": scores.accuracy, "robust_f1": scores.robust_f1,
            "robust_accuracy": scores.robust_accuracy, "n_answers": scores.n_answers, "n_clusters": scores.n_clusters}


def _romqa(done: list[Assignment]) -> dict[str, Any]:
    """F1 and accuracy, and their robust forms: per annotator and cluster the worst question, averaged; then
    the same per agent, every annotator and every AI system that answered the campaign's items."""
    per_cluster: dict[tuple[int, str], list[Response]] = defaultdict(list)
    for a in done:
        per_cluster[(a.participant_id, str(a.item.data.get("cluster_id")))].append(_answer(a))
    f1 = [r.score for r in _responses(done) if r.score is not None]
    acc = [bool(_answer(a).correct) for a in done]
    robust_f1 = [min(r.score or 0.0 for r in rs) for rs in per_cluster.values()]
    robust_acc = [all(r.correct for r in rs) for rs in per_cluster.values()]
    humans: dict[str, list[tuple[str, float | None, bool | None]]] = defaultdict(list)
    for a in done:
        humans[a.participant.agent.public_id].append((str(a.item.data.get("cluster_id")), _answer(a).score, _answer(a).correct))
    per_agent = [{"agent": name, "kind": "human", **_robust(agreement.robust_scores(rows))} for name, rows in sorted(humans.items())]
    ai: dict[str, dict[int, tuple[str, float | None, bool | None]]] = defaultdict(dict)
    rows = (
        Response.objects.filter(item_id__in={a.item_id for a in done}, agent__kind=Agent.Kind.AI)
        .values_list("agent__name", "item_id", "item__data__cluster_id", "score", "correct").order_by("created_at", "id")
    )
    for name, item_id, cluster, score, correct in rows:
        ai[name][item_id] = (str(cluster), score, correct)  # latest answer per item
    per_agent += [{"agent": name, "kind": "ai", **_robust(agreement.robust_scores(answers.values()))}
                  for name, answers in sorted(ai.items())]
    return {
        "f1": _mean(f1),
        "accuracy": _share(acc),
        "robust_f1": _mean(robust_f1),
        "robust_accuracy": _share(robust_acc),
        "n_clusters": len(per_cluster),
        "per_agent": per_agent,
    }


def _written(campaign: Campaign, done: list[Assignment]) -> dict[str, Any]:
    scored = [_answer(a) for a in done if _answer(a).score is not None]
    sims = [r.score for r in scored if r.score is not None]
    exact = [_norm(_answer(a).given) == _norm(a.item.data["true_question"]) for a in done]
    return {
        "n_scored": len(scored),
        "n_pending": len(done) - len(scored),
        "mean_similarity": _mean(sims),
        "median_similarity": _median(sims),
        "threshold": campaign.similarity_threshold,
        "share_at_or_above_threshold": _share([s >= campaign.similarity_threshold for s in sims]),
        "exact_matches": sum(exact),
        "exact_match_share": _share(exact),
    }


def _human_vs_ai(done: list[Assignment]) -> list[dict[str, Any]]:
    """For each AI agent with responses to items of this campaign: its accuracy and the annotators'
    accuracy on exactly the same items."""
    human: dict[int, list[bool]] = defaultdict(list)
    for a in done:
        if _answer(a).correct is not None:
            human[a.item_id].append(bool(_answer(a).correct))
    ai_rows = (
        Response.objects.filter(item_id__in=list(human), agent__kind=Agent.Kind.AI, correct__isnull=False)
        .values_list("agent_id", "agent__name", "item_id", "correct", "score")
        .order_by("id")
    )
    per_agent: dict[tuple[int, str], dict[int, tuple[bool, float | None]]] = defaultdict(dict)
    for agent_id, name, item_id, correct, score in ai_rows:
        per_agent[(agent_id, name)][item_id] = (bool(correct), score)  # latest answer per item
    rows = []
    for (_agent_id, name), answers in sorted(per_agent.items(), key=lambda kv: kv[0][1]):
        items = list(answers)
        human_flags = [f for i in items for f in human[i]]
        rows.append({
            "agent": name,
            "n_items": len(items),
            "ai_accuracy": _share([answers[i][0] for i in items]),
            "human_accuracy": _share(human_flags),
            "n_human_answers": len(human_flags),
            "ai_mean_score": _mean([s for c, s in answers.values() if s is not None]),
        })
    return rows


def campaign_stats(campaign: Campaign, now: datetime) -> dict[str, Any]:
    """Everything the manage page and `manage.py agreement C --json` report."""
    task = campaign.task
    assignments = list(
        Assignment.objects.filter(campaign=campaign).select_related("response", "item", "participant__agent")
    )
    done_all = [a for a in assignments if a.state == Assignment.State.DONE and a.response is not None]
    done = [a for a in done_all if a.role == Assignment.Role.POOL]
    gold = [a for a in done_all if a.role == Assignment.Role.GOLD]
    reserved = set(campaign.training_items.values_list("id", flat=True)) | set(campaign.gold_items.values_list("id", flat=True))
    pool_items = list(
        Item.objects.filter(item_set=campaign.item_set, kind=TASK_KIND[task]).exclude(id__in=reserved).order_by("id")
    )
    per_item: dict[int, list[Assignment]] = defaultdict(list)
    for a in done:
        per_item[a.item_id].append(a)
    # practice is counted nowhere: a skipped practice item is no skip (of the campaign or the annotator)
    skipped = [
        a for a in assignments if a.state == Assignment.State.SKIPPED and a.role != Assignment.Role.TRAINING
    ]
    skips: dict[int, list[str]] = defaultdict(list)
    for a in skipped:
        skips[a.item_id].append(a.note)

    participants = list(campaign.participants.select_related("agent").order_by("id"))
    by_participant: dict[int, list[Assignment]] = defaultdict(list)
    gold_by_participant: dict[int, list[Assignment]] = defaultdict(list)
    for a in done:
        by_participant[a.participant_id].append(a)
    for a in gold:
        gold_by_participant[a.participant_id].append(a)

    def accuracy(rows: list[Assignment]) -> float | None:
        return _share([bool(r.correct) for r in _responses(rows) if r.correct is not None])

    # Real answers toward the completion code, as participant_answer_count counts them (for authoring: entries).
    if task == Task.ARCHAEOLOGY_AUTHOR:
        entries = dict(campaign.authored.order_by().values("participant_id").annotate(n=Count("id")).values_list("participant_id", "n"))
        real = {p.id: entries.get(p.id, 0) for p in participants}
    else:
        real = {p.id: len(by_participant[p.id]) for p in participants}
    needed = campaign.min_answers
    annotators = [
        {
            "annotator": p.agent.public_id,
            "answered": len(by_participant[p.id]),
            "real_answers": real[p.id],
            # two different facts: met the minimum for the completion code (the end page showed it), and
            # nothing more to hand out to them (they may still be short of the code)
            "earned_code": real[p.id] >= needed,
            "out_of_items": p.finished_at is not None,
            "finished": p.finished_at is not None,  # the old name of out_of_items, kept for scripts that read it
            "skipped": sum(1 for a in skipped if a.participant_id == p.id),
            "accuracy": accuracy(by_participant[p.id]),
            "mean_score": _mean([r.score for r in _responses(by_participant[p.id]) if r.score is not None]),
            "median_ms": _median([r.duration_ms for r in _responses(by_participant[p.id]) if r.duration_ms is not None]),
            "gold_answered": len(gold_by_participant[p.id]),
            "gold_accuracy": accuracy(gold_by_participant[p.id]),
        }
        for p in participants
    ]
    items = [
        {
            "item": item.external_id,
            "answers": len(per_item[item.id]),
            "accuracy": accuracy(per_item[item.id]),
            "mean_score": _mean([r.score for r in _responses(per_item[item.id]) if r.score is not None]),
            "skips": len(skips[item.id]),
            "flags": [n for n in skips[item.id] if n and n != "skipped"],
        }
        for item in pool_items
    ]
    k = campaign.per_item
    stats: dict[str, Any] = {
        "campaign": campaign.slug,
        "task": task,
        "item_set": campaign.item_set.slug,
        "per_item": k,
        "progress": {
            "pool_items": len(pool_items),
            "target_answers": len(pool_items) * k,
            "answers": len(done),
            "items_complete": sum(1 for i in pool_items if len(per_item[i.id]) >= k),
            "active_leases": sum(1 for a in assignments if a.state == Assignment.State.LEASED and a.expires_at > now),
            "skips": sum(len(v) for v in skips.values()),
            "participants": len(participants),
            "consented": sum(1 for p in participants if p.consented_at),
            "answers_for_code": needed,
            "earned_code": sum(1 for p in participants if real[p.id] >= needed),
            "out_of_items": sum(1 for p in participants if p.finished_at),
            "finished": sum(1 for p in participants if p.finished_at),  # the old name of out_of_items
        },
        "accuracy": accuracy(done),
        "median_ms": _median([r.duration_ms for r in _responses(done) if r.duration_ms is not None]),
        "annotators": annotators,
        "items": items,
        "agreement": _agreement(task, done, per_item=k, pool_items=len(pool_items)),
        "human_vs_ai": _human_vs_ai(done),
    }
    if task == Task.ARCHAEOLOGY_WRITE:
        stats["similarity"] = _written(campaign, done)
    if task == Task.ROMQA_SELECT:
        stats["romqa"] = _romqa(done)
    if task in (Task.ARCHAEOLOGY_CHOOSE, Task.GHIGLIOTTINA_CHOOSE):
        stats["choose"] = _choose(task, done)
    if task == Task.GHIGLIOTTINA_OPEN:
        stats["median_ms_to_solve"] = _median([r.duration_ms for r in _responses(done) if r.correct and r.duration_ms is not None])
    if task == Task.ARCHAEOLOGY_AUTHOR:
        authored = campaign.authored.aggregate(
            total=Count("id"),
            pending=Count("id", filter=Q(status=AuthoredItem.Status.PENDING)),
            approved=Count("id", filter=Q(status=AuthoredItem.Status.APPROVED)),
            rejected=Count("id", filter=Q(status=AuthoredItem.Status.REJECTED)),
        )
        stats["authored"] = authored
        stats["progress"]["authored"] = authored["total"]
    return stats
