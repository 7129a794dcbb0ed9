"""Grouped human agents as the CAIMIRA paper builds them: a few groups of each size, no player twice.

Individual players answer few items, so the paper pools them into synthetic agents: 5 groups for each
size 1, 5, 10 and 15 (20 agents), members of similar skill, chosen to cover as many items as possible.
:func:`irt.group_humans` (the ``groups`` scheme) differs on purpose: it groups *every* player at
*every* size, so a player sits in one group of each size and the agents of different sizes share
members. Here a player is in at most one group, so no two group agents share a member's answers.

Each group's response on an item is combined by :func:`irt.group_responses` (majority of the members
who answered, an exact tie drawn from a hash of seed, group and item), the same rule for both schemes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .prepare import HumanGroup, _neg_id, _skill

__all__ = ["group_humans_paper"]


def group_humans_paper(
    responses: Mapping[str, Mapping[str, int]],
    sizes: Sequence[int] = (1, 5, 10, 15),
    per_size: int = 5,
    window: int = 2,
    skill: Mapping[str, float] | None = None,
) -> list[HumanGroup]:
    """``per_size`` disjoint groups of each size; a player is in at most one group of all of them.

    ``responses``: player id -> {item id -> ruling}. Sizes are built smallest first, so the size-1 agents
    are the players who answered the most items (ties: id), whatever their accuracy: a single player
    stands for humans only as well as the items they cover. Each larger group starts from the ungrouped
    player with the widest coverage and is filled from the ``window * (size - 1)`` ungrouped players
    nearest to that player in skill (``skill`` if given, else smoothed accuracy), each time with the one
    who adds the most items the group does not cover yet (ties: nearer in skill, then id). The window
    keeps members of similar skill; the greedy choice inside it maximises coverage. It is 2 here (3 in
    :func:`irt.group_humans`) because the pool shrinks as groups are taken and a wider window lets the
    last large groups span most of the skill range; 1 would fill groups by skill alone. When too few players
    are left for a full group, that size gets fewer groups (possibly none): a group is never short.
    Deterministic: no randomness, and the result does not depend on the order of ``responses``.
    """
    if per_size < 1:
        raise ValueError("per_size must be >= 1")
    if any(s < 1 for s in sizes):
        raise ValueError("group sizes must be >= 1")
    sk = dict(skill) if skill is not None else {p: _skill(r) for p, r in responses.items()}
    items = {p: set(r) for p, r in responses.items()}
    left = sorted(responses, key=lambda p: (-len(items[p]), p))  # widest coverage first
    groups: list[HumanGroup] = []
    for size in sorted(set(sizes)):
        for count in range(1, per_size + 1):
            if len(left) < size:
                break
            first = left.pop(0)
            members, covered = [first], set(items[first])
            near = sorted(left, key=lambda p: (abs(sk[p] - sk[first]), p))[: window * (size - 1)]
            while len(members) < size:
                best = max(near, key=lambda p: (len(items[p] - covered), -abs(sk[p] - sk[first]), _neg_id(p)))
                near.remove(best)
                left.remove(best)
                members.append(best)
                covered |= items[best]
            groups.append(HumanGroup.of(size, count, members, covered, sk))
    return groups
