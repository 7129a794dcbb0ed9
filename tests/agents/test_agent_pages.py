"""The agent pages as a researcher drives them (Django test client); everyone else gets 403."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from quizsite.agents.models import AgentConfig, AgentRun
from quizsite.items.models import Response


@pytest.fixture
def researcher(db, django_user_model, client):
    user = django_user_model.objects.create_user("res", password="pw")
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_non_researchers_get_403(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("player", password="pw", is_staff=True))
    for url in (reverse("research:agent_list"), reverse("research:agent_detail", args=["qb-guesser-tfidf"])):
        assert client.get(url).status_code == 403
    assert (
        client.post(reverse("research:agent_list"), {"name": "x", "kind": "retriever-bm25"}).status_code
        == 403
    )
    assert not AgentConfig.objects.exists()


@pytest.mark.django_db
def test_register_start_watch_and_read_results(researcher, halves, django_capture_on_commit_callbacks):
    home = researcher.get(reverse("research:index")).content.decode()
    assert reverse("research:agent_list") in home
    page = researcher.get(reverse("research:agent_list")).content.decode()
    assert "qb-guesser-tfidf" in page and "retriever-bm25" in page
    bad = researcher.post(
        reverse("research:agent_list"), {"name": "mine", "kind": "retriever-bm25", "settings": '{"k": 0}'}
    )
    assert bad.status_code == 200 and "k must be an integer" in bad.content.decode()
    bad = researcher.post(
        reverse("research:agent_list"), {"name": "mine", "kind": "retriever-bm25", "settings": "{k"}
    )
    assert "not JSON" in bad.content.decode() and not AgentConfig.objects.filter(name="mine").exists()
    ok = researcher.post(
        reverse("research:agent_list"), {"name": "mine", "kind": "retriever-bm25", "settings": '{"k": 3}'}
    )
    assert ok.status_code == 302 and ok["Location"] == reverse("research:agent_detail", args=["mine"])
    config = AgentConfig.objects.get(name="mine")
    version = config.versions.get()
    assert version.settings["k"] == 3 and version.settings["collection"] == ""
    with django_capture_on_commit_callbacks(execute=True):
        started = researcher.post(
            reverse("research:agent_detail", args=["mine"]),
            {"version": version.pk, "item_set": "halves-late"},
        )
    run = AgentRun.objects.get()
    assert started["Location"] == reverse("research:agent_run", args=[run.pk])
    assert 'id="progress-bar"' in researcher.get(started["Location"]).content.decode()
    progress = researcher.get(reverse("research:agent_run_progress", args=[run.pk])).json()
    assert (
        progress["status"] == "done"
        and progress["done"] == progress["total"] > 0
        and progress["percent"] == 100.0
    )
    detail = researcher.get(reverse("research:agent_detail", args=["mine"])).content.decode()
    assert "halves-late" in detail and 'id="curve"' in detail and "<polyline" in detail
    assert Response.objects.filter(agent=version.agent).count() == progress["total"]
    run.refresh_from_db()  # the runs table shows accuracy as the results table above it does (it said 972‰)
    assert f"<td>{round(run.correct / run.done, 4)}</td>" in detail and "‰" not in detail


@pytest.mark.django_db
def test_cancel_and_resume_buttons(researcher, halves):
    from quizsite.agents import runs, selectors
    from quizsite.items.models import ItemSet

    researcher.get(reverse("research:agent_list"))  # makes the built-in agents
    run = runs.agentrun_create(
        version=selectors.agentversion_resolve("retriever-bm25"),
        item_set=ItemSet.objects.get(slug="halves-late"),
    )
    assert "Cancel" in researcher.get(reverse("research:agent_run", args=[run.pk])).content.decode()
    researcher.post(reverse("research:agent_run_cancel", args=[run.pk]))
    run.refresh_from_db()
    assert run.status == "cancelled"
    assert "Resume" in researcher.get(reverse("research:agent_run", args=[run.pk])).content.decode()
    researcher.post(reverse("research:agent_run_resume", args=[run.pk]))
    run.refresh_from_db()
    assert run.status == "queued"


@pytest.mark.django_db
def test_results_put_the_agent_beside_humans_on_the_same_clue_prefixes(halves, tmp_path):
    """A CAIMIRA-format release: humans' rulings are on clue-prefix items; the agent answers the rebuilt
    tossups after each clue. The curve pairs them by clue."""
    import json

    from quizsite.agents.models import AgentConfig
    from quizsite.agents.selectors import agent_results
    from quizsite.items.importers import items_import

    clues = ["This novel's narrator asks to be called Ishmael.", "Its captain hunts a white whale."]
    queries = [
        {
            "id": f"t1_{k}",
            "text": " ".join(clues[:k]),
            "answer": "Moby-Dick",
            "orig_qid": "t1",
            "n_clues": k,
            "total_clues": 2,
        }
        for k in (1, 2)
    ]
    rulings = [("t1_1", "h1", 0), ("t1_1", "h2", 1), ("t1_2", "h1", 1), ("t1_2", "h2", 1)]
    (tmp_path / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries) + "\n")
    (tmp_path / "agents.jsonl").write_text(
        "\n".join(json.dumps({"id": h, "name": h, "type": "human"}) for h in ("h1", "h2")) + "\n"
    )
    (tmp_path / "responses.jsonl").write_text(
        "\n".join(json.dumps({"query_id": q, "agent_id": a, "ruling": r}) for q, a, r in rulings) + "\n"
    )
    items_import(fmt="caimira", path=tmp_path, set_slug="rel")
    from .helpers import run_agent

    run = run_agent("retriever-bm25", "rel", name="bm")
    assert run.status == "done" and run.total == 2
    results = agent_results(AgentConfig.objects.get(name="bm"))
    assert [(p["clue"], p["n"], p["human_n"], p["human_accuracy"]) for p in results["curve"]] == [
        (1, 1, 2, 0.5),
        (2, 1, 2, 1.0),
    ]
    ((row,),) = [results["sets"]]
    assert (row["slug"], row["human_n"], row["human_accuracy"]) == ("rel", 4, 0.75)
