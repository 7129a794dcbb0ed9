"""The CAIMIRA paper's grouped humans: 5 groups per size, disjoint, similar skill, maximal coverage."""

from __future__ import annotations

import random

import pytest

from irt import group_humans_paper, group_responses

N_ITEMS = 400


def _world(seed: int = 0) -> tuple[dict[str, dict[str, int]], dict[str, float]]:
    """100 players of known skill (0..1) and random coverage, each with a twin who answered exactly the same;
    5 "wide" players of low skill who answered 200 items; 5 "sharp" players who answered 12 items, all right."""
    rng = random.Random(seed)
    responses: dict[str, dict[str, int]] = {}
    skill: dict[str, float] = {}
    for i in range(100):
        s = i / 99
        items = rng.sample(range(N_ITEMS), rng.randrange(8, 60))
        rulings = {f"q{j}": int(rng.random() < s) for j in items}
        for twin in ("a", "b"):
            responses[f"p{i:03d}{twin}"], skill[f"p{i:03d}{twin}"] = dict(rulings), s
    for i in range(5):
        responses[f"wide{i}"] = {f"q{j}": int(rng.random() < 0.3) for j in rng.sample(range(N_ITEMS), 200)}
        skill[f"wide{i}"] = 0.3
        responses[f"sharp{i}"] = {f"q{j}": 1 for j in rng.sample(range(N_ITEMS), 12)}
        skill[f"sharp{i}"] = 1.0
    return responses, skill


def _twin(p: str) -> str:
    return p[:-1] + ("b" if p.endswith("a") else "a")


def test_twenty_disjoint_groups_five_of_each_size():
    responses, skill = _world()
    groups = group_humans_paper(responses, skill=skill)
    assert [(g.size, g.id) for g in groups] == [(s, f"human_group:{s}:{n}") for s in (1, 5, 10, 15) for n in range(1, 6)]
    members = [m for g in groups for m in g.members]
    assert len(members) == len(set(members)) == 5 * (1 + 5 + 10 + 15)  # a player in at most one group
    assert all(len(g.members) == g.size for g in groups)


def test_size_one_agents_are_the_widest_coverage_players_not_the_most_accurate():
    responses, _skill = _world()
    singles = [g.members[0] for g in group_humans_paper(responses) if g.size == 1]  # skill from accuracy
    assert sorted(singles) == [f"wide{i}" for i in range(5)]
    most_accurate = sorted(responses, key=lambda p: -(sum(responses[p].values()) + 1) / (len(responses[p]) + 2))[:5]
    assert not set(singles) & set(most_accurate)


def test_members_have_similar_skill_and_the_group_maximises_coverage():
    responses, skill = _world()
    groups = [g for g in group_humans_paper(responses, skill=skill) if g.size > 1]

    def spread(members: tuple[str, ...]) -> float:
        return max(skill[m] for m in members) - min(skill[m] for m in members)

    rng = random.Random(1)
    random_groups = [tuple(rng.sample(list(responses), g.size)) for g in groups]
    assert max(spread(g.members) for g in groups) <= 0.45
    assert sum(spread(g.members) for g in groups) < 0.3 * sum(spread(m) for m in random_groups)
    for g in groups:
        assert not any(_twin(m) in g.members for m in g.members if m.startswith("p")), g.id  # a twin adds nothing
        assert g.n_items == len(set().union(*(responses[m] for m in g.members)))
    by_skill_alone = [g for g in group_humans_paper(responses, skill=skill, window=1) if g.size > 1]
    assert sum(g.n_items for g in groups) > 1.3 * sum(g.n_items for g in by_skill_alone)


def test_deterministic_bounded_and_combined_by_majority():
    responses, skill = _world()
    assert group_humans_paper(responses, skill=skill) == group_humans_paper(dict(reversed(list(responses.items()))), skill=skill)
    few = dict(list(responses.items())[:40])  # 40 players: 5 singles, 5 fives, 1 ten, no fifteen
    assert [g.size for g in group_humans_paper(few)] == [1] * 5 + [5] * 5 + [10]
    assert [g.size for g in group_humans_paper(responses, sizes=(15, 1), per_size=2)] == [1, 1, 15, 15]
    with pytest.raises(ValueError):
        group_humans_paper(responses, per_size=0)
    groups = group_humans_paper({"a": {"q1": 1, "q2": 0}, "b": {"q1": 1, "q3": 1}, "c": {"q1": 0}}, sizes=(3,))
    assert [(r["query_id"], r["ruling"]) for r in group_responses(groups, {"a": {"q1": 1, "q2": 0}, "b": {"q1": 1, "q3": 1}, "c": {"q1": 0}})] == [
        ("q1", 1), ("q2", 0), ("q3", 1)
    ]
