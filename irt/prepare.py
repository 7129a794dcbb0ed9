"""Data preparation as pure functions: clue items, buzz to clue, backfill, grouped human agents.

These turn a responses table into the CAIMIRA files; the Django side calls them, and so can a script.

Quizbowl tossups become items the way CAIMIRA does it: tossup ``q`` with clues 1..n gives items
``q_1 .. q_n`` (the text of ``q_k`` is clues 1..k). A buzz during clue t maps to item ``q_t``; then
*backfill*: correct at t counts as correct for every k >= t, wrong at t as wrong for every k <= t.
"""

from __future__ import annotations

import bisect
import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "split_clues",
    "ClueItem",
    "clue_items",
    "clue_word_ends",
    "clue_at",
    "buzz_clue",
    "backfill",
    "buzz_rulings",
    "tossup_rulings",
    "HumanGroup",
    "group_humans",
    "majority_vote",
    "group_responses",
    "group_agents",
]

# A sentence ends at . ! or ? (optionally followed by closing quotes or brackets) before whitespace.
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'\u201d\u2019)\]]*\s+")


def split_clues(text: str) -> list[str]:
    """Split a tossup into clues (sentences) with a regular expression.

    A clue ends at ``.``, ``!`` or ``?`` (plus any closing quotes or brackets) followed by
    whitespace. Limits: abbreviations and initials ("Mr. Smith", "U.S. Navy", "J. S. Bach",
    "St. Louis", "ca. 1500") end a clue too early; a clue ending without punctuation runs into the
    next; the power mark ``(*)`` and "For 10 points" need no special handling. Whitespace is
    normalised inside clues; empty input gives no clues.
    """
    text = " ".join(text.split())
    if not text:
        return []
    out: list[str] = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        end = m.start() + len(m.group(0).rstrip())
        out.append(text[start:end])
        start = m.end()
    if start < len(text):
        out.append(text[start:])
    return out


@dataclass(frozen=True)
class ClueItem:
    id: str  # "<tossup>_<k>"
    orig_qid: str
    n_clues: int  # k
    total_clues: int  # n
    text: str  # clues 1..k joined by a space

    def as_query(self, **extra: object) -> dict[str, object]:
        """The CAIMIRA queries record (extra fields, e.g. ``answer``, are added as given)."""
        return {
            "id": self.id,
            "text": self.text,
            "orig_qid": self.orig_qid,
            "n_clues": self.n_clues,
            "total_clues": self.total_clues,
            **extra,
        }


def clue_items(tossup_id: str, clues: Sequence[str] | str) -> list[ClueItem]:
    """Cumulative clue items ``<id>_1 .. <id>_n`` of a tossup (text or already split clues)."""
    parts = split_clues(clues) if isinstance(clues, str) else list(clues)
    n = len(parts)
    return [ClueItem(f"{tossup_id}_{k}", tossup_id, k, n, " ".join(parts[:k])) for k in range(1, n + 1)]


def clue_word_ends(clues: Sequence[str]) -> list[int]:
    """Cumulative word counts: clue k covers word indices ``[ends[k-2], ends[k-1])`` (0-based)."""
    ends, total = [], 0
    for c in clues:
        total += len(c.split())
        ends.append(total)
    return ends


def clue_at(position: int, ends: Sequence[int]) -> int:
    """1-based clue being read at ``position`` (0-based word or character index) given clue ends.

    ``ends`` are exclusive cumulative ends in the same unit (:func:`clue_word_ends` for words). A
    position past the end of the text maps to the last clue; a negative one is an error.
    """
    if position < 0:
        raise ValueError("position must be >= 0")
    if not ends:
        raise ValueError("no clues")
    return min(bisect.bisect_right(ends, position), len(ends) - 1) + 1


def buzz_clue(word_index: int, clues: Sequence[str]) -> int:
    """The clue a buzz at word ``word_index`` (0-based, words read so far minus one) interrupts."""
    return clue_at(word_index, clue_word_ends(clues))


def backfill(n_clues: int, buzz_at: int | None, correct: bool) -> dict[int, int]:
    """CAIMIRA's backfill rule: rulings for clue items 1..n from one buzz.

    * correct at clue t: 1 for every k >= t (nothing is said about k < t);
    * wrong at clue t: 0 for every k <= t (nothing is said about k > t);
    * no buzz (``buzz_at`` None; the player heard the whole tossup without answering): 0 for all k.
    """
    if n_clues < 1:
        raise ValueError("n_clues must be >= 1")
    if buzz_at is None:
        return dict.fromkeys(range(1, n_clues + 1), 0)
    if not 1 <= buzz_at <= n_clues:
        raise ValueError(f"buzz clue {buzz_at} outside 1..{n_clues}")
    if correct:
        return dict.fromkeys(range(buzz_at, n_clues + 1), 1)
    return dict.fromkeys(range(1, buzz_at + 1), 0)


def buzz_rulings(tossup_id: str, n_clues: int, buzz_at: int | None, correct: bool) -> list[tuple[str, int]]:
    """``(item id, ruling)`` pairs of :func:`backfill`, item ids as :func:`clue_items` names them."""
    return [(f"{tossup_id}_{k}", r) for k, r in sorted(backfill(n_clues, buzz_at, correct).items())]


def tossup_rulings(n_clues: int, answers: Sequence[tuple[int, bool]]) -> dict[int, int]:
    """Rulings for clue items 1..n from *all* of one agent's judged answers on one tossup.

    ``answers`` are ``(clue k, correct)`` pairs, 1 <= k <= n, in the order the caller prefers them
    (earliest first). An answer given after clue k is the agent's response to ``q_k``, so:

    * answers at one clue only (a single buzz: a player, a bot that buzzes once): the first of them,
      refined by :func:`backfill` (correct at t -> 1 for k >= t; wrong at t -> 0 for k <= t);
    * answers at several clues (an AI system asked after every clue): each clue's first answer is the
      ruling of that ``q_k`` and nothing is backfilled. Backfilling one answer into another's clue
      would let whichever answer was stored first decide a clue the agent itself answered.

    Several answers at one clue: the first in ``answers`` wins, so the result depends only on the
    caller's order (e.g. time then id), never on the order rows were inserted.
    """
    first: dict[int, bool] = {}
    for k, correct in answers:
        if not 1 <= k <= n_clues:
            raise ValueError(f"clue {k} outside 1..{n_clues}")
        first.setdefault(k, bool(correct))
    if not first:
        return {}
    if len(first) == 1:
        [(t, correct)] = first.items()
        return backfill(n_clues, t, correct)
    return {k: int(c) for k, c in sorted(first.items())}


# --------------------------------------------------------------------------- grouped human agents


@dataclass(frozen=True)
class HumanGroup:
    id: str  # "human_group:<size>:<n>"
    size: int
    members: tuple[str, ...]
    n_items: int  # items at least one member answered
    skill: float  # mean of the members' skill estimates

    @classmethod
    def of(cls, size: int, count: int, members: Sequence[str], covered: set[str],
           skill_of: Mapping[str, float]) -> HumanGroup:
        return cls(id=f"human_group:{size}:{count}", size=size, members=tuple(members), n_items=len(covered),
                   skill=sum(skill_of[m] for m in members) / size)


def _skill(rulings: Mapping[str, int]) -> float:
    """Laplace-smoothed accuracy, (correct + 1) / (n + 2)."""
    return (sum(rulings.values()) + 1.0) / (len(rulings) + 2.0)


def group_humans(
    responses: Mapping[str, Mapping[str, int]],
    sizes: Sequence[int] = (1, 5, 10, 15),
    max_groups: int | None = None,
    window: int = 3,
    skill: Mapping[str, float] | None = None,
) -> list[HumanGroup]:
    """Pool players into groups of each size, of similar skill, covering as many items as possible.

    ``responses``: player id -> {item id -> ruling}. For each size s the players are ranked by
    skill (``skill`` if given, else smoothed accuracy); the best unassigned player starts a group,
    which is filled greedily from the ``window * s`` next unassigned players in skill order, each
    time with the one that adds the most items not yet covered by the group (ties: nearer in skill,
    then id). Groups of one size are disjoint; players left over (fewer than s) are not grouped at
    that size; a player is in one group of every size. Deterministic: no randomness.
    """
    sk = dict(skill) if skill is not None else {p: _skill(r) for p, r in responses.items()}
    order = sorted(responses, key=lambda p: (-sk[p], p))
    items = {p: set(responses[p]) for p in order}
    groups: list[HumanGroup] = []
    for size in sizes:
        if size < 1:
            raise ValueError("group sizes must be >= 1")
        left = list(order)
        count = 0
        while len(left) >= size and (max_groups is None or count < max_groups):
            first = left.pop(0)
            members, covered = [first], set(items[first])
            pool = left[: window * size]
            while len(members) < size:
                best = max(
                    pool,
                    key=lambda p: (len(items[p] - covered), -abs(sk[p] - sk[first]), _neg_id(p)),
                )
                pool.remove(best)
                left.remove(best)
                members.append(best)
                covered |= items[best]
            count += 1
            groups.append(HumanGroup.of(size, count, members, covered, sk))
    return groups


def _neg_id(p: str) -> tuple[int, ...]:
    # max() picks the largest key; negated code points make the smallest id win ties
    return tuple(-ord(c) for c in p)


def _coin(seed: int, *parts: str) -> float:
    h = hashlib.blake2b("\x00".join((str(seed), *parts)).encode(), digest_size=8).digest()
    return int.from_bytes(h, "little") / 2**64


def majority_vote(votes: Sequence[int], seed: int = 0, key: Sequence[str] = ()) -> int:
    """Majority of 0/1 votes; a tie is drawn with p(1) = the vote share of 1 (that is, 1/2).

    The draw is a hash of ``seed`` and ``key`` (e.g. group id and item id), so it does not depend on
    the order in which groups or items are processed.
    """
    if not votes:
        raise ValueError("no votes")
    share = sum(votes) / len(votes)
    if share != 0.5:
        return int(share > 0.5)
    return int(_coin(seed, *key) < share)


def group_responses(
    groups: Iterable[HumanGroup], responses: Mapping[str, Mapping[str, int]], seed: int = 0
) -> list[dict[str, object]]:
    """CAIMIRA response records of the groups: on every item some member answered, the majority."""
    out: list[dict[str, object]] = []
    for g in groups:
        votes: dict[str, list[int]] = {}
        for m in g.members:
            for item, r in responses[m].items():
                votes.setdefault(item, []).append(int(r))
        for item in sorted(votes):
            out.append({"query_id": item, "agent_id": g.id, "ruling": majority_vote(votes[item], seed, (g.id, item))})
    return out


def group_agents(groups: Iterable[HumanGroup]) -> list[dict[str, object]]:
    """CAIMIRA agent records (``type`` ``human_group``; extra fields: size, members, n_items)."""
    return [
        {
            "id": g.id,
            "name": f"{g.size} player{'s' if g.size != 1 else ''} #{g.id.rsplit(':', 1)[1]}",
            "type": "human_group",
            "size": g.size,
            "members": list(g.members),
            "n_items": g.n_items,
        }
        for g in groups
    ]
