"""The CAIMIRA paper's grouping of humans as a fit option: 20 group agents, recorded with the fit."""

from __future__ import annotations

import random

import pytest

from quizsite.agents.models import Agent
from quizsite.items.models import Item, ItemSet, Response
from quizsite.research.forms import FitForm
from quizsite.research.models import FitRun
from quizsite.research.prepare import DataSpec, prepare

N_PLAYERS = 170  # 155 are needed for 5 groups of each size 1, 5, 10, 15


@pytest.fixture
def players(db):  # type: ignore[no-untyped-def]
    """Players of known skill and coverage: 5 "wide" ones (many items, weak), 5 "sharp" ones (few items, all
    right), the rest random; one AI system, which grouping leaves alone."""
    rng = random.Random(0)
    item_set = ItemSet.objects.create(slug="g", name="grouping world")
    items = Item.objects.bulk_create(
        [Item(item_set=item_set, external_id=f"i{j}", kind="archaeology", text=f"Question {j}?", answer=f"A{j}") for j in range(60)]
    )
    plan: dict[str, tuple[int, float]] = {f"wide{i}": (50, 0.3) for i in range(5)}
    plan |= {f"sharp{i}": (3, 1.0) for i in range(5)}
    plan |= {f"p{i}": (rng.randrange(5, 25), rng.random()) for i in range(N_PLAYERS - 10)}
    agents = {name: Agent.objects.create(kind="human", name=name) for name in plan}
    agents["bot"] = Agent.objects.create(kind="ai", name="bot")
    plan["bot"] = (60, 0.5)
    rows = []
    for name, (n, skill) in plan.items():
        for item in rng.sample(items, n):
            ok = rng.random() < skill
            rows.append(Response(agent=agents[name], item=item, source="annotation", correct=ok, verdict="accept" if ok else "reject"))
    Response.objects.bulk_create(rows)
    return agents


def test_paper_grouping_builds_twenty_disjoint_group_agents(players):
    prepared = prepare(DataSpec(item_sets=["g"], grouping="paper"))
    assert prepared.counts["agents_by_kind"] == {"ai": 1, "human_group": 20}
    groups = [a for a in prepared.agents if a["type"] == "human_group"]
    assert sorted(a["size"] for a in groups) == [1] * 5 + [5] * 5 + [10] * 5 + [15] * 5
    members = [m for a in groups for m in a["members"]]
    assert len(members) == len(set(members)) == 155
    singles = {a["members"][0] for a in groups if a["size"] == 1}
    assert singles == {players[f"wide{i}"].public_id for i in range(5)}  # widest coverage, not the sharp ones
    assert prepared.grouping == prepared.counts["human_grouping"] == {
        "scheme": "paper", "groups_per_size": 5, "sizes": [1, 5, 10, 15], "seed": 0,
        "combine": "majority of members who answered; tie drawn (seeded)",
        "groups_by_size": {"1": 5, "5": 5, "10": 5, "15": 5},
        "players": N_PLAYERS, "players_grouped": 155, "players_left_out": N_PLAYERS - 155,
    }
    # the existing schemes stay as they were
    assert prepare(DataSpec(item_sets=["g"], grouping="groups", group_sizes=[1])).counts["agents_by_kind"] == {
        "ai": 1, "human_group": N_PLAYERS}
    assert prepare(DataSpec(item_sets=["g"])).grouping == {"scheme": "individual"}


def test_fit_caimira_paper_grouping_is_recorded_with_the_fit(players, research_cache, client, staff):
    from django.core.management import call_command
    from django.urls import reverse

    call_command("fit_caimira", "--wait", "--embedder", "hashing-16", "--epochs", "5", "--dims", "2", "--sets", "g",
                 "--grouping", "paper", "--group-sizes", "1,5", "--groups-per-size", "3", "--label", "paper")
    run = FitRun.objects.get(label="paper")
    assert run.status == "succeeded", run.error
    assert run.settings["data"]["grouping"] == "paper" and run.settings["data"]["groups_per_size"] == 3
    recorded = run.metrics["data"]["meta"]["human_grouping"]
    assert recorded["scheme"] == "paper" and recorded["groups_by_size"] == {"1": 3, "5": 3}
    assert run.counts["human_grouping"] == recorded
    client.force_login(staff)
    page = client.get(reverse("research:fit_detail", args=[run.pk])).content.decode()
    assert "paper, sizes 1, 5, 3 per size, 152 players in no group" in page


def test_fit_form_offers_the_paper_grouping(players):
    form = FitForm(data={"agent_kinds": ["human"], "grouping": "paper", "group_sizes": "1,5,10,15", "groups_per_size": 5,
                         "model": "caimira", "dims": 2, "embedder": "hashing-32", "template": "default", "val_fraction": 0.1,
                         "seed": 0, "n_clusters": 3})
    assert form.is_valid(), form.errors
    assert form.spec.data.grouping == "paper" and form.spec.data.groups_per_size == 5
    assert FitForm.initial_from(form.spec.as_dict())["grouping"] == "paper"


def _as_imported(players):  # type: ignore[no-untyped-def]
    for name, agent in players.items():
        agent.external_id = f"ext-{name}"
        agent.meta = {"imported_from": "g"}
        agent.save(update_fields=["external_id", "meta"])


def _content(prepared, name_of):  # type: ignore[no-untyped-def]
    """A prepared data set with every pseudonym replaced by the agent's name: what must not depend on them."""
    import irt

    agents = [name_of.get(a["id"], a["id"]) for a in prepared.agents]
    members = {a["id"]: sorted(name_of[m] for m in a["members"]) for a in prepared.agents if a["type"] == "human_group"}
    responses = [(name_of.get(r["agent_id"], r["agent_id"]), r["query_id"], r["ruling"]) for r in prepared.responses]
    data = irt.FitData.from_records(prepared.queries, prepared.agents, prepared.responses)
    from irt.train import hash_split

    split = hash_split(data.split_keys("pair"), 0.1, 0).tolist()
    return agents, members, responses, split


@pytest.mark.parametrize("grouping", ["paper", "individual"])
def test_imported_rows_give_the_same_fit_data_whatever_pseudonyms_the_installation_drew(players, grouping):
    # The same file imported into two databases differs only in the pseudonyms each drew (at random):
    # agent order, groups and the validation split must not follow them.
    from quizsite.agents.models import new_pseudonym

    _as_imported(players)
    spec = DataSpec(item_sets=["g"], grouping=grouping)
    first = _content(prepare(spec), {a.public_id: n for n, a in players.items()})
    for agent in players.values():
        agent.public_id = new_pseudonym()
        agent.save(update_fields=["public_id"])
    second = _content(prepare(spec), {a.public_id: n for n, a in players.items()})
    assert first[0] == second[0]  # agent order
    assert first[1] == second[1]  # who is in which group
    assert first[2] == second[2]  # responses, in order
    assert first[3] == second[3]  # the validation split


def test_only_imported_agents_get_a_key_of_their_external_id(db):
    from quizsite.research.prepare import agent_split_key

    imported = Agent.objects.create(kind="human", name="p", external_id="u1", meta={"imported_from": "s"})
    again = Agent.objects.create(kind="human", name="p", external_id="u1", meta={"imported_from": "other"})
    crowd = Agent.objects.create(kind="human", name="Prolific worker", external_id="prolific:5f00d")
    player = Agent.objects.create(kind="human", name="Ann")
    ai = Agent.objects.create(kind="ai", name="gpt-x")
    assert agent_split_key(imported) == agent_split_key(again) != imported.public_id
    assert "u1" not in agent_split_key(imported)
    # a crowd worker's platform id is never written out, hashed or not: its pseudonym it is
    assert agent_split_key(crowd) == crowd.public_id and agent_split_key(player) == player.public_id
    assert agent_split_key(ai) == agent_split_key(Agent(kind="ai", name="gpt-x")) != ai.public_id
