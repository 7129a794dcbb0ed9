"""Connection caps that hold across ASGI processes (the services profile, with Redis).

Each process caps the sockets one address or one browser session holds (play/hub.py), but with n
processes behind a balancer a client could hold n times the cap. So each process publishes its own
counts to Redis, a hash that expires unless the process refreshes it (a dead process's counts go with
it), and admits a socket only if its own count plus every other live process's stays under the cap.
The counts of other processes are at most twice `PUBLISH_EVERY_S` old: each process reads them at
most once per period and every socket admitted meanwhile is checked against that reading (500 players
connecting at once made 500 Redis round trips, each on a new connection of the pool: 51 ms at the
median to admit a socket, `benchmarks/ws_load.py --profile services --cases 1x500`). Two processes
admitting the same client in the same instant may both say yes, once.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from typing import Any

log = logging.getLogger(__name__)
PUBLISH_EVERY_S = 0.25
REFRESH_EVERY_S = 5.0
TTL_S = 15  # a process that published nothing for this long is gone: its counts no longer count


def ip_field(ip: str) -> str:
    return f"ip:{ip}"


def session_field(key: str) -> str:
    return f"s:{key}"


class SharedCaps:
    def __init__(self, redis_url: str, prefix: str, process: str):
        import redis.asyncio as redis

        self.redis: Any = redis.from_url(redis_url)
        self.procs_key = f"{prefix}:play:caps:procs"
        self.prefix, self.process = prefix, process
        self.local: Counter[str] = Counter()
        self.dirty = True
        self.published_at = 0.0
        self.task: asyncio.Task | None = None
        self.seen: dict[str, int] = {}  # field -> what the other live processes hold, as last read
        self.seen_at = float("-inf")
        self.reading: asyncio.Task | None = None

    def key(self, process: str) -> str:
        return f"{self.prefix}:play:caps:{process}"

    def start(self) -> None:
        if self.task is None:
            self.task = asyncio.get_running_loop().create_task(self._publish_loop(), name="play-caps")

    def count(self, field: str, delta: int) -> None:
        self.local[field] += delta
        if self.local[field] <= 0:
            del self.local[field]
        self.dirty = True

    async def others(self, fields: list[str]) -> list[int]:
        """What the other live processes hold for each field (0 when Redis cannot say), as read at most
        `PUBLISH_EVERY_S` ago; callers that arrive while a reading is under way share it."""
        if time.monotonic() - self.seen_at >= PUBLISH_EVERY_S:
            if self.reading is None or self.reading.done():
                self.reading = asyncio.get_running_loop().create_task(self._read(), name="play-caps-read")
            await asyncio.shield(self.reading)
        return [self.seen.get(f, 0) for f in fields]

    async def _read(self) -> None:
        seen: Counter[str] = Counter()
        try:
            live = await self.redis.zrangebyscore(self.procs_key, time.time() - TTL_S, "+inf")
            others = [p.decode() for p in live if p.decode() != self.process]
            if others:
                pipe = self.redis.pipeline(transaction=False)
                for process in others:
                    pipe.hgetall(self.key(process))
                for row in await pipe.execute():
                    seen.update({k.decode(): int(v) for k, v in row.items()})
        except Exception:  # Redis restarting: each process keeps its own caps meanwhile
            log.warning("play caps: other processes' counts unavailable", exc_info=True)
        self.seen, self.seen_at = dict(seen), time.monotonic()

    async def publish(self) -> None:
        now = time.time()
        key = self.key(self.process)
        pipe = self.redis.pipeline(transaction=True)
        pipe.delete(key)
        if self.local:
            pipe.hset(key, mapping=dict(self.local))
            pipe.expire(key, TTL_S)
        pipe.zadd(self.procs_key, {self.process: now})
        pipe.zremrangebyscore(self.procs_key, "-inf", now - TTL_S)
        await pipe.execute()
        self.dirty, self.published_at = False, now

    async def _publish_loop(self) -> None:
        while True:
            await asyncio.sleep(PUBLISH_EVERY_S)
            if self.dirty or time.time() - self.published_at >= REFRESH_EVERY_S:
                try:
                    await self.publish()
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.warning("play caps: could not publish this process's counts", exc_info=True)

    async def close(self) -> None:
        if self.task is not None:
            self.task.cancel()
        try:
            await self.redis.delete(self.key(self.process))
            await self.redis.zrem(self.procs_key, self.process)
        except Exception:
            log.warning("play caps: could not withdraw this process's counts", exc_info=True)
