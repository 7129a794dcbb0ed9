"""Token buckets: the play app's rate limits (per socket, per address, per room and per player)."""

from __future__ import annotations

import time


class Bucket:
    """A token bucket: `rate` per second, at most `burst` at once."""

    def __init__(self, rate: float, burst: float):
        self.rate, self.burst, self.tokens, self.at = rate, burst, burst, time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True

    def reserve(self, max_wait: float) -> float | None:
        """Take a token ahead of time: the seconds until it is due (0 when one is at hand), or None,
        taking nothing, when that would be more than `max_wait` away."""
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        wait = max(0.0, (1 - self.tokens) / self.rate)
        if wait > max_wait:
            return None
        self.tokens -= 1
        return wait

    def full(self) -> bool:
        return self.tokens + (time.monotonic() - self.at) * self.rate >= self.burst
