"""The read-only API: token authentication, researcher-only permission, pagination, filters, pseudonyms."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from quizsite.agents.models import Agent
from quizsite.items.models import Response
from quizsite.research import fits, services
from quizsite.research.fits import FitSpec


def token_client(user) -> APIClient:  # type: ignore[no-untyped-def]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


@pytest.fixture
def api(staff):
    return token_client(staff)


def test_anonymous_and_non_researchers_are_refused(world, django_user_model):
    for url in ("/api/responses/", "/api/items/", "/api/agents/", "/api/fits/", "/api/schema/"):
        assert APIClient().get(url).status_code == 401
    player = django_user_model.objects.create_user("player")
    assert token_client(player).get("/api/responses/").status_code == 403
    assert APIClient().get("/api/responses/", HTTP_AUTHORIZATION="Token not-a-token").status_code == 401


def test_researcher_group_member_may_read(world, django_user_model):
    member = django_user_model.objects.create_user("analyst")
    member.groups.add(Group.objects.get_or_create(name="researcher")[0])
    assert token_client(member).get("/api/items/").status_code == 200


def test_api_is_read_only(api, world):
    assert api.post("/api/items/", {"text": "x"}).status_code == 405
    assert api.delete(f"/api/agents/{world['agents'][0].public_id}/").status_code == 405


def test_responses_cursor_pages_filters_and_pseudonyms(api, world):
    total = Response.objects.count()
    page = api.get("/api/responses/", {"page_size": 10}).json()
    assert len(page["results"]) == 10 and page["next"] and "count" not in page
    seen = [r["response_id"] for r in page["results"]]
    while page["next"]:
        page = api.get(page["next"]).json()
        seen += [r["response_id"] for r in page["results"]]
    assert seen == sorted(seen) and len(seen) == total
    humans = api.get("/api/responses/", {"agent_kind": "human", "page_size": 1000}).json()["results"]
    assert humans and all(r["agent_kind"] == "human" and r["agent_name"].startswith("h-") for r in humans)
    assert all("Player" not in str(r) for r in humans)
    first = humans[0]
    assert first["item_set"] == "world" and first["tossup_id"] == first["item_id"] and first["override_verdict"] is None
    assert api.get("/api/responses/", {"item_set": "nope"}).status_code == 400  # a typo, not an empty set
    assert api.get("/api/responses/", {"since": "not a date"}).status_code == 400


def test_agents_items_and_fits(api, world, research_cache):
    agents = api.get("/api/agents/", {"kind": "human"}).json()
    assert agents["count"] == 4 and all(a["name"] == a["id"] and a["id"].startswith("h-") for a in agents["results"])
    bot = Agent.objects.filter(kind="ai").first()
    assert api.get(f"/api/agents/{bot.public_id}/").json()["name"] == bot.name
    items = api.get("/api/items/", {"item_set": "world", "kind": "tossup"}).json()
    assert items["count"] == 6 and "clue_ends" in items["results"][0]["data"]
    run = fits.fit_run_execute(fit_id=services.fitrun_create(spec=FitSpec(embedder="hashing-16", max_epochs=10, dims=2)).pk)
    listing = api.get("/api/fits/", {"active": "true"}).json()
    assert listing["count"] == 1 and listing["results"][0]["id"] == run.pk and "artifact" not in listing["results"][0]
    detail = api.get(f"/api/fits/{run.pk}/").json()
    assert detail["status"] == "succeeded" and detail["dimension_names"] == ["dim 1", "dim 2"]
    fa = api.get(f"/api/fits/{run.pk}/agents/", {"kind": "human"}).json()
    assert fa["count"] == 4 and len(fa["results"][0]["skill"]) == 2
    fi = api.get(f"/api/fits/{run.pk}/items/", {"page_size": 5}).json()
    assert fi["count"] == run.counts["items"] and len(fi["results"]) == 5 and len(fi["results"][0]["relevance"]) == 2


def test_openapi_schema(api):
    response = api.get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    schema = response.json()
    for path in ("/api/responses/", "/api/items/", "/api/agents/", "/api/fits/", "/api/fits/{id}/agents/", "/api/fits/{id}/items/"):
        assert path in schema["paths"], path
    assert "tokenAuth" in schema["components"]["securitySchemes"]
