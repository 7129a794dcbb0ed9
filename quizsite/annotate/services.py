"""Writes for annotation: campaigns, participants, leases, submissions, authored items, late scoring.

Assignment takes a row lock on the campaign (`select_for_update`) for the few milliseconds it needs to
count who holds what and lease the next unit, so two annotators clicking at the same instant are
served one after the other and no item ever collects more than k answers or leases. On SQLite the
IMMEDIATE transactions configured in settings serialise the same blocks. A unique constraint on
(participant, item) is the last line: an item never goes twice to one annotator.

Crowd workers: a crowd id belongs to the first browser that presents it (`crowd_identity_claim`), and the
completion code needs `Campaign.min_answers` real answers; a skip never counts, nor uses up the quota.
"""

from __future__ import annotations

import hashlib
import hmac
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import Q

from quizsite.agents.models import Agent
from quizsite.items.models import Item, ItemSet, Response
from quizsite.judge import JUDGE_VERSION

from .models import Assignment, AuthoredItem, Campaign, CrowdIdentity, Participant
from .selectors import participant_answer_count
from .tasks import (
    DEFAULT_CONSENT,
    DEFAULT_INSTRUCTIONS,
    TASK_KIND,
    AnnotateError,
    Task,
    choices_for,
    feedback_for,
    group_key,
    submission_judge,
)

ACTIVE = (Assignment.State.LEASED, Assignment.State.DONE)
HANDLED = (Assignment.State.DONE, Assignment.State.SKIPPED)


def ms_between(later: datetime, earlier: datetime) -> int:
    return int((later - earlier).total_seconds() * 1000)


# --- campaigns -------------------------------------------------------------------------------------


def _items_by_ids(item_set: ItemSet, kind: str, ids: Sequence[str], what: str) -> list[Item]:
    ids = [i.strip() for i in ids if i.strip()]
    items = list(Item.objects.filter(item_set=item_set, kind=kind, external_id__in=ids))
    missing = sorted(set(ids) - {i.external_id for i in items})
    if missing:
        raise AnnotateError("bad_items", f"{what} items not in set {item_set.slug}: {', '.join(missing)}")
    return items


@transaction.atomic
def campaign_create(
    *,
    slug: str,
    item_set: ItemSet,
    task: str,
    per_item: int = 3,
    name: str = "",
    instructions: str = "",
    consent_text: str = "",
    quota: int = 0,
    completion_code: str = "",
    completion_url: str = "",
    min_answers: int | None = None,
    lease_seconds: int = 600,
    timer_seconds: int = 60,
    training_ids: Sequence[str] = (),
    gold_ids: Sequence[str] = (),
    created_by: Any = None,
    invite_only: bool = False,
    invited_logins: Sequence[str] = (),
    practice: int = 0,
) -> Campaign:
    """A campaign over one item set; training and gold items are named by external id in that set, and
    `practice` more practice items are drawn from it (`_practice_draw`).

    `min_answers` (real answers before the completion code shows) defaults to the quota, or 1 without one:
    the code is what a crowd platform pays for, so it must cost at least the work the campaign asks for.
    """
    if task not in Task.values:
        raise AnnotateError("bad_task", f"unknown task {task!r}; known: {', '.join(Task.values)}")
    if per_item < 1:
        raise AnnotateError("bad_k", "per-item must be at least 1")
    if min_answers is not None and min_answers < 0:
        raise AnnotateError("bad_min_answers", "min-answers must be 0 or more")
    if practice < 0 or (practice and task == Task.ARCHAEOLOGY_AUTHOR):
        raise AnnotateError("bad_practice", "practice must be 0 or more (and 0 for archaeology-author, which has no items)")
    if slug == "manage" or Campaign.objects.filter(slug=slug).exists():
        raise AnnotateError("slug_taken", f"campaign slug {slug!r} is taken")
    kind = TASK_KIND[task]
    if task != Task.ARCHAEOLOGY_AUTHOR:
        n_items = Item.objects.filter(item_set=item_set, kind=kind).count()
        if not n_items:
            raise AnnotateError("no_items", f"set {item_set.slug} has no {kind} items for the {task} task")
        # A code that needs more real answers than an annotator can be given is never earned (and a crowd
        # platform's participant never paid): the quota, or the set's items less its practice ones.
        reachable = min(quota or n_items, max(0, n_items - practice))
        needed = max(quota, 1) if min_answers is None else min_answers
        if needed > reachable and practice < n_items:  # too many practice items has its own refusal
            raise AnnotateError("bad_min_answers", f"the completion code would need {needed} real answers, but an "
                                f"annotator can give at most {reachable} (items per annotator, or the set's items "
                                "less the practice ones)")
    training = _items_by_ids(item_set, kind, training_ids, "training")
    gold = _items_by_ids(item_set, kind, gold_ids, "gold")
    invited = _users_by_logins(invited_logins)
    campaign = Campaign.objects.create(
        slug=slug,
        name=name or slug,
        item_set=item_set,
        task=task,
        per_item=per_item,
        quota=quota,
        instructions=instructions or DEFAULT_INSTRUCTIONS[task],
        consent_text=consent_text or DEFAULT_CONSENT,
        completion_code=completion_code,
        completion_url=completion_url,
        min_answers=max(quota, 1) if min_answers is None else min_answers,
        lease_seconds=lease_seconds,
        timer_seconds=timer_seconds,
        created_by=created_by,
        invite_only=invite_only,
        practice_count=practice,
    )
    campaign.training_items.set(training)
    campaign.gold_items.set(gold)
    campaign.invited.set(invited)
    if practice:
        campaign.training_items.add(*_practice_draw(campaign, practice))
    return campaign


def _practice_draw(campaign: Campaign, n: int) -> list[int]:
    """N items of the pool, drawn once with the campaign's slug as seed: every annotator practises on the
    same items (their feedback is comparable), and as training items they leave the pool for good, so no
    practice answer ever sits beside a real one. At least one real item must remain."""
    ids = sorted(i for ids in _pool(campaign).values() for i in ids)
    if n >= len(ids):
        raise AnnotateError(
            "bad_practice", f"{n} practice item(s) would leave no real items: set {campaign.item_set.slug} has {len(ids)} to draw from"
        )
    return sorted(random.Random(f"practice:{campaign.slug}").sample(ids, n))


# --- invitations -----------------------------------------------------------------------------------


def _users_by_logins(logins: Sequence[str]) -> list[Any]:
    """Accounts named by username or email (case-insensitive); one unknown name fails them all, by name."""
    User = get_user_model()
    users, missing = [], []
    for login in dict.fromkeys(x.strip() for x in logins if x.strip()):
        user = User.objects.filter(Q(username__iexact=login) | Q(email__iexact=login)).order_by("id").first()
        if user is None:
            missing.append(login)
        else:
            users.append(user)
    if missing:
        raise AnnotateError("unknown_account", f"no account with the username or email: {', '.join(missing)}")
    return users


@transaction.atomic
def campaign_invite(*, campaign: Campaign, logins: Sequence[str], invite_only: bool | None = None) -> int:
    """Invite accounts (by username or email) to a campaign, optionally switching invite-only on or off;
    how many were newly invited. Nothing changes if any name is unknown."""
    users = _users_by_logins(logins)
    before = set(campaign.invited.values_list("pk", flat=True))
    campaign.invited.add(*users)
    if invite_only is not None and invite_only != campaign.invite_only:
        campaign.invite_only = invite_only
        campaign.save(update_fields=["invite_only"])
    return len({u.pk for u in users} - before)


@transaction.atomic
def campaign_uninvite(*, campaign: Campaign, logins: Sequence[str]) -> int:
    """Withdraw invitations; an uninvited account of an invite-only campaign can no longer open its items."""
    users = _users_by_logins(logins)
    before = set(campaign.invited.values_list("pk", flat=True))
    campaign.invited.remove(*users)
    return len({u.pk for u in users} & before)


# --- crowd identities ------------------------------------------------------------------------------


def _browser_hash(browser_token: str) -> str:
    return hashlib.sha256(browser_token.encode()).hexdigest()


def crowd_identity_claim(*, external_id: str, browser_token: str) -> bool:
    """True when the browser holding `browser_token` owns the crowd id (it does from now on if nobody did);
    False when another browser claimed it first. Two browsers racing for a new id: the unique constraint
    lets one win, and the other reads the winner's row."""
    digest = _browser_hash(browser_token)
    try:
        with transaction.atomic():
            identity, _ = CrowdIdentity.objects.get_or_create(external_id=external_id, defaults={"browser_hash": digest})
    except IntegrityError:
        identity = CrowdIdentity.objects.get(external_id=external_id)
    return hmac.compare_digest(identity.browser_hash, digest)


# --- participants ----------------------------------------------------------------------------------


def participant_get_or_create(*, campaign: Campaign, agent: Agent, external_id: str = "", meta: dict | None = None) -> Participant:
    try:
        with transaction.atomic():
            participant, created = Participant.objects.get_or_create(
                campaign=campaign, agent=agent, defaults={"external_id": external_id, "meta": meta or {}}
            )
    except IntegrityError:  # the same person in two tabs
        participant = Participant.objects.get(campaign=campaign, agent=agent)
    return participant


def participant_consent(*, participant: Participant, now: datetime) -> Participant:
    if participant.consented_at is None:
        participant.consented_at = now
        participant.save(update_fields=["consented_at"])
    return participant


# --- assignment ------------------------------------------------------------------------------------


def _lock(campaign: Campaign) -> Campaign:
    return Campaign.objects.select_for_update().get(pk=campaign.pk)


def _expire_stale(campaign: Campaign, now: datetime) -> None:
    Assignment.objects.filter(campaign=campaign, state=Assignment.State.LEASED, expires_at__lte=now).update(
        state=Assignment.State.EXPIRED
    )


def _pool(campaign: Campaign) -> dict[str, list[int]]:
    """Group key -> item ids (in id order), training and gold items left out."""
    reserved = set(campaign.training_items.values_list("id", flat=True)) | set(
        campaign.gold_items.values_list("id", flat=True)
    )
    items = Item.objects.filter(item_set=campaign.item_set, kind=TASK_KIND[campaign.task]).order_by("id")
    if campaign.task == Task.GHIGLIOTTINA_CHOOSE:  # open games (no choices: too few distractors) cannot be chosen
        items = items.exclude(data__choices=None)
    fields = ["id", "data__cluster_id"] if campaign.task == Task.ROMQA_SELECT else ["id"]
    groups: dict[str, list[int]] = {}
    for row in items.values(*fields):
        if row["id"] in reserved:
            continue
        key = group_key(campaign.task, row["id"], {"cluster_id": row.get("data__cluster_id")})
        groups.setdefault(key, []).append(row["id"])
    return groups


def _taken(campaign: Campaign, exclude: Participant | None = None) -> Counter[str]:
    """Per group, how many annotators hold a live lease on it or have answered it."""
    rows = Assignment.objects.filter(campaign=campaign, role=Assignment.Role.POOL, state__in=ACTIVE)
    if exclude is not None:
        rows = rows.exclude(participant=exclude)
    return Counter(group for group, _ in rows.values_list("group", "participant_id").distinct())


def _lease(campaign: Campaign, participant: Participant, items: list[Item], role: str, group: str, now: datetime) -> Assignment:
    position = participant.assignments.count()
    rng = random.Random()
    expires = now + timedelta(seconds=campaign.lease_seconds * len(items))
    created = [
        Assignment.objects.create(
            campaign=campaign,
            participant=participant,
            item=item,
            role=role,
            group=group,
            position=position + i,
            choices=choices_for(campaign.task, item, rng),
            leased_at=now,
            expires_at=expires,
        )
        for i, item in enumerate(items, start=1)
    ]
    return created[0]


def _next_unit(campaign: Campaign, participant: Participant, now: datetime) -> Assignment | None:
    seen = set(participant.assignments.values_list("item_id", flat=True))
    for item in campaign.training_items.order_by("id"):
        if item.id not in seen:
            return _lease(campaign, participant, [item], Assignment.Role.TRAINING, f"item:{item.id}", now)

    handled = participant.assignments.filter(role=Assignment.Role.POOL, state__in=HANDLED).count()
    answered = participant_answer_count(participant)
    gold_left = [g for g in campaign.gold_items.order_by("id") if g.id not in seen]
    gold_shown = campaign.gold_items.count() - len(gold_left)
    if gold_left and handled >= (gold_shown + 1) * max(campaign.gold_every, 1):
        return _lease(campaign, participant, [gold_left[0]], Assignment.Role.GOLD, f"item:{gold_left[0].id}", now)

    quota_left = not campaign.quota or answered < campaign.quota  # a skipped item is replaced, not counted
    if quota_left:
        seen_groups = set(participant.assignments.values_list("group", flat=True))
        taken = _taken(campaign)
        open_groups = [
            (taken[key], key, ids) for key, ids in _pool(campaign).items()
            if key not in seen_groups and taken[key] < campaign.per_item
        ]
        if open_groups:
            fewest = min(count for count, _, _ in open_groups)
            _, key, ids = random.choice([g for g in open_groups if g[0] == fewest])
            return _lease(campaign, participant, list(Item.objects.filter(id__in=ids).order_by("id")), Assignment.Role.POOL, key, now)

    if gold_left:  # every annotator sees every attention check, even when the pool ran dry early
        return _lease(campaign, participant, [gold_left[0]], Assignment.Role.GOLD, f"item:{gold_left[0].id}", now)
    return None


def assignment_current(*, participant: Participant, now: datetime) -> Assignment | None:
    """The item this annotator should see now: their live lease, else a newly leased one; None when done.

    A reload returns the same lease (same choice order, same start time), so an annotator resumes where
    they left off; a lease left to expire returns its item to the pool and is never offered to them again.
    An annotator who ran out of items short of the campaign's minimum of answers looks again on each visit
    (items come back when others' leases lapse) and is no longer finished once one is found.
    """
    campaign = participant.campaign
    with transaction.atomic():
        _lock(campaign)
        _expire_stale(campaign, now)
        current = (
            participant.assignments.filter(state=Assignment.State.LEASED).select_related("item").order_by("position").first()
        )
        finished = participant.finished_at is not None
        short = finished and current is None and participant_answer_count(participant) < campaign.min_answers
        if current is None and campaign.is_open and (not finished or short):
            current = _next_unit(campaign, participant, now)
            if (current is None) != finished:
                participant.finished_at = now if current is None else None
                participant.save(update_fields=["finished_at"])
        if current is not None and current.served_at is None:
            current.served_at = now
            current.save(update_fields=["served_at"])
    return current


@dataclass
class Submitted:
    response: Response | None
    feedback: dict[str, Any] | None  # training items only


def _claim(participant: Participant, assignment_id: int, now: datetime) -> Assignment:
    """The annotator's own lease, still valid; a lapsed lease still counts while its group has room."""
    campaign = participant.campaign
    try:
        assignment = (
            Assignment.objects.select_for_update().select_related("item").get(pk=assignment_id, participant=participant)
        )
    except (Assignment.DoesNotExist, ValueError, TypeError):
        raise AnnotateError("unknown", "That item is not yours to answer.") from None
    if assignment.state in HANDLED:
        raise AnnotateError("answered", "That item was already answered.")
    lapsed = assignment.state == Assignment.State.EXPIRED or assignment.expires_at <= now
    if lapsed and assignment.role == Assignment.Role.POOL:
        others = Assignment.objects.filter(
            campaign=campaign, role=Assignment.Role.POOL, group=assignment.group, state__in=ACTIVE
        ).exclude(participant=participant).filter(Q(state=Assignment.State.DONE) | Q(expires_at__gt=now))
        if others.values("participant_id").distinct().count() >= campaign.per_item:
            Assignment.objects.filter(pk=assignment.pk).update(state=Assignment.State.EXPIRED)
            raise AnnotateError("expired", "Time for that item ran out and others have answered it; here is a new one.")
    return assignment


def _renew_group(assignment: Assignment, now: datetime) -> None:
    """Items of a cluster still waiting get a fresh lease each time one of them is answered."""
    rest = Assignment.objects.filter(
        participant=assignment.participant, group=assignment.group, state=Assignment.State.LEASED
    ).exclude(pk=assignment.pk)
    n = rest.count()
    if n:
        rest.update(expires_at=now + timedelta(seconds=assignment.campaign.lease_seconds * n))


def assignment_submit(*, participant: Participant, assignment_id: int, post: Mapping[str, Any], now: datetime) -> Submitted:
    """Judge the answer and write it as one responses row (source "annotation"), timed by the server."""
    campaign = participant.campaign
    with transaction.atomic():
        _lock(campaign)
        assignment = _claim(participant, assignment_id, now)
        started = assignment.served_at or assignment.leased_at
        elapsed = ms_between(now, started)
        judged = submission_judge(
            campaign.task, assignment.item, assignment.choices, post, elapsed_ms=elapsed, timer_s=campaign.timer_seconds
        )
        response = Response.objects.create(
            agent=participant.agent,
            item=assignment.item,
            source=Response.Source.ANNOTATION,
            given=judged.given,
            choices=assignment.choices,
            verdict=judged.verdict,
            correct=judged.correct,
            score=judged.score,
            duration_ms=elapsed,
            judge_version=JUDGE_VERSION if campaign.task == Task.GHIGLIOTTINA_OPEN else "",
            meta={
                "campaign": campaign.slug, "task": campaign.task, "role": assignment.role, **judged.meta,
                # practice answers are kept but left out of statistics, completion and exports' default
                **({"practice": True} if assignment.role == Assignment.Role.TRAINING else {}),
            },
        )
        assignment.state = Assignment.State.DONE
        assignment.done_at = now
        assignment.response = response
        assignment.save(update_fields=["state", "done_at", "response"])
        _renew_group(assignment, now)
    feedback = feedback_for(campaign.task, assignment.item, judged) if assignment.role == Assignment.Role.TRAINING else None
    return Submitted(response=response, feedback=feedback)


# The skip-or-flag box's reasons: value -> what the annotator reads. Stats list any note but "skipped" as a flag.
SKIP_REASONS: dict[str, str] = {
    "skip": "I cannot answer it: skip",
    "unclear": "Flag: the item is unclear",
    "wrong": "Flag: the item is wrong or broken",
}
_REASON_NOTES = {"skip": "", "unclear": "flag: unclear", "wrong": "flag: wrong or broken"}


def skip_note(*, reason: str, note: str) -> str:
    """The stored note: the reason's flag (an unknown reason counts as a plain skip) and the annotator's words."""
    return "; ".join(part for part in (_REASON_NOTES.get(reason, ""), note.strip()) if part)


def assignment_skip(*, participant: Participant, assignment_id: int, note: str, now: datetime) -> None:
    """Skip or flag an item: no answer is recorded, the item stays open for others, the note is kept."""
    with transaction.atomic():
        _lock(participant.campaign)
        assignment = _claim(participant, assignment_id, now)
        assignment.state = Assignment.State.SKIPPED
        assignment.done_at = now
        assignment.note = note.strip()[:500] or "skipped"
        assignment.save(update_fields=["state", "done_at", "note"])
        _renew_group(assignment, now)


# --- archaeology-author ----------------------------------------------------------------------------


def authored_submit(
    *, participant: Participant, question: str, text: str, other_1: str, other_2: str, duration_ms: int | None
) -> AuthoredItem:
    fields = {"question": question, "text": text, "other question 1": other_1, "other question 2": other_2}
    clean = {k: " ".join(str(v or "").split()) if k != "text" else str(v or "").strip() for k, v in fields.items()}
    empty = [k for k, v in clean.items() if not v]
    if empty:
        raise AnnotateError("empty", f"Fill in the {empty[0]}.")
    if len({clean["question"].lower(), clean["other question 1"].lower(), clean["other question 2"].lower()}) < 3:
        raise AnnotateError("same", "The three questions must differ.")
    with transaction.atomic():
        return AuthoredItem.objects.create(
            campaign=participant.campaign,
            participant=participant,
            question=clean["question"][:2000],
            text=clean["text"][:20000],
            other_question_1=clean["other question 1"][:2000],
            other_question_2=clean["other question 2"][:2000],
            duration_ms=duration_ms,
        )


def authored_finish_if_done(*, participant: Participant, now: datetime) -> bool:
    """Finished after the quota of entries, and never before the campaign's minimum for the code."""
    campaign = participant.campaign
    target = max(campaign.quota, campaign.min_answers, 1)
    if participant.authored.count() >= target and participant.finished_at is None:
        participant.finished_at = now
        participant.save(update_fields=["finished_at"])
    return participant.finished_at is not None


def authored_review(*, authored: AuthoredItem, approve: bool, user: Any, note: str = "", now: datetime) -> Item | None:
    """Approving makes the entry an archaeology item of the campaign's set (external id `authored-<id>`)."""
    with transaction.atomic():
        authored = AuthoredItem.objects.select_for_update().select_related("campaign", "participant__agent").get(pk=authored.pk)
        if authored.status != AuthoredItem.Status.PENDING:
            raise AnnotateError("reviewed", "This entry was already reviewed.")
        item = None
        if approve:
            item = Item.objects.create(
                item_set=authored.campaign.item_set,
                external_id=f"authored-{authored.pk}",
                kind=Item.Kind.ARCHAEOLOGY,
                text=authored.text,
                answer=authored.question,
                data={
                    "true_question": authored.question,
                    "other_questions": [authored.other_question_1, authored.other_question_2],
                    "author": authored.participant.agent.public_id,
                    "authored_in": authored.campaign.slug,
                },
            )
        authored.status = AuthoredItem.Status.APPROVED if approve else AuthoredItem.Status.REJECTED
        authored.item = item
        authored.reviewed_by = user
        authored.reviewed_at = now
        authored.review_note = note[:500]
        authored.save()
    return item


# --- archaeology-write: similarity, after the fact -------------------------------------------------


def written_score(*, campaign: Campaign, source: Any = None) -> int:
    """Score written questions not yet scored: cosine similarity to the true question, correct at or above
    the campaign's threshold. The row was written unjudged (score null), so this completes it once and
    never rewrites a judgement."""
    from quizsite.items.vectors import SentenceVectors, text_similarity

    pending = list(
        Response.objects.filter(annotation_assignment__campaign=campaign, score__isnull=True, source=Response.Source.ANNOTATION)
        .select_related("item")
    )
    if not pending:
        return 0
    source = source or SentenceVectors()
    sims = text_similarity([(r.given, r.item.data["true_question"]) for r in pending], source)
    with transaction.atomic():
        for response, sim in zip(pending, sims, strict=True):
            Response.objects.filter(pk=response.pk, score__isnull=True).update(
                score=sim,
                correct=sim >= campaign.similarity_threshold,
                meta={**response.meta, "similarity_source": source.name, "threshold": campaign.similarity_threshold},
            )
    return len(pending)
