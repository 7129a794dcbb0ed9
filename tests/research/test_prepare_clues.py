"""AI answers per clue: every position of a tossup is its own q_k; backfill only refines a single buzz."""

from __future__ import annotations

import json
from datetime import timedelta

from django.utils import timezone

from quizsite.agents.models import Agent
from quizsite.items.models import Response
from quizsite.research.prepare import DataSpec, prepare


def _answers(agent, item, rows):  # type: ignore[no-untyped-def]
    """rows: (clue_index, correct, seconds after a fixed time); created_at is set so time order is data."""
    base = timezone.now() - timedelta(days=1)
    for clue, correct, sec in rows:
        r = Response.objects.create(agent=agent, item=item, source="agent_run", given="x", correct=correct,
                                    verdict="accept" if correct else "reject", clue_index=clue)
        Response.objects.filter(pk=r.pk).update(created_at=base + timedelta(seconds=sec))


def _mine(prepared, agent):  # type: ignore[no-untyped-def]
    return {r["query_id"]: r["ruling"] for r in prepared.responses if r["agent_id"] == agent.public_id}


def _snapshot(prepared):  # type: ignore[no-untyped-def]
    counts = {k: v for k, v in prepared.counts.items() if k != "max_response_id"}
    return json.dumps([prepared.queries, prepared.agents, prepared.responses, counts], sort_keys=True, default=str)


ROWS = {
    # asked after every clue: wrong, wrong, right -> each its own q_k
    "steady": [(0, False, 1), (1, False, 2), (2, True, 3)],
    # changes its mind: right after clue 1, wrong after clue 3 -> q_1 = 1, q_3 = 0, nothing said about q_2
    "fickle": [(0, True, 1), (2, False, 3)],
    # two answers after clue 2: the earlier by time (correct) counts, whichever row was stored first
    "twice": [(1, False, 9), (1, True, 5)],
    # one buzz: backfilled as before (wrong at clue 2 -> wrong at q_1, q_2)
    "once": [(1, False, 1)],
}
WANT = {
    "steady": {"world/t0_1": 0, "world/t0_2": 0, "world/t0_3": 1},
    "fickle": {"world/t0_1": 1, "world/t0_3": 0},
    "twice": {"world/t0_2": 1, "world/t0_3": 1},
    "once": {"world/t0_1": 0, "world/t0_2": 0},
}


def test_ai_answers_at_every_clue_map_to_their_own_items_in_any_insertion_order(world):
    item = world["items"][0]  # 3 clues
    bots = {name: Agent.objects.create(kind="ai", name=name) for name in ROWS}
    snapshots = []
    for order in (1, -1):  # the same responses, inserted in two orders
        Response.objects.filter(agent__in=bots.values()).delete()
        for name in list(ROWS)[::order]:
            _answers(bots[name], item, ROWS[name][::order])
        prepared = prepare(DataSpec())
        assert {name: _mine(prepared, bot) for name, bot in bots.items()} == WANT
        snapshots.append(_snapshot(prepared))
    assert snapshots[0] == snapshots[1]


def test_imported_predictions_with_clue_index_keep_every_clue(world, tmp_path):
    from quizsite.agents.predictions import predictions_import

    lines = [{"item_set": "world", "item_id": "t0", "guess": g, "clue_index": k}
             for k, g in ((0, "London"), (1, "Rome"), (2, "Paris"))]
    for name, ordered in (("model-a", lines), ("model-b", lines[::-1])):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps({**line, "agent": name}) + "\n" for line in ordered))
        predictions_import(path=path)
    prepared = prepare(DataSpec(agent_kinds=["ai"]))
    got = {name: _mine(prepared, Agent.objects.get(kind="ai", name=name)) for name in ("model-a", "model-b")}
    assert got["model-a"] == got["model-b"] == {"world/t0_1": 0, "world/t0_2": 0, "world/t0_3": 1}


def test_a_players_first_record_still_counts_and_is_backfilled(world):
    item, player = world["items"][0], world["agents"][3]
    assert player.kind == "human"
    Response.objects.filter(agent=player, item=item).delete()
    _answers(player, item, [(2, False, 9), (0, True, 5)])  # the earlier (by time) buzz: right at clue 1
    on_t0 = {q: r for q, r in _mine(prepare(DataSpec()), player).items() if q.startswith("world/t0_")}
    assert on_t0 == {"world/t0_1": 1, "world/t0_2": 1, "world/t0_3": 1}
