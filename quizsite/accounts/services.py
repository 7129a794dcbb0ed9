"""Writes for accounts: a guest's history joins their account, API tokens, account deletion.

Every row that names an Agent is listed here by hand (`MERGED_RELATIONS`; a test fails when a model gains
a relation to Agent that the merge does not know about), because each has its own rule for a clash: two
players of one room, two participants of one campaign, two answers to one annotation item.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F
from rest_framework.authtoken.models import Token

from quizsite.agents.models import Agent
from quizsite.annotate.models import Assignment, AuthoredItem, Participant
from quizsite.items.models import Response, ResponseOverride, RulingReport
from quizsite.play.hub import rooms_players_reload
from quizsite.play.models import ChatMessage, Player, Room

# (model label, field) of every relation to Agent; research.FitAgent is a fit's snapshot and keeps the
# guest's public id as its key (its agent link is set to null when the guest Agent goes).
MERGED_RELATIONS = {
    ("items.response", "agent"),
    ("items.rulingreport", "reporter"),
    ("play.player", "agent"),
    ("annotate.participant", "agent"),
    ("research.fitagent", "agent"),
    # An AI agent version's own Agent row: never a guest (guests are made by a browser session's key), so
    # the merge has nothing to move; listed so that the test still catches a relation nobody thought about.
    ("agents.agentversion", "agent"),
}


class AccountError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class MergeResult:
    agent: Agent
    responses: int = 0
    players: int = 0
    participants: int = 0
    assignments: int = 0
    # guest participant id -> the account's participant id, for sessions that remember the guest's
    participant_ids: dict[int, int] = field(default_factory=dict)


def agent_merge_guest_into_user(*, user: User, guest_key: str) -> MergeResult | None:
    """Give the account the guest's history (responses, room players and scores, annotation participation
    and assignments, ruling reports), in one transaction; None when the key names no unclaimed guest.

    Without an Agent of its own the account simply takes the guest's (same public id, nothing moves).
    With one, the guest's rows move to it and the guest Agent is deleted: one person, one Agent.
    """
    with transaction.atomic():
        guest = Agent.objects.select_for_update().filter(guest_key=guest_key, user__isnull=True).first()
        if guest is None:
            return None
        account = Agent.objects.select_for_update().filter(user=user).first()
        if account is None:
            guest.user = user
            guest.guest_key = None
            guest.name = user.get_username()
            guest.save(update_fields=["user", "guest_key", "name"])
            return MergeResult(
                agent=guest,
                responses=Response.objects.filter(agent=guest).count(),
                players=Player.objects.filter(agent=guest).count(),
                participants=Participant.objects.filter(agent=guest).count(),
                assignments=Assignment.objects.filter(participant__agent=guest).count(),
            )
        result = MergeResult(agent=account)
        result.responses = Response.objects.filter(agent=guest).update(agent=account)
        _merge_reports(guest, account)
        rooms = _merge_players(guest, account)
        result.players = len(rooms)
        # the rooms' leaders keep their players in memory: told after the commit, they read them again
        transaction.on_commit(lambda: rooms_players_reload(room_ids=rooms))
        _merge_participants(guest, account, result)
        guest.delete()
        return result


def _merge_reports(guest: Agent, account: Agent) -> None:
    already = RulingReport.objects.filter(reporter=account).values("response_id")
    RulingReport.objects.filter(reporter=guest, response_id__in=already).delete()
    RulingReport.objects.filter(reporter=guest).update(reporter=account)


def _merge_players(guest: Agent, account: Agent) -> list[int]:
    """A room both played in keeps the account's player with both scores added; the guest's chat lines
    and a buzz it holds go to that player, and a lock-out on the guest's id holds for it. The rooms."""
    moved: list[int] = []
    for player in Player.objects.select_related("room").filter(agent=guest):
        kept = Player.objects.filter(room=player.room, agent=account).first()
        if kept is None:
            player.agent = account
            player.save(update_fields=["agent"])
        else:
            Player.objects.filter(pk=kept.pk).update(score=F("score") + player.score)
            ChatMessage.objects.filter(player=player).update(player=kept)
            Room.objects.filter(buzz_player=player).update(buzz_player=kept)
            room = Room.objects.select_for_update().get(pk=player.room_id)
            if player.pk in room.locked_out:
                room.locked_out = sorted({kept.pk if p == player.pk else p for p in room.locked_out})
                room.save(update_fields=["locked_out"])
            player.delete()
        moved.append(player.room_id)
    return moved


def _merge_participants(guest: Agent, account: Agent, result: MergeResult) -> None:
    """A campaign both took part in keeps the account's participant. An item both were given keeps the
    answered assignment (the account's if both answered: the guest's answer stays in the responses table,
    now the account's, but counts once in the campaign, as one annotator's answer should)."""
    for participant in Participant.objects.filter(agent=guest):
        kept = Participant.objects.filter(campaign_id=participant.campaign_id, agent=account).first()
        if kept is None:
            participant.agent = account
            participant.save(update_fields=["agent"])
            result.participants += 1
            result.assignments += participant.assignments.count()
            continue
        theirs = {a.item_id: a for a in kept.assignments.all()}
        for assignment in participant.assignments.all():
            other = theirs.get(assignment.item_id)
            if other is not None:
                if other.state == Assignment.State.DONE or assignment.state != Assignment.State.DONE:
                    assignment.delete()
                    continue
                other.delete()
            assignment.participant = kept
            assignment.save(update_fields=["participant"])
            result.assignments += 1
        AuthoredItem.objects.filter(participant=participant).update(participant=kept)
        updates = []
        if participant.consented_at and (
            kept.consented_at is None or participant.consented_at < kept.consented_at
        ):
            kept.consented_at = participant.consented_at
            updates.append("consented_at")
        if kept.finished_at is None and participant.finished_at is not None:
            kept.finished_at = participant.finished_at
            updates.append("finished_at")
        if updates:
            kept.save(update_fields=updates)
        result.participant_ids[participant.pk] = kept.pk
        participant.delete()
        result.participants += 1


# --- API tokens ------------------------------------------------------------------------------------------


def api_token_create(*, user: User) -> Token:
    """A new API key for the account, replacing any old one (the old key stops working at once)."""
    with transaction.atomic():
        Token.objects.filter(user=user).delete()
        return Token.objects.create(user=user)


def api_token_revoke(*, user: User) -> bool:
    """Delete the account's API key; False if it had none."""
    deleted, _ = Token.objects.filter(user=user).delete()
    return bool(deleted)


# --- deleting an account ---------------------------------------------------------------------------------


DELETED_PLAYER = "(deleted)"


def account_delete(*, user: User) -> Agent | None:
    """Delete the account; its answers stay, as the consent says: under the pseudonymous Agent, whose link
    to the account is removed and whose name is blanked (room player names too). Refused while the account
    has overruled rulings, since the record of who overruled must stay (an administrator can reassign them)."""
    with transaction.atomic():
        if ResponseOverride.objects.filter(by=user).exists():
            raise AccountError(
                "has_overrides",
                "This account has overruled rulings, and the record of who overruled must stay. "
                "Ask an administrator to delete the account.",
            )
        agent = Agent.objects.select_for_update().filter(user=user).first()
        if agent is not None:
            agent.user = None
            agent.name = ""
            agent.guest_key = None
            agent.save(update_fields=["user", "name", "guest_key"])
            Player.objects.filter(agent=agent).update(name=DELETED_PLAYER)
        user.delete()
        return agent
