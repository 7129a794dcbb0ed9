"""Leases: k per item at most, the least-answered first, never twice to one annotator, expiry to the pool."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from quizsite.agents.models import Agent
from quizsite.annotate.models import Assignment
from quizsite.annotate.services import (
    assignment_current,
    assignment_skip,
    assignment_submit,
    participant_consent,
    participant_get_or_create,
)
from quizsite.annotate.tasks import AnnotateError

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def annotator(campaign, name: str):  # type: ignore[no-untyped-def]
    agent = Agent.objects.create(kind="human", name=name)
    p = participant_get_or_create(campaign=campaign, agent=agent)
    return participant_consent(participant=p, now=T0)


def answer(p, a, now):  # type: ignore[no-untyped-def]
    return assignment_submit(participant=p, assignment_id=a.pk, post={"choice": "0"}, now=now)


def test_no_item_gets_more_than_k_and_fewest_first(make_campaign):
    campaign = make_campaign("ghigliottina-choose", "ghig", per_item=2)  # 4 items, k = 2: 8 answers in all
    people = [annotator(campaign, f"a{i}") for i in range(5)]
    all_items = set(campaign.item_set.items.values_list("id", flat=True))
    counts: Counter[int] = Counter()
    seen: dict[int, set[int]] = {p.pk: set() for p in people}
    for round_ in range(4):
        for p in people:
            a = assignment_current(participant=p, now=T0)
            if a is None:
                continue
            # balance: the item leased has the fewest answers among those this annotator may still get
            open_to_p = [i for i in all_items - seen[p.pk] if counts[i] < 2]
            assert counts[a.item_id] == min(counts[i] for i in open_to_p)
            answer(p, a, T0 + timedelta(seconds=round_))
            counts[a.item_id] += 1
            seen[p.pk].add(a.item_id)
    assert sum(counts.values()) == 8 and set(counts.values()) == {2}
    assert all(assignment_current(participant=p, now=T0) is None for p in people)
    pairs = Assignment.objects.values_list("participant_id", "item_id")
    assert len(pairs) == len(set(pairs))


def test_each_item_waits_for_all_to_have_fewer(make_campaign):
    campaign = make_campaign("ghigliottina-choose", "ghig", per_item=3)
    first = annotator(campaign, "first")
    items = []
    while (a := assignment_current(participant=first, now=T0)) is not None:
        items.append(a.item_id)
        answer(first, a, T0)
    second = annotator(campaign, "second")
    a = assignment_current(participant=second, now=T0)
    assert a.item_id in items  # everything has one answer; no item reaches 2 before others have 1
    answer(second, a, T0)
    third = annotator(campaign, "third")
    b = assignment_current(participant=third, now=T0)
    assert b.item_id != a.item_id  # the item with 2 answers waits while others have 1


def test_lease_expires_back_to_the_pool_and_never_returns_to_its_holder(make_campaign):
    campaign = make_campaign("ghigliottina-choose", "ghig", per_item=1, lease_seconds=60)
    slow, fast = annotator(campaign, "slow"), annotator(campaign, "fast")
    held = assignment_current(participant=slow, now=T0)
    assert assignment_current(participant=slow, now=T0 + timedelta(seconds=30)).pk == held.pk  # resume
    # while the lease runs, nobody else gets that item (k = 1)
    others = set()
    for _ in range(3):
        a = assignment_current(participant=fast, now=T0 + timedelta(seconds=1))
        others.add(a.item_id)
        answer(fast, a, T0 + timedelta(seconds=1))
    assert held.item_id not in others
    assert assignment_current(participant=fast, now=T0 + timedelta(seconds=2)) is None
    # after expiry it goes to someone else; the slow annotator's late answer is refused
    later = T0 + timedelta(seconds=61)
    fast2 = annotator(campaign, "fast2")
    taken = assignment_current(participant=fast2, now=later)
    assert taken.item_id == held.item_id
    answer(fast2, taken, later)
    with pytest.raises(AnnotateError, match="ran out"):
        answer(slow, held, later)
    assert Assignment.objects.get(pk=held.pk).state == "expired"
    assert assignment_current(participant=slow, now=later) is None  # never offered to them again


def test_lapsed_lease_still_counts_while_the_item_has_room(make_campaign):
    campaign = make_campaign("ghigliottina-choose", "ghig", per_item=2, lease_seconds=60)
    p = annotator(campaign, "p")
    a = assignment_current(participant=p, now=T0)
    result = answer(p, a, T0 + timedelta(minutes=5))
    assert result.response.duration_ms == 300000


def test_double_submit_is_refused(make_campaign):
    campaign = make_campaign("ghigliottina-choose", "ghig")
    p = annotator(campaign, "p")
    a = assignment_current(participant=p, now=T0)
    answer(p, a, T0)
    with pytest.raises(AnnotateError, match="already answered"):
        answer(p, a, T0)
    other = annotator(campaign, "other")
    with pytest.raises(AnnotateError, match="not yours"):
        answer(other, a, T0)


def test_skipped_items_stay_open_for_others(make_campaign):
    campaign = make_campaign("ghigliottina-choose", "ghig", per_item=1)
    a_person, b_person = annotator(campaign, "a"), annotator(campaign, "b")
    a = assignment_current(participant=a_person, now=T0)
    assignment_skip(participant=a_person, assignment_id=a.pk, note="", now=T0)
    got = set()
    while (b := assignment_current(participant=b_person, now=T0)) is not None:
        got.add(b.item_id)
        answer(b_person, b, T0)
    assert a.item_id in got and len(got) == 4


def test_gold_items_are_interleaved_and_shown_to_everyone(make_campaign):
    campaign = make_campaign("ghigliottina-choose", "ghig", per_item=1, gold_ids=["g4"])
    campaign.gold_every = 2
    campaign.save()
    people = [annotator(campaign, n) for n in ("a", "b")]
    roles = {p.pk: [] for p in people}
    for p in people:
        while (a := assignment_current(participant=p, now=T0)) is not None:
            roles[p.pk].append((a.role, a.item.external_id))
            answer(p, a, T0)
    # a: pool, pool, gold, pool (3 pool items, k = 1); b gets no pool item but still the attention check
    assert [r for r, _ in roles[people[0].pk]] == ["pool", "pool", "gold", "pool"]
    assert roles[people[1].pk] == [("gold", "g4")]


def test_quota_limits_items_per_annotator(make_campaign):
    campaign = make_campaign("archaeology-choose", "arch", quota=2)
    p = annotator(campaign, "p")
    n = 0
    while (a := assignment_current(participant=p, now=T0)) is not None:
        answer(p, a, T0)
        n += 1
    assert n == 2 and p.__class__.objects.get(pk=p.pk).finished_at is not None


def test_choices_are_shuffled_per_annotator_and_recorded(make_campaign):
    campaign = make_campaign("archaeology-choose", "arch", per_item=40)
    orders: dict[int, set[tuple[str, ...]]] = {}
    for i in range(30):
        a = assignment_current(participant=annotator(campaign, f"x{i}"), now=T0)
        assert sorted(a.choices) == sorted([a.item.data["true_question"], *a.item.data["other_questions"]])
        orders.setdefault(a.item_id, set()).add(tuple(a.choices))
    assert max(len(v) for v in orders.values()) > 1  # the same item in different orders
