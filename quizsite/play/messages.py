"""Server-to-client messages of PROTOCOL.md, built from room state. Nothing here reveals unread words:
every word list is cut at `room.sent_upto`, and the answer appears only in `tossup_end`."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings as django_settings

from quizsite.items.models import Item

from .models import ChatMessage, Player, Room

Event = dict[str, Any]


def room_settings(room: Room) -> dict[str, Any]:
    return {**django_settings.PLAY_DEFAULTS, **room.settings}


def ms_between(later: datetime, earlier: datetime | None) -> int:
    if earlier is None:
        return 0
    return int((later - earlier).total_seconds() * 1000)


def current_item(room: Room) -> Item:
    """The tossup being read; only called while one is (phase reading or buzzed, or just ended)."""
    if room.item is None:
        raise ValueError(f"room {room.slug} has no current tossup")
    return room.item


def players_payload(room: Room) -> list[dict[str, Any]]:
    return [
        {"id": p["id"], "name": p["name"], "score": p["score"], "bot": p["agent__kind"] == "ai"}
        for p in Player.objects.filter(room=room).order_by("-score", "id").values("id", "name", "score", "agent__kind")
    ]


def scores_event(room: Room) -> Event:
    return {"type": "scores", "players": players_payload(room)}


def words_event(room: Room, start: int, stop: int, t: int | None = None) -> Event:
    """Words start..stop-1; `t` is the epoch ms at which word `start` was due by the room's clock."""
    event: Event = {"type": "words", "qid": room.qid, "start": start, "words": current_item(room).data["words"][start:stop]}
    if t is not None:
        event["t"] = t
    return event


def tossup_event(room: Room) -> Event:
    item = current_item(room)
    return {"type": "tossup", "qid": room.qid, "category": item.category, "n_words": len(item.data["words"])}


def tossup_end_event(room: Room, reason: str) -> Event:
    item = current_item(room)
    return {
        "type": "tossup_end",
        "qid": room.qid,
        "answer": item.answer,
        "text": item.text,
        "reason": reason,
        "item_set": item.item_set.slug,
    }


def chat_recent(room: Room, limit: int = 30) -> list[dict[str, Any]]:
    recent = ChatMessage.objects.filter(room=room).select_related("player").order_by("-id")[:limit]
    return [{"player_id": m.player_id, "name": m.player.name, "text": m.text} for m in reversed(recent)]


def hello_state(room: Room, now: datetime, players: list[dict[str, Any]], chat: list[dict[str, Any]]) -> dict[str, Any]:
    """What a joining player needs to show the room: built from the leader's state, cut at what was sent."""
    state: dict[str, Any] = {"players": players, "settings": room_settings(room), "phase": room.phase, "chat": chat}
    if room.phase != Room.Phase.IDLE and room.item is not None:
        state.update(
            {
                "qid": room.qid,
                "category": room.item.category,
                "n_words": len(room.item.data["words"]),
                "words": room.item.data["words"][: room.sent_upto],
                "buzz": None,
                "locked_out": list(room.locked_out),
            }
        )
        if room.phase == Room.Phase.BUZZED and room.buzz_player_id and room.buzz_deadline:
            state["buzz"] = {
                "player_id": room.buzz_player_id,
                "word_index": room.buzz_word_index,
                "deadline_ms": max(0, ms_between(room.buzz_deadline, now)),
                "prompted": room.buzz_prompts > 0,
            }
    return state
