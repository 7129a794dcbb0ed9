"""Group commit: every room's writes in this process share one transaction per round trip.

Why: a live room writes only at transitions (play/actor.py), but fifty rooms buzzing in the same 50 ms
each paid a trip to the database thread, a transaction and a commit, one after another, and the last
buzz waited for the forty-nine before it. Writes that arrive while a batch is on the database thread
now go together in the next one: one trip, one BEGIN and one COMMIT for all of them. One that fails (a
lost lease, a refusal, a bad row) is undone alone and raises to its own caller. Nothing is told before
its commit: a caller's await returns after the batch commits, and a commit that fails fails every
write of its batch.

How a write is undone alone depends on what it writes:
- A transition marked `defers_writes` (buzz, answer, the clock's expiry) only reads; its rows wait in
  its `Work` (play/work.py), and the works of the whole batch are written together at its end, with
  one statement per kind of row. A refusal has nothing to undo; a lost lease drops that work's rows.
  A row the database refuses (a text it cannot store) fails the statement that carries every room's
  rows: the works are then written again, each alone in a savepoint of its own, so only that work's
  caller gets the error. When the transaction held nothing but their reads, it is rolled back and they
  are written in a new one (the common path pays no savepoint); when direct writes stand in it, the
  works' joint write ran in a savepoint, which alone is rolled back.
  Such a write that runs anything but a SELECT fails before that statement runs (inside an ORM write,
  with every write of its transaction): the rule cannot rot unseen.
- Any other write runs in a savepoint of its own and writes its work before leaving it, except the
  first of a transaction: when that one fails, rolling the transaction back undoes it alone, and the
  rest of the batch goes on in a new one. (On PostgreSQL a savepoint is two round trips, and each
  round trip from this thread waits for the GIL behind the event loop.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from channels.db import database_sync_to_async
from django.db import DatabaseError, connection, transaction

from .work import LostLease, Work, collecting, work_write

MAX_BATCH = 200  # writes in one transaction: a long queue is still committed in steps
F = TypeVar("F", bound=Callable[..., Any])


def defers_writes(fn: F) -> F:
    """Mark a transition whose only writes are the rows of its work (see the module's docstring)."""
    fn.defers_writes = True  # type: ignore[attr-defined]
    return fn


@dataclass
class _Write:
    fn: Callable[..., Any]
    kwargs: dict[str, Any]
    future: asyncio.Future = field(repr=False)
    grouped: bool = False  # `fn(items=[...])` takes every grouped write of the batch with the same fn at once

    @property
    def deferred(self) -> bool:
        return not self.grouped and getattr(self.fn, "defers_writes", False)


class _FirstFailed(Exception):
    """The transaction's first direct write failed: roll the transaction back (it holds nothing else)."""

    def __init__(self, results: list[tuple[bool, Any]]):
        self.results = results
        self.at = 0  # the failed unit's place in the transaction's units


def _reads_only(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: dict[str, Any]) -> Any:
    if sql.lstrip()[:6].upper() != "SELECT":
        raise RuntimeError(f"a transition marked defers_writes ran a write of its own: {sql[:80]}")
    return execute(sql, params, many, context)


def _deferred(write: _Write, work: Work) -> tuple[bool, Any]:
    try:
        with collecting(work), connection.execute_wrapper(_reads_only):
            return True, write.fn(**write.kwargs)
    except DatabaseError:  # a read failed: on PostgreSQL the transaction is broken for every write in it
        raise
    except Exception as exc:
        if connection.needs_rollback:  # it failed inside an ORM write (the guard above): broken too
            raise
        return False, exc  # a refusal: nothing of it was written


def _unit(batch: list[_Write], members: list[int], savepoint: bool) -> list[tuple[bool, Any]]:
    """One write, or one group of grouped writes, in a savepoint of its own (or, the first of its
    transaction, in none), its work written before the savepoint ends: its results, one per member."""
    writes = [batch[i] for i in members]
    try:
        with transaction.atomic(savepoint=savepoint), collecting(Work()) as work:
            if writes[0].grouped:
                out = writes[0].fn(items=[w.kwargs["item"] for w in writes])
            else:
                out = [writes[0].fn(**writes[0].kwargs)]
            if work_write([work]):
                raise LostLease(next(iter(work.rooms.values()))[0].slug)
    except Exception as exc:  # rolled back to its savepoint; the others stand
        if not savepoint:
            raise _FirstFailed([(False, exc)] * len(writes)) from exc
        return [(False, exc)] * len(writes)
    if len(out) != len(writes):
        raise RuntimeError(f"{writes[0].fn!r} answered {len(out)} of {len(writes)} items")
    return [(False, r) if isinstance(r, Exception) else (True, r) for r in out]


def _units(batch: list[_Write]) -> list[list[int]]:
    """The batch's writes in order, each grouped write standing with every other of its fn."""
    units: list[list[int]] = []
    groups: dict[Any, list[int]] = {}
    for i, write in enumerate(batch):
        if not write.grouped:
            units.append([i])
        elif write.fn in groups:
            groups[write.fn].append(i)
        else:
            groups[write.fn] = [i]
            units.append(groups[write.fn])
    return units


def _transaction(batch: list[_Write], units: list[list[int]], results: list[tuple[bool, Any] | None],
                 works: list[tuple[int, Work]]) -> None:
    """These units in one transaction; at its end, the rows of the deferred writes (theirs, and those
    carried over from a transaction rolled back after they ran)."""
    with transaction.atomic():
        savepoint = False  # until a write is done directly, a rollback undoes nothing else
        for n, members in enumerate(units):
            write = batch[members[0]]
            if write.deferred:
                work = Work()
                results[members[0]] = ok_value = _deferred(write, work)
                if ok_value[0]:
                    works.append((members[0], work))
                continue
            try:
                unit_results = _unit(batch, members, savepoint=savepoint)
            except _FirstFailed as failed:
                failed.at = n
                raise
            for i, result in zip(members, unit_results, strict=True):
                results[i] = result
            savepoint = True
        if not works:
            return
        if not savepoint:  # the transaction holds reads only: a failed write rolls back nothing of anyone's
            try:
                lost = work_write([work for _, work in works])
            except Exception as exc:
                raise _WorksFailed from exc
            _lost_leases(works, lost, results)
            return
        try:  # direct writes stand in this transaction: a failed write of the works must undo the works alone
            with transaction.atomic(savepoint=True):
                lost = work_write([work for _, work in works])
        except Exception:
            _works_alone(works, results)
        else:
            _lost_leases(works, lost, results)


class _WorksFailed(Exception):
    """Writing the deferred works together failed in a transaction that holds nothing else: roll it back,
    and write each work alone in a new one."""


def _lost_leases(works: list[tuple[int, Work]], lost: set[int], results: list[tuple[bool, Any] | None]) -> None:
    for i, work in works:
        if work.rooms.keys() & lost:
            results[i] = (False, LostLease(next(iter(work.rooms.values()))[0].slug))


def _works_alone(works: list[tuple[int, Work]], results: list[tuple[bool, Any] | None]) -> None:
    """Each work in a savepoint of its own, inside the caller's transaction: a row the database refuses
    (one room's) fails that work's write alone, and every other room's rows are written."""
    for i, work in works:
        try:
            with transaction.atomic(savepoint=True):
                lost = work_write([work])
        except Exception as exc:
            results[i] = (False, exc)
            continue
        _lost_leases([(i, work)], lost, results)


def _apply(batch: list[_Write]) -> list[tuple[bool, Any]]:
    """Run on the database thread: the batch in one transaction, or, when the first write done
    directly fails, that write rolled back alone and the rest in a new one."""
    results: list[tuple[bool, Any] | None] = [None] * len(batch)
    units = _units(batch)
    works: list[tuple[int, Work]] = []  # deferred writes that ran, their rows not yet written
    while True:
        try:
            _transaction(batch, units, results, works)
        except _FirstFailed as failed:
            for i, result in zip(units[failed.at], failed.results, strict=True):
                results[i] = result
            units = units[failed.at + 1:]  # the deferred writes before it keep their results and rows
            continue
        except _WorksFailed:  # rolled back: it held only their reads; now each work alone
            try:
                with transaction.atomic():
                    _works_alone(works, results)
            except Exception as exc:  # the commit (or the BEGIN) failed: none of them stands
                for i, _ in works:
                    results[i] = (False, exc)
        except Exception as exc:  # the commit (or the BEGIN, or a read) failed: nothing of this transaction stands
            for i in [i for members in units for i in members] + [i for i, _ in works]:
                results[i] = (False, exc)
        return [r for r in results if r is not None]


def _on_database_thread(apply: Callable[[list[_Write]], Any], batch: list[_Write]) -> Awaitable[Any]:
    return database_sync_to_async(apply)(batch)


class GroupWriter:
    def __init__(self, thread: Callable[[Callable[[list[_Write]], Any], list[_Write]], Awaitable[Any]]
                 = _on_database_thread) -> None:
        """`thread(apply, batch)` runs a batch where this writer's writes belong: by default the
        database thread of the rooms' transitions (the lease thread's takes have their own writer)."""
        self.thread = thread
        self.pending: list[_Write] = []
        self.task: asyncio.Task | None = None
        self.batches = 0  # for the benchmark and tests: how many transactions carried the writes
        self.writes = 0

    async def run(self, fn: Callable[..., Any], /, **kwargs: Any) -> Any:
        """`fn(**kwargs)` on the database thread inside the next batch's transaction; its result, or its
        exception, once the batch has committed."""
        return await self._submit(_Write(fn, kwargs, asyncio.get_running_loop().create_future()))

    async def run_grouped(self, fn: Callable[..., list[Any]], item: Any) -> Any:
        """Like `run`, for writes that are cheaper together (a crowd's joins): `fn(items=[...])` gets the
        items of every such write in the batch and answers a list, one result (or exception) per item."""
        return await self._submit(_Write(fn, {"item": item}, asyncio.get_running_loop().create_future(), grouped=True))

    async def _submit(self, write: _Write) -> Any:
        self.pending.append(write)
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self._drain(), name="play-group-writer")
        return await write.future

    async def _drain(self) -> None:
        while self.pending:
            batch, self.pending = self.pending[:MAX_BATCH], self.pending[MAX_BATCH:]
            try:
                results = await self.thread(_apply, batch)
            except BaseException as exc:  # the thread hop itself failed (or we were cancelled)
                results = [(False, exc if isinstance(exc, Exception) else RuntimeError("writer stopped"))] * len(batch)
                if not isinstance(exc, Exception):
                    self._settle(batch, results)
                    raise
            self.batches += 1
            self.writes += len(batch)
            self._settle(batch, results)
            # Let the callers of this batch take in their results (a leader records the players who just
            # joined) before the next batch reads that state on the database thread.
            await asyncio.sleep(0)

    @staticmethod
    def _settle(batch: list[_Write], results: list[tuple[bool, Any]]) -> None:
        for write, (ok, value) in zip(batch, results, strict=True):
            if write.future.done():  # its caller went away (a cancelled consumer)
                continue
            if ok:
                write.future.set_result(value)
            else:
                write.future.set_exception(value)
