"""The leader's copy of who plays in a room, lent to the services so that a transition reads no player row.

A ruling used to read the buzzer's row and then every player's score (for the `scores` event): two
queries that cost more than the ruling's own writes, on the one database thread that every room's
transitions share. The leader (play/actor.py) already holds each player's name and score, updated after
each commit from the `scores` events it publishes, so the services take them from here; without a
roster (a shell, a test) they read the rows as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .models import Player, Room


@dataclass(frozen=True)
class Roster:
    players: dict[int, dict[str, Any]]  # the leader's public entries: id, name, score, bot
    agents: dict[int, int]  # player id -> agent id (never sent to clients)

    def player(self, room: Room, player_id: int) -> Player | None:
        entry, agent_id = self.players.get(player_id), self.agents.get(player_id)
        if entry is None or agent_id is None:
            return None
        return Player(pk=player_id, room=room, agent_id=agent_id, name=entry["name"], score=entry["score"])

    def scores(self, changed: dict[int, int]) -> list[dict[str, Any]]:
        """Every player with their score, `changed` applied (the ruling being committed), best first."""
        rows = [{"id": pid, "name": p["name"], "score": changed.get(pid, p["score"]), "bot": bool(p.get("bot"))}
                for pid, p in self.players.items()]
        return sorted(rows, key=lambda p: (-p["score"], p["id"]))


def roster_of(room: Room) -> Roster | None:
    roster = getattr(room, "roster", None)
    return roster if isinstance(roster, Roster) else None
