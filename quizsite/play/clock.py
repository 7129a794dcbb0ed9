"""The reading clock as pure functions of the schedule and elapsed time, so any process computes the same.

Word i is shown `delay[i]` ms after word i-1 (delay[0] = 0): one `ms_per_word` per word, doubled after a
word that ends a sentence. With prefix sums cum[i] = delay[0] + ... + delay[i], reading that resumes at
word b from an anchor time shows word i (i >= b) at offset

    off_b(i) = cum[i] - cum[b-1]        (cum[-1] := 0)

so the count revealed after `elapsed` ms is the number of i with cum[i] <= elapsed + cum[b-1].
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate

SENTENCE_PAUSE_FACTOR = 2


def schedule(sentence_ends: list[bool], ms_per_word: int) -> list[int]:
    """Cumulative reveal offsets `cum` for a tossup whose word i ends a sentence when sentence_ends[i]."""
    delays = [0] + [
        ms_per_word * (SENTENCE_PAUSE_FACTOR if sentence_ends[i - 1] else 1) for i in range(1, len(sentence_ends))
    ]
    return list(accumulate(delays))


def _before(cum: list[int], base: int) -> int:
    return cum[base - 1] if base > 0 else 0


def revealed_count(cum: list[int], base: int, elapsed_ms: float) -> int:
    """Words revealed `elapsed_ms` after reading (re)started at word `base`."""
    if base >= len(cum):
        return len(cum)
    return max(base, bisect_right(cum, elapsed_ms + _before(cum, base), lo=base))


def reveal_offset(cum: list[int], base: int, index: int) -> int:
    """ms after the anchor at which word `index` is shown (the last word's offset when index is past the end)."""
    if not cum:
        return 0
    if base >= len(cum):
        return 0
    index = min(index, len(cum) - 1)
    return cum[index] - _before(cum, base)
