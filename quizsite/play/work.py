"""The rows a room's transition writes, kept until they can be written together with other rooms'.

Why: fifty rooms ruling in the same 50 ms each wrote a response, a score and the room row, statement
after statement on the one database thread; on PostgreSQL each round trip from that thread also waits
for the GIL behind the event loop, and the fiftieth ruling waited about 220 ms for the forty-nine before
it (`benchmarks/ws_load.py --profile services --cases 50x10`, a probe in the writer). A transition now
records its rows in a `Work` (`step()`); the group commit (play/writer.py) writes the rows of every
transition of its batch with one statement per kind, and a transition outside a batch writes its own
when its step ends, in a transaction of its own.

The room row is written *fenced* by the leader's lease (`room_save_fenced`): a process that lost the
lease writes nothing for that room, not even its response rows, and its caller gets `LostLease`.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from django.db import connection, models, transaction

from quizsite.items.models import Response

from .models import Player, Room


class LostLease(Exception):
    """This process no longer leads the room (another took it over): nothing was written."""


@dataclass
class Work:
    rooms: dict[int, tuple[Room, tuple[str, ...]]] = field(default_factory=dict)  # id -> (room, fields)
    responses: list[Response] = field(default_factory=list)
    rows: list[models.Model] = field(default_factory=list)  # other new rows (a tossup's reading, a serve)
    scores: Counter[int] = field(default_factory=Counter)  # player id -> points to add

    def save_room(self, room: Room, fields: tuple[str, ...]) -> None:
        """Write these live fields of the room (the values it holds when the work is written)."""
        _, before = self.rooms.get(room.pk, (room, ()))
        self.rooms[room.pk] = (room, before + tuple(f for f in fields if f not in before))

    def add_score(self, player_id: int, points: int) -> None:
        self.scores[player_id] += points


_local = threading.local()


def current() -> Work | None:
    return getattr(_local, "work", None)


@contextmanager
def collecting(work: Work) -> Iterator[Work]:
    """Make `work` the one that this thread's transitions record into (the group commit's write)."""
    _local.work = work
    try:
        yield work
    finally:
        _local.work = None


@contextmanager
def step() -> Iterator[Work]:
    """A transition's block (play/services.py). Inside a group commit it records into that write's
    work; elsewhere it is a transaction (or a savepoint) whose work is written when the block ends,
    and a lost lease raises `LostLease` with nothing written."""
    work = current()
    if work is not None:
        yield work
        return
    with transaction.atomic(), collecting(Work()) as work:
        yield work
        if work_write([work]):
            raise LostLease(next(iter(work.rooms.values()))[0].slug)


# --- writing --------------------------------------------------------------------------------------


@lru_cache(maxsize=16)
def _fenced_update(fields: tuple[str, ...], vendor: str) -> tuple[str, tuple[models.Field, ...]]:
    """`UPDATE play_room SET ... WHERE id = %s AND driver = %s` for these fields, built once: the ORM's
    query compiler cost more than the write itself, and every transition of every room pays it."""
    qn = connection.ops.quote_name
    model_fields = _fields(fields)
    sets = ", ".join(f"{qn(_column(f))} = %s" for f in model_fields)
    sql = f"UPDATE {qn(Room._meta.db_table)} SET {sets} WHERE {qn('id')} = %s AND {qn('driver')} = %s"
    return sql, model_fields


@lru_cache(maxsize=16)
def _fenced_update_many(fields: tuple[str, ...], rows: int) -> tuple[str, tuple[models.Field, ...]]:
    """PostgreSQL: the fenced update of `rows` rooms in one statement, answering the ids it wrote."""
    qn = connection.ops.quote_name
    model_fields = _fields(fields)
    casts = ["bigint", "text", *(f.db_type(connection) for f in model_fields)]
    row = "(" + ", ".join(f"%s::{cast}" for cast in casts) + ")"
    names = ", ".join(["id", "driver", *(qn(_column(f)) for f in model_fields)])
    sets = ", ".join(f"{qn(_column(f))} = v.{qn(_column(f))}" for f in model_fields)
    sql = (f"UPDATE {qn(Room._meta.db_table)} AS r SET {sets} FROM (VALUES {', '.join([row] * rows)}) AS v({names}) "
           f"WHERE r.id = v.id AND r.driver = v.driver RETURNING r.id")
    return sql, model_fields


def _fields(fields: tuple[str, ...]) -> tuple[models.Field, ...]:
    model_fields = tuple(f for f in (Room._meta.get_field(name) for name in fields) if isinstance(f, models.Field))
    if len(model_fields) != len(fields):
        raise ValueError(f"not concrete fields of Room: {fields}")
    return model_fields


def _column(f: models.Field) -> str:
    return f.column or f.attname


def _values(room: Room, model_fields: tuple[models.Field, ...]) -> list[Any]:
    # Foreign keys by their column (`buzz_player_id`): reading `room.buzz_player` would fetch the row.
    return [f.get_db_prep_save(getattr(room, f.attname), connection) for f in model_fields]


def room_save_fenced(room: Room, fields: tuple[str, ...]) -> None:
    """Write the room's live fields only while this process still leads it (play/leases.py)."""
    sql, model_fields = _fenced_update(fields, connection.vendor)
    with connection.cursor() as cursor:
        cursor.execute(sql, [*_values(room, model_fields), room.pk, room.driver])
        if cursor.rowcount != 1:
            raise LostLease(room.slug)


def _rooms_write(saves: list[tuple[Room, tuple[str, ...]]]) -> set[int]:
    """The fenced saves; the ids of the rooms whose lease was lost."""
    lost: set[int] = set()
    if connection.vendor != "postgresql":  # SQLite: no round trips to save, one statement per room
        for room, fields in saves:
            try:
                room_save_fenced(room, fields)
            except LostLease:
                lost.add(room.pk)
        return lost
    by_fields: dict[tuple[str, ...], list[Room]] = {}
    for room, fields in saves:
        by_fields.setdefault(fields, []).append(room)
    for fields, rooms in by_fields.items():
        sql, model_fields = _fenced_update_many(fields, len(rooms))
        params = [value for room in rooms for value in (room.pk, room.driver, *_values(room, model_fields))]
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            written = {row[0] for row in cursor.fetchall()}
        lost |= {room.pk for room in rooms} - written
    return lost


def _scores_write(scores: Counter[int]) -> None:
    scores = Counter({pk: points for pk, points in scores.items() if points})
    if not scores:
        return
    if connection.vendor != "postgresql":
        for pk, points in scores.items():
            Player.objects.filter(pk=pk).update(score=models.F("score") + points)
        return
    table = connection.ops.quote_name(Player._meta.db_table)
    rows = ", ".join(["(%s::bigint, %s::integer)"] * len(scores))
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} AS p SET score = p.score + v.points FROM (VALUES {rows}) AS v(id, points) "
                       f"WHERE p.id = v.id", [x for item in sorted(scores.items()) for x in item])


def work_write(works: list[Work]) -> set[int]:
    """Write the rows of these works, inside the caller's transaction: rooms first, fenced, then the
    other rows of every work whose rooms were all written. Answers the ids of the rooms found lost."""
    saves = [save for work in works for save in work.rooms.values()]
    lost = _rooms_write(saves) if saves else set()
    kept = [work for work in works if not (work.rooms.keys() & lost)]
    responses = [r for work in kept for r in work.responses]
    if responses:
        Response.objects.bulk_create(responses)
    by_model: dict[type[models.Model], list[models.Model]] = {}
    for work in kept:
        for row in work.rows:
            by_model.setdefault(type(row), []).append(row)
    for model, rows in by_model.items():
        model._default_manager.bulk_create(rows)
    scores: Counter[int] = Counter()
    for work in kept:
        scores.update(work.scores)  # adds, negative points (negs) included
    _scores_write(scores)
    return lost


__all__ = ["LostLease", "Work", "collecting", "current", "room_save_fenced", "step", "work_write"]
