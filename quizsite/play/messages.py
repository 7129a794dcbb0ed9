"""Server-to-client messages of PROTOCOL.md, built from room state. Nothing here reveals unread words:
every word list is cut at `room.sent_upto`, and the answer appears only in `tossup_end`."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.conf import settings as django_settings

from quizsite.items.models import Item, Response
from quizsite.judge.render import answerline_html

from .models import ChatMessage, Player, Room
from .room_options import OPTION_DEFAULTS
from .roster import roster_of

Event = dict[str, Any]


def room_settings(room: Room) -> dict[str, Any]:
    return {**django_settings.PLAY_DEFAULTS, **OPTION_DEFAULTS, **room.settings}


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


def scores_event(room: Room, changed: dict[int, int] | None = None) -> Event:
    """After a change of score: every player, best first. `changed` (player id -> new score) is what the
    transition being committed wrote; the leader's roster has the rest, else the rows are read."""
    roster = roster_of(room)
    if roster is not None:
        return {"type": "scores", "players": roster.scores(changed or {})}
    return {"type": "scores", "players": players_payload(room)}


def words_event(room: Room, start: int, stop: int, t: int | None = None) -> Event:
    """Words start..stop-1; `t` is the epoch ms at which word `start` was due by the room's clock."""
    event: Event = {"type": "words", "qid": room.qid, "start": start, "words": current_item(room).data["words"][start:stop]}
    if t is not None:
        event["t"] = t
    return event


def tossup_event(room: Room) -> Event:
    item = current_item(room)
    event: Event = {"type": "tossup", "qid": room.qid, "category": item.category, "n_words": len(item.data["words"])}
    if item.data.get("images"):  # where pictures stand (word indices): no text of the tossup
        event["images"] = item.data["images"]
    return event


def tossup_buzzes(room: Room, pending: Sequence[Response] = ()) -> list[dict[str, Any]]:
    """The buzzes of the current tossup in this room, in order: who, at which word, how it was ruled.
    A prompted buzz is one buzz with its final ruling. Read once, when the tossup ends; `pending`: the
    responses of the transition that ends it, not written yet (play/work.py)."""
    fields = ("agent_id", "word_index", "verdict", "points", "given")
    rows = list(
        Response.objects.filter(item_id=current_item(room).pk, room=room.slug, meta__qid=room.qid)
        .order_by("id")
        .values(*fields)
    )
    rows += [{f: getattr(r, f) for f in fields} for r in pending
             if r.room == room.slug and r.item_id == current_item(room).pk and r.meta.get("qid") == room.qid]
    if not rows:
        return []
    roster = roster_of(room)
    if roster is not None:  # the leader knows its players: no second query
        players = {agent: (pid, roster.players[pid]["name"]) for pid, agent in roster.agents.items()
                   if pid in roster.players}
    else:
        players = {
            agent: (pid, name)
            for agent, pid, name in Player.objects.filter(room=room, agent_id__in={r["agent_id"] for r in rows})
            .values_list("agent_id", "id", "name")
        }
    buzzes: dict[int, dict[str, Any]] = {}
    for r in rows:  # later rows of the same agent (a prompt answered) replace the earlier ruling
        if r["agent_id"] in players:
            pid, name = players[r["agent_id"]]
            buzzes[pid] = {"player_id": pid, "name": name, "word_index": r["word_index"] or 0,
                           "verdict": r["verdict"], "points": r["points"] or 0, "text": r["given"]}
    return sorted(buzzes.values(), key=lambda b: b["word_index"])


def tossup_end_event(room: Room, reason: str, pending: Sequence[Response] = ()) -> Event:
    item = current_item(room)
    return {
        "type": "tossup_end",
        "qid": room.qid,
        "answer": item.answer,
        "answer_html": answerline_html(item.answer),
        "text": item.text,
        "words": item.data["words"],
        "images": item.data.get("images", []),
        "power_index": item.data.get("power_index"),
        "buzzes": tossup_buzzes(room, pending),
        "category": item.category,
        "item_id": item.pk,
        "reason": reason,
        "item_set": item.item_set.slug,
    }


def history_entry(end: Event) -> dict[str, Any]:
    """A tossup_end as the room's history keeps it: small (no text), each buzz with the word it came on."""
    words = end["words"]
    return {
        "qid": end["qid"],
        "item_id": end["item_id"],
        "category": end["category"],
        "answer_html": end["answer_html"],
        "reason": end["reason"],
        "n_words": len(words),
        "buzzes": [{**b, "word": words[b["word_index"] - 1] if 0 < b["word_index"] <= len(words) else ""}
                   for b in end["buzzes"]],
    }


def chat_recent(room: Room, limit: int = 30) -> list[dict[str, Any]]:
    recent = ChatMessage.objects.filter(room=room).select_related("player").order_by("-id")[:limit]
    return [{"player_id": m.player_id, "name": m.player.name, "text": m.text} for m in reversed(recent)]


def hello_state(room: Room, now: datetime, players: list[dict[str, Any]], chat: list[dict[str, Any]],
                history: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """What a joining player needs to show the room: built from the leader's state, cut at what was sent."""
    state: dict[str, Any] = {"players": players, "settings": room_settings(room), "phase": room.phase, "chat": chat,
                             "paused": room.paused, "history": history or []}
    if room.phase != Room.Phase.IDLE and room.item is not None:
        state.update(
            {
                "qid": room.qid,
                "category": room.item.category,
                "n_words": len(room.item.data["words"]),
                "words": room.item.data["words"][: room.sent_upto],
                "images": room.item.data.get("images", []),
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
