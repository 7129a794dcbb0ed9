"""Which process leads a room, and who is in it: both are leases in the database.

A room's leader (play/actor.py) holds `driver` (its hub's channel) until `driver_until`, renewing it
while it leads; another process takes a room whose lease lapsed. A player is online while some process
marks them seen (`last_seen`) every few seconds. Neither depends on a clean-up that may never run.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from django.db import connection, transaction
from django.db.models import Q

from .models import Player, Room
from .services import PlayError, settings_clean
from .work import room_save_fenced

PRESENCE_TTL = timedelta(seconds=15)  # a player nobody's process marked as seen for this long is offline


def room_take(*, slug: str, driver: str, now: datetime, lease: timedelta,
              initial_settings: dict[str, Any] | None = None) -> Room | None:
    """Make the room if it is new and lead it if nobody does (or the leader's lease lapsed): the room,
    loaded for its new leader, or None when another process leads it.

    A tossup that was being read resumes from the last word the lease recorded, re-anchored now: the
    words of the gap are read at the room's pace, not thrown at the players in one burst."""
    result = rooms_take(requests=[(slug, initial_settings)], driver=driver, now=now, lease=lease)[0]
    if isinstance(result, PlayError):
        raise result
    return result


def rooms_take(*, requests: Sequence[tuple[str, dict[str, Any] | None]], driver: str, now: datetime,
               lease: timedelta, create: bool = True) -> list[Room | PlayError | None]:
    """`room_take` for several rooms in one transaction of a few statements, one result per request:
    the room, None when another process leads it (or, with `create` off, when it does not exist yet),
    or the PlayError of settings that are refused.

    Why: fifty rooms' first players arriving together took their rooms one after another, about ten
    round trips each on the lease thread, and the rooms' joins waited on it (2.4 s of takes in
    `benchmarks/ws_load.py --profile services --cases 50x10`). Rows are locked in id order, so two
    processes taking overlapping rooms wait for each other instead of deadlocking."""
    results: dict[str, Room | PlayError | None] = {}
    with transaction.atomic():
        slugs = list(dict.fromkeys(slug for slug, _ in requests))
        existing = set(Room.objects.filter(slug__in=slugs).values_list("slug", flat=True))
        new = []
        for slug, initial in requests:
            if slug in existing or slug in results:
                continue
            results[slug] = None
            if not create:
                continue
            try:
                new.append(Room(slug=slug, settings=settings_clean(initial) if initial else {}))
            except PlayError as exc:
                results[slug] = exc
        Room.objects.bulk_create(new, ignore_conflicts=True)  # another process may make the same room now
        wanted = [slug for slug in slugs if not isinstance(results.get(slug), PlayError)]
        free = Q(driver="") | Q(driver=driver) | Q(driver_until__isnull=True) | Q(driver_until__lt=now)
        ids = list(Room.objects.select_for_update().filter(slug__in=wanted).filter(free)
                   .exclude(driver=driver, driver_until__gte=now)  # ours already: nothing to take over
                   .order_by("id").values_list("id", flat=True))
        Room.objects.filter(id__in=ids).update(driver=driver, driver_until=now + lease)
        for room in Room.objects.select_related("item", "item__item_set").filter(slug__in=wanted, driver=driver):
            if room.pk in ids and room.phase == Room.Phase.READING and room.item is not None and not room.paused:
                room.reveal_base, room.reveal_anchor = room.sent_upto, now  # see room_take
                room_save_fenced(room, ("reveal_base", "reveal_anchor"))
            results[room.slug] = room
    return [results.get(slug) for slug, _ in requests]


def _rooms_renew_sqlite(*, rooms: list[Room], driver: str, now: datetime, lease: timedelta) -> dict[str, bool | None]:
    """SQLite: one writer at a time, so no row is ever locked by another of our writes; this runs on the
    database thread inside the lease pass's transaction (hub._lease_pass). One read of the rows still
    ours, then one prepared UPDATE run for each of them by sqlite3 itself: an ORM UPDATE per room (the
    query compiled fifty times every half second with fifty rooms) was 8% of the process while their
    players joined, on the thread the joins wait for, and one ORM UPDATE of CASE expressions for all of
    them was worse, 20% (py-spy, `ws_load.py --joins-only --cases 50x10`)."""
    ours = set(Room.objects.filter(pk__in=[room.pk for room in rooms], driver=driver).values_list("pk", flat=True))
    until = connection.ops.adapt_datetimefield_value(now + lease)
    rows = [(until, room.sent_upto, room.reveal_base, connection.ops.adapt_datetimefield_value(room.reveal_anchor),
             room.pk, driver) for room in rooms if room.pk in ours]
    if rows:
        with connection.cursor() as cursor:
            cursor.executemany(f"UPDATE {Room._meta.db_table} SET driver_until = %s, sent_upto = %s, reveal_base = %s, "
                               "reveal_anchor = %s WHERE id = %s AND driver = %s", rows)
    return {room.slug: room.pk in ours for room in rooms}


def room_leader(*, slug: str) -> tuple[str, datetime | None]:
    row = Room.objects.filter(slug=slug).values_list("driver", "driver_until").first()
    return row if row else ("", None)


def room_renew(*, room: Room, now: datetime, lease: timedelta) -> bool:
    """Extend the lease (and record how far reading got, for a successor); False when it was lost."""
    return bool(
        Room.objects.filter(pk=room.pk, driver=room.driver)
        .update(driver_until=now + lease, sent_upto=room.sent_upto, reveal_base=room.reveal_base,
                reveal_anchor=room.reveal_anchor)
    )


def rooms_renew(*, rooms: list[Room], driver: str, now: datetime, lease: timedelta) -> dict[str, bool | None]:
    """`room_renew` for every room this process leads, in one statement: for each slug True (renewed),
    False (lost) or None (its row is locked by our own group commit this instant: renew it next pass).

    Why one statement: the lease thread renewed fifty rooms with fifty UPDATEs every half second, and
    each round trip from that thread waits for the GIL behind the event loop; it was busy more than
    half of the time, beside the writer thread it competes with. Rows are locked in id order and
    locked ones skipped, so this statement never waits on a batch that might wait on it."""
    if not rooms:
        return {}
    if connection.vendor != "postgresql":
        return _rooms_renew_sqlite(rooms=rooms, driver=driver, now=now, lease=lease)
    sql = f"""
        UPDATE {Room._meta.db_table} AS r
           SET driver_until = %s, sent_upto = v.sent_upto, reveal_base = v.reveal_base,
               reveal_anchor = v.reveal_anchor
          FROM unnest(%s::bigint[], %s::integer[], %s::integer[], %s::timestamptz[])
               AS v(id, sent_upto, reveal_base, reveal_anchor)
         WHERE r.id = v.id AND r.id IN (
               SELECT id FROM {Room._meta.db_table} WHERE id = ANY(%s) AND driver = %s
                ORDER BY id FOR UPDATE SKIP LOCKED)
     RETURNING r.id"""
    ids = [room.pk for room in rooms]
    with connection.cursor() as cursor:
        cursor.execute(sql, [now + lease, ids, [room.sent_upto for room in rooms],
                             [room.reveal_base for room in rooms], [room.reveal_anchor for room in rooms],
                             ids, driver])
        renewed = {row[0] for row in cursor.fetchall()}
    missed = [room.pk for room in rooms if room.pk not in renewed]
    ours = set(Room.objects.filter(pk__in=missed, driver=driver).values_list("pk", flat=True)) if missed else set()
    return {room.slug: True if room.pk in renewed else (None if room.pk in ours else False) for room in rooms}


def room_release(*, room: Room) -> None:
    Room.objects.filter(pk=room.pk, driver=room.driver).update(driver="", driver_until=None, sent_upto=room.sent_upto)


def players_load(*, room: Room, online_since: datetime) -> tuple[dict[int, dict[str, Any]], set[int], dict[int, int]]:
    """The room's players as the leader keeps them, who was seen since `online_since`, and each
    player's agent (play/roster.py)."""
    return players_load_many(rooms=[room], online_since=online_since)[room.pk]


def players_load_many(*, rooms: list[Room], online_since: datetime
                      ) -> dict[int, tuple[dict[int, dict[str, Any]], set[int], dict[int, int]]]:
    """`players_load` for several rooms in one query, by room id."""
    out: dict[int, tuple[dict[int, dict[str, Any]], set[int], dict[int, int]]] = {r.pk: ({}, set(), {}) for r in rooms}
    rows = Player.objects.filter(room_id__in=list(out)).values("id", "room_id", "name", "score", "last_seen",
                                                                 "agent_id", "agent__kind")
    for p in rows:
        players, online, agents = out[p["room_id"]]
        players[p["id"]] = {"id": p["id"], "name": p["name"], "score": p["score"], "bot": p["agent__kind"] == "ai"}
        agents[p["id"]] = p["agent_id"]
        if p["last_seen"] and p["last_seen"] >= online_since:
            online.add(p["id"])
    return out


def players_seen(*, player_ids: list[int], now: datetime) -> None:
    """Presence is a lease: each process marks the players it holds sockets for, every few seconds."""
    if not player_ids:
        return
    with transaction.atomic():
        # Rows a leader's group commit holds (a ruling's score, a join) are skipped, not waited for: a
        # missed mark is made good by the next beat, long before the presence lease runs out, and one
        # statement that locked rows in its own order while waiting could deadlock with that batch.
        free = list(Player.objects.select_for_update(skip_locked=True).filter(pk__in=player_ids)
                    .order_by("pk").values_list("pk", flat=True))
        Player.objects.filter(pk__in=free).update(last_seen=now)


def players_online_in(*, rooms: list[Room], since: datetime) -> dict[str, set[int]]:
    """Who was seen since `since` in each of these rooms, in one query: slug -> player ids."""
    slugs = {room.pk: room.slug for room in rooms}
    online: dict[str, set[int]] = {slug: set() for slug in slugs.values()}
    rows = Player.objects.filter(room_id__in=list(slugs), last_seen__gte=since).values_list("room_id", "id")
    for room_id, player_id in rows:
        online[slugs[room_id]].add(player_id)
    return online
