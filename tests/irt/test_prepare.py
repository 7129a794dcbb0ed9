"""Clue items, buzz to clue, backfill, grouped human agents."""

from __future__ import annotations

import pytest

from irt.prepare import (
    backfill,
    buzz_clue,
    buzz_rulings,
    clue_at,
    clue_items,
    clue_word_ends,
    group_agents,
    group_humans,
    group_responses,
    majority_vote,
    split_clues,
)

TOSSUP = (
    'This composer wrote a "Farewell" symphony. He taught Beethoven briefly! Which Austrian, '
    "nicknamed Papa, wrote The Creation? For 10 points, name this composer."
)


def test_split_clues():
    assert split_clues(TOSSUP) == [
        'This composer wrote a "Farewell" symphony.',
        "He taught Beethoven briefly!",
        "Which Austrian, nicknamed Papa, wrote The Creation?",
        "For 10 points, name this composer.",
    ]
    assert split_clues('He said "stop." Then left.') == ['He said "stop."', "Then left."]
    assert split_clues("  no end punctuation  ") == ["no end punctuation"]
    assert split_clues("") == []
    assert split_clues("Pi is 3.14 here. Yes.") == ["Pi is 3.14 here.", "Yes."]
    # documented limit: abbreviations end a clue
    assert split_clues("Mr. Smith came.") == ["Mr.", "Smith came."]


def test_clue_items_are_cumulative():
    items = clue_items("q7", TOSSUP)
    assert [i.id for i in items] == ["q7_1", "q7_2", "q7_3", "q7_4"]
    assert items[1].text == 'This composer wrote a "Farewell" symphony. He taught Beethoven briefly!'
    assert items[3].total_clues == 4 and items[3].n_clues == 4 and items[0].orig_qid == "q7"
    q = items[0].as_query(answer="Haydn")
    assert q["id"] == "q7_1" and q["answer"] == "Haydn" and q["n_clues"] == 1
    assert clue_items("q", ["a.", "b."])[1].text == "a. b."


def test_buzz_to_clue():
    clues = split_clues(TOSSUP)
    ends = clue_word_ends(clues)
    assert ends == [6, 10, 17, 23]
    assert buzz_clue(0, clues) == 1
    assert buzz_clue(5, clues) == 1
    assert buzz_clue(6, clues) == 2
    assert buzz_clue(16, clues) == 3
    assert buzz_clue(17, clues) == 4
    assert buzz_clue(99, clues) == 4  # after the end: the last clue
    assert clue_at(10, [10, 20]) == 2  # character offsets work the same way
    with pytest.raises(ValueError):
        clue_at(-1, ends)


def test_backfill_rule():
    assert backfill(5, 3, True) == {3: 1, 4: 1, 5: 1}
    assert backfill(5, 3, False) == {1: 0, 2: 0, 3: 0}
    assert backfill(3, None, False) == {1: 0, 2: 0, 3: 0}
    assert backfill(4, 1, True) == {1: 1, 2: 1, 3: 1, 4: 1}
    assert buzz_rulings("q7", 4, 2, False) == [("q7_1", 0), ("q7_2", 0)]
    with pytest.raises(ValueError):
        backfill(4, 5, True)


def test_majority_vote_and_seeded_ties():
    assert majority_vote([1, 1, 0]) == 1
    assert majority_vote([0, 0, 1, 1, 0]) == 0
    draws = {majority_vote([1, 0], seed=s, key=("g", "q")) for s in range(40)}
    assert draws == {0, 1}  # a tie is a coin flip...
    assert majority_vote([1, 0, 1, 0], seed=3, key=("g", "q")) == majority_vote([0, 1, 0, 1], seed=3, key=("g", "q"))
    ties = [majority_vote([1, 0], seed=0, key=("g", f"q{i}")) for i in range(400)]
    assert 0.4 < sum(ties) / 400 < 0.6  # ...with p = vote share = 1/2


def _players(n=40):
    # p0..p19 strong, p20..p39 weak; player i answers 8 items of a 100-item bank, with overlaps
    resp = {}
    for i in range(n):
        strong = i < n // 2
        items = [(i * 3 + k) % 100 for k in range(8)]
        resp[f"p{i}"] = {f"t{j}": int(strong or j % 3 == 0) for j in items}
    return resp


def test_group_humans_similar_skill_max_coverage():
    resp = _players()
    groups = group_humans(resp, sizes=(1, 3, 5))
    by_size = {s: [g for g in groups if g.size == s] for s in (1, 3, 5)}
    assert len(by_size[1]) == 40 and len(by_size[3]) == 13 and len(by_size[5]) == 8
    for s, gs in by_size.items():
        members = [m for g in gs for m in g.members]
        assert len(members) == len(set(members))  # disjoint within a size
        assert all(len(g.members) == s for g in gs)
    # skill bands: the first groups hold strong players only, the last weak players only
    strong = {f"p{i}" for i in range(20)}
    assert set(by_size[3][0].members) <= strong and set(by_size[5][0].members) <= strong
    assert not set(by_size[3][-1].members) & strong and not set(by_size[5][-1].members) & strong
    assert by_size[3][0].skill > by_size[3][-1].skill
    # coverage: the greedy choice beats taking the next players in skill order (who overlap)
    g = by_size[3][0]
    covered = set().union(*(resp[m] for m in g.members))
    assert g.n_items == len(covered)
    ranked = sorted(resp, key=lambda p: (-(sum(resp[p].values()) + 1) / (len(resp[p]) + 2), p))
    naive = set().union(*(resp[m] for m in ranked[:3]))
    assert len(covered) > len(naive)


def test_group_humans_is_deterministic_and_bounded():
    resp = _players()
    assert group_humans(resp, sizes=(3,)) == group_humans(dict(reversed(list(resp.items()))), sizes=(3,))
    assert len(group_humans(resp, sizes=(3,), max_groups=2)) == 2
    assert group_humans(resp, sizes=(41,)) == []
    with pytest.raises(ValueError):
        group_humans(resp, sizes=(0,))


def test_group_responses_and_agents():
    resp = {"a": {"q1": 1, "q2": 0}, "b": {"q1": 1, "q3": 1}, "c": {"q1": 0, "q2": 0}}
    groups = group_humans(resp, sizes=(3,))
    rows = group_responses(groups, resp, seed=0)
    assert [r["query_id"] for r in rows] == ["q1", "q2", "q3"]
    assert [r["ruling"] for r in rows] == [1, 0, 1]
    assert {r["agent_id"] for r in rows} == {"human_group:3:1"}
    agents = group_agents(groups)
    assert agents[0]["type"] == "human_group" and agents[0]["size"] == 3 and agents[0]["n_items"] == 3


def test_pipeline_from_buzzes_to_a_fit(fake_encoder, tmp_path):
    """Tossups and buzzes -> clue items, backfilled rulings, human groups -> a recorded fit."""
    import json

    import numpy as np

    import irt

    rng = np.random.default_rng(0)
    tossups = {f"t{i}": " ".join(f"Clue {k} of tossup {i} about topic {i % 5}." for k in range(1, 5)) for i in range(30)}
    queries = [c.as_query(answer=f"answer {t}") for t, text in tossups.items() for c in irt.clue_items(t, text)]
    players: dict[str, dict[str, int]] = {}
    for p in range(20):
        rulings: dict[str, int] = {}
        for t, text in tossups.items():
            if rng.random() < 0.5:
                continue
            clues = irt.split_clues(text)
            word = int(rng.integers(0, 40))
            correct = bool(rng.random() < 0.3 + 0.03 * p)
            rulings.update(irt.buzz_rulings(t, len(clues), irt.buzz_clue(word, clues), correct))
        players[f"p{p}"] = rulings
    groups = irt.group_humans(players, sizes=(1, 5))
    agents = irt.group_agents(groups)
    responses = irt.group_responses(groups, players, seed=0)
    data = irt.FitData.from_records(queries, agents, responses,
                                    meta={"human_grouping": {"sizes": [1, 5], "seed": 0}})
    data = irt.with_embeddings(data, model="fake", encoder=fake_encoder, cache=tmp_path)
    res = irt.fit(data, irt.FitConfig(dims=2, max_epochs=30))
    out = irt.save_fit(res, tmp_path / "fit", agents=data.agents)
    m = json.loads((out / "metrics.json").read_text())
    assert m["data"]["meta"] == {"human_grouping": {"sizes": [1, 5], "seed": 0}}
    assert m["data"]["embedder"] == {"model": "fake", "template": "default"}
    assert set(m["per_agent_type"]["train"]) == {"human_group"}
    assert len(agents) == 20 + 4 and m["n_items"] == 120


def test_tossup_rulings_single_buzz_backfills_several_clues_do_not():
    from irt import tossup_rulings

    assert tossup_rulings(4, [(2, True)]) == {2: 1, 3: 1, 4: 1}
    assert tossup_rulings(4, [(3, False)]) == {1: 0, 2: 0, 3: 0}
    assert tossup_rulings(4, [(2, True), (2, False)]) == {2: 1, 3: 1, 4: 1}  # one clue, twice: the first counts
    assert tossup_rulings(4, [(1, False), (2, False), (4, True)]) == {1: 0, 2: 0, 4: 1}  # no backfill into q_3
    assert tossup_rulings(4, [(4, True), (2, False), (1, False)]) == tossup_rulings(4, [(1, False), (2, False), (4, True)])
    assert tossup_rulings(4, [(3, True), (1, False), (3, False)]) == {1: 0, 3: 1}
    assert tossup_rulings(4, []) == {}
    with pytest.raises(ValueError):
        tossup_rulings(4, [(5, True)])
