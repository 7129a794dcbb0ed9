"""A guest who signs up or signs in keeps the guest's history: responses, room players and scores,
annotation participation and assignments move to the account in one transaction, and one Agent remains."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.db import models
from django.test import Client

from quizsite.accounts.services import MERGED_RELATIONS, agent_merge_guest_into_user
from quizsite.agents.models import Agent
from quizsite.agents.services import agent_get_or_create_for_user, agent_get_or_create_guest
from quizsite.annotate.models import Assignment, Participant
from quizsite.items.models import Response, RulingReport
from quizsite.play.models import ChatMessage, Player, Room
from tests.accounts.conftest import annotate_one, sign_in, sign_up, signed_in_as


def guest_who_played(client: Client, tossups, room: str = "r1", score: int = 15) -> Agent:  # type: ignore[no-untyped-def]
    """A guest as the play room makes one: the key the room page put in the session, a player, a buzz."""
    assert client.get(f"/play/{room}/").status_code == 200
    guest = agent_get_or_create_guest(guest_key=client.session["guest_key"], name="Ada")
    player = Player.objects.create(
        room=Room.objects.get_or_create(slug=room)[0], agent=guest, name="Ada", score=score
    )
    ChatMessage.objects.create(room=player.room, player=player, text="hello")
    Response.objects.create(
        agent=guest,
        item=tossups[0],
        source="live",
        given="answer 0",
        verdict="accept",
        correct=True,
        points=15,
        word_index=5,
        n_words=20,
        room=room,
    )
    return guest


def test_every_relation_to_agent_is_known_to_the_merge():
    """A model that gains a link to Agent must be taught to the merge (and added to MERGED_RELATIONS)."""
    found = set()
    for model in apps.get_models():
        for f in model._meta.get_fields():
            if (
                isinstance(f, models.ForeignKey | models.OneToOneField)
                and not f.auto_created
                and f.related_model is Agent
            ):
                found.add((model._meta.label_lower, f.name))
    assert found == MERGED_RELATIONS


def test_a_guest_who_signs_up_keeps_responses_score_and_annotations(client, tossups, campaign):
    guest = guest_who_played(client, tossups)
    assignment_id = annotate_one(client)
    assert sign_up(client, "ada").status_code == 302
    user = get_user_model().objects.get(username="ada")
    agent = Agent.objects.get(user=user)
    assert agent.pk == guest.pk and agent.guest_key is None  # the guest's Agent became the account's
    assert agent.public_id == guest.public_id and agent.name == "ada"
    assert Response.objects.filter(agent=agent, source="live").count() == 1
    assert Response.objects.filter(agent=agent, source="annotation").count() == 1
    assert Player.objects.get(agent=agent).score == 15
    assert Assignment.objects.get(pk=assignment_id).participant.agent == agent
    assert "guest_key" not in client.session
    # the annotator carries on in the same campaign, from the next item
    page = client.get("/annotate/c/item/")
    assert page.status_code == 200 and page.context["assignment"].pk != assignment_id
    assert page.context["progress"]["done"] == 1


def test_signing_in_to_an_account_with_its_own_history_merges_both(client, tossups, campaign):
    # The account played in room r1 and took part in the campaign, from another browser.
    other = Client()
    sign_up(other, "ada")
    user = get_user_model().objects.get(username="ada")
    account = agent_get_or_create_for_user(user=user)
    kept_player = Player.objects.create(
        room=Room.objects.create(slug="r1"), agent=account, name="ada", score=10
    )
    Response.objects.create(
        agent=account, item=tossups[1], source="live", correct=False, word_index=3, n_words=20, room="r1"
    )
    account_assignment = annotate_one(other)
    # The same person as a guest in this browser: the same room, another room, the same campaign.
    guest = guest_who_played(client, tossups, room="r1", score=15)
    Player.objects.create(room=Room.objects.create(slug="r2"), agent=guest, name="Ada", score=20)
    Room.objects.filter(slug="r1").update(locked_out=[Player.objects.get(room__slug="r1", agent=guest).pk])
    RulingReport.objects.create(
        response=Response.objects.get(agent=guest), reporter=guest, comment="I was right"
    )
    guest_assignment = annotate_one(client)
    guest_item = Assignment.objects.get(pk=guest_assignment).item_id
    guest_pk = guest.pk

    assert sign_in(client, "ada").status_code == 302 and signed_in_as(client) == "ada"

    assert not Agent.objects.filter(pk=guest_pk).exists()
    assert Agent.objects.filter(user=user).count() == 1
    assert Response.objects.filter(agent=account).count() == 4  # two buzzes, two annotation answers
    players = {p.room.slug: p for p in Player.objects.filter(agent=account)}
    assert set(players) == {"r1", "r2"} and players["r1"].pk == kept_player.pk
    assert players["r1"].score == 25 and players["r2"].score == 20
    assert ChatMessage.objects.get(text="hello").player_id == kept_player.pk
    assert Room.objects.get(slug="r1").locked_out == [kept_player.pk]
    assert RulingReport.objects.get().reporter == account
    participant = Participant.objects.get(campaign=campaign, agent=account)
    kept_answer = Assignment.objects.get(pk=account_assignment)
    assert kept_answer.participant == participant
    clash = guest_item == kept_answer.item_id
    assert Assignment.objects.filter(pk=guest_assignment).exists() is not clash
    if clash:  # both were given the same item: the account's answer is the one the campaign counts
        assert Response.objects.filter(agent=account, source="annotation", item=kept_answer.item).count() == 2
    else:
        assert Assignment.objects.get(pk=guest_assignment).participant == participant
    assert Participant.objects.filter(campaign=campaign).count() == 1
    # the session now names the kept participant, so annotation resumes rather than asking consent again
    page = client.get("/annotate/c/item/")
    assert (
        page.status_code == 200
        and page.context["progress"]["done"] == participant.assignments.filter(state="done").count()
    )


def test_a_clash_on_one_annotation_item_keeps_the_answered_assignment(tossups, campaign):
    from datetime import timedelta

    from django.utils import timezone

    user = get_user_model().objects.create_user("ada")
    account = agent_get_or_create_for_user(user=user)
    guest = agent_get_or_create_guest(guest_key="k1", name="guest")
    now = timezone.now()
    item = campaign.item_set.items.first()
    mine = Participant.objects.create(campaign=campaign, agent=account, consented_at=now)
    theirs = Participant.objects.create(campaign=campaign, agent=guest, consented_at=now - timedelta(days=1))
    leased = Assignment.objects.create(
        campaign=campaign,
        participant=mine,
        item=item,
        group="g",
        position=0,
        leased_at=now,
        expires_at=now + timedelta(minutes=5),
    )
    answer = Response.objects.create(agent=guest, item=item, source="annotation", correct=True)
    done = Assignment.objects.create(
        campaign=campaign,
        participant=theirs,
        item=item,
        group="g",
        position=0,
        state="done",
        leased_at=now,
        expires_at=now,
        done_at=now,
        response=answer,
    )
    result = agent_merge_guest_into_user(user=user, guest_key="k1")
    assert result is not None and result.participant_ids == {theirs.pk: mine.pk}
    assert not Assignment.objects.filter(pk=leased.pk).exists()
    done.refresh_from_db()
    assert done.participant_id == mine.pk and done.response.agent == account
    mine.refresh_from_db()
    assert mine.consented_at == now - timedelta(days=1)  # the earlier consent


def test_the_merge_is_all_or_nothing(tossups, monkeypatch):
    user = get_user_model().objects.create_user("ada")
    account = agent_get_or_create_for_user(user=user)
    guest = agent_get_or_create_guest(guest_key="k1", name="guest")
    Response.objects.create(
        agent=guest, item=tossups[0], source="live", correct=True, word_index=2, n_words=20
    )
    Player.objects.create(room=Room.objects.create(slug="r1"), agent=guest, name="g", score=5)

    from quizsite.accounts import services

    def boom(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("disk full")

    monkeypatch.setattr(services, "_merge_participants", boom)
    with pytest.raises(RuntimeError):
        agent_merge_guest_into_user(user=user, guest_key="k1")
    assert Response.objects.get().agent_id == guest.pk and Player.objects.get().agent_id == guest.pk
    assert Agent.objects.filter(pk__in=[guest.pk, account.pk]).count() == 2


def test_a_claimed_or_unknown_guest_key_moves_nothing(db):
    user = get_user_model().objects.create_user("ada")
    assert agent_merge_guest_into_user(user=user, guest_key="nobody") is None
    other = get_user_model().objects.create_user("bob")
    claimed = agent_get_or_create_guest(guest_key="k2", name="g")
    Agent.objects.filter(pk=claimed.pk).update(user=other)
    assert agent_merge_guest_into_user(user=user, guest_key="k2") is None
    assert Agent.objects.get(pk=claimed.pk).user == other
