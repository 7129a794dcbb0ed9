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
