"""The profile page: figures against a small hand-made set of buzzes, the player's own data, API tokens for
researchers, and deleting the account (answers stay, pseudonymous); the API docs page and the favicon."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from rest_framework.authtoken.models import Token

from quizsite.accounts.selectors import profile_figures
from quizsite.agents.models import Agent
from quizsite.agents.services import agent_get_or_create_for_user
from quizsite.items.models import Response
from quizsite.play.models import Player, Room
from tests.accounts.conftest import sign_in, sign_up, signed_in_as


def buzz(agent, item, *, word_index, correct, given="x", points=None):  # type: ignore[no-untyped-def]
    verdict = {True: "accept", False: "reject", None: "prompt"}[correct]
    return Response.objects.create(
        agent=agent,
        item=item,
        source="live",
        given=given,
        verdict=verdict,
        correct=correct,
        word_index=word_index,
        n_words=20,
        points=points,
        room="r1",
    )


@pytest.fixture
def ada(client, tossups):  # type: ignore[no-untyped-def]
    """Ada's buzzes on 20-word tossups with the power mark after word 8 (History: t0, t1; Science: t2)."""
    sign_up(client, "ada")
    agent = agent_get_or_create_for_user(user=get_user_model().objects.get(username="ada"))
    t0, t1, t2 = tossups
    buzz(agent, t0, word_index=5, correct=True, points=15, given="answer 0")  # power, 0.75 left
    buzz(agent, t1, word_index=10, correct=False, points=-5)  # neg (before the end)
    buzz(agent, t1, word_index=20, correct=True, points=10)  # correct at the end: 0.0 left
    buzz(agent, t2, word_index=8, correct=True, points=15)  # power (at the mark), 0.6 left
    buzz(agent, t2, word_index=20, correct=False, points=0)  # wrong at the end: no neg
    buzz(agent, t2, word_index=12, correct=None)  # a prompt: not a ruling
    Response.objects.create(agent=agent, item=t0, source="annotation", given="=HYPERLINK(1)", correct=True)
    # another player's buzz must not count
    other = Agent.objects.create(kind="human", name="bob")
    buzz(other, t0, word_index=1, correct=True)
    return agent


def test_figures_from_hand_made_buzzes(ada):
    f = profile_figures(ada)
    assert (f.buzzes, f.correct) == (5, 3)
    assert f.accuracy == pytest.approx(3 / 5)
    assert f.celerity == pytest.approx((0.75 + 0.0 + 0.6) / 3)
    assert f.power_rate == pytest.approx(2 / 5)
    assert f.neg_rate == pytest.approx(1 / 5)
    by = {c.category: (c.buzzes, c.correct) for c in f.categories}
    assert by == {"History": (3, 2), "Science": (2, 1)}
    assert f.annotations == 1


def test_a_tossup_without_a_power_mark_has_no_power(ada, tossups):
    t0 = tossups[0]
    t0.data = {**t0.data, "power_index": None}
    t0.save()
    assert profile_figures(ada).power_rate == pytest.approx(1 / 5)  # only t2's buzz at the mark


def test_profile_page_shows_figures_and_the_buzz_point(client, ada):
    page = client.get("/accounts/profile/")
    assert page.status_code == 200
    html = page.content.decode()
    assert ada.public_id in html
    assert '<b id="fig-accuracy">0.60</b>' in html and '<b id="fig-celerity">0.45</b>' in html
    assert '<b id="fig-power">0.40</b>' in html and '<b id="fig-neg">0.20</b>' in html
    assert "<td>History</td><td>3</td><td>2</td><td>0.67</td>" in html
    recent = page.context["recent"]
    assert len(recent) == 5 and recent[-1].response.given == "answer 0"
    assert recent[-1].heard == "w00 w01 w02 w03 w04" and recent[-1].unheard.startswith("w05")
    assert 'id="api-token"' not in html  # not a researcher


def test_the_profile_needs_an_account(client, db):
    answer = client.get("/accounts/profile/")
    assert answer.status_code == 302 and answer["Location"].startswith("/accounts/login/")


def test_download_own_responses_as_csv_and_json_lines(client, ada):
    answer = client.get("/accounts/profile/responses.csv")
    assert (
        answer.status_code == 200
        and answer["Content-Disposition"] == 'attachment; filename="my-responses.csv"'
    )
    rows = list(csv.DictReader(io.StringIO(b"".join(answer.streaming_content).decode())))
    assert len(rows) == 7 and {r["item_set"] for r in rows} == {"acc"}
    assert rows[-1]["given"] == "'=HYPERLINK(1)"  # a spreadsheet never runs it
    lines = [
        json.loads(x)
        for x in b"".join(client.get("/accounts/profile/responses.jsonl").streaming_content).splitlines()
    ]
    assert len(lines) == 7 and lines[-1]["given"] == "=HYPERLINK(1)" and lines[0]["word_index"] == 5
    assert all(
        r["response_id"] in set(Response.objects.filter(agent=ada).values_list("pk", flat=True))
        for r in lines
    )
    assert client.get("/accounts/profile/responses.xlsx").status_code == 404


def test_deleting_the_account_keeps_the_answers_pseudonymous(client, ada):
    Player.objects.create(room=Room.objects.create(slug="r1"), agent=ada, name="Ada L.", score=15)
    Token.objects.create(user=ada.user)
    assert client.get("/accounts/delete/").status_code == 200
    refused = client.post("/accounts/delete/", {"confirm": "yes"})
    assert refused.status_code == 400 and get_user_model().objects.filter(username="ada").exists()
    answer = client.post("/accounts/delete/", {"confirm": "delete"})
    assert answer.status_code == 302 and signed_in_as(client) is None
    assert not get_user_model().objects.filter(username="ada").exists() and not Token.objects.exists()
    agent = Agent.objects.get(pk=ada.pk)
    assert agent.user is None and agent.name == "" and agent.public_id == ada.public_id
    assert Response.objects.filter(agent=agent).count() == 7
    assert Player.objects.get(agent=agent).name == "(deleted)"
    assert sign_in(Client(), "ada").status_code == 200  # the account is gone


def test_an_account_that_overruled_rulings_is_not_deleted_from_the_page(client, ada):
    from quizsite.items.models import ResponseOverride

    ResponseOverride.objects.create(
        response=Response.objects.first(), by=ada.user, verdict="accept", correct=True
    )
    answer = client.post("/accounts/delete/", {"confirm": "delete"})
    assert answer.status_code == 400 and b"overruled rulings" in answer.content
    assert get_user_model().objects.filter(username="ada").exists()


def test_a_researcher_creates_uses_replaces_and_revokes_a_token(client, db):
    sign_up(client, "rita")
    call_command("grant", "rita", "researcher")
    page = client.get("/accounts/profile/")
    assert b'id="api-token"' in page.content and b"You have no API token" in page.content
    assert client.post("/accounts/profile/token/").status_code == 302
    first = Token.objects.get(user__username="rita").key
    page = client.get("/accounts/profile/").content.decode()
    assert first in page and f'curl -H "Authorization: Token {first}"' in page
    api = Client(HTTP_AUTHORIZATION=f"Token {first}")
    assert api.get("/api/responses/").status_code == 200
    client.post("/accounts/profile/token/")
    second = Token.objects.get(user__username="rita").key
    assert second != first
    assert api.get("/api/responses/").status_code == 401  # the old key stopped working
    assert Client(HTTP_AUTHORIZATION=f"Token {second}").get("/api/responses/").status_code == 200
    client.post("/accounts/profile/token/revoke/")
    assert not Token.objects.exists()
    assert Client(HTTP_AUTHORIZATION=f"Token {second}").get("/api/responses/").status_code == 401


def test_a_player_cannot_make_a_token(client, db):
    sign_up(client, "pat")
    assert client.post("/accounts/profile/token/").status_code == 403
    assert not Token.objects.exists()
    assert client.get("/accounts/profile/token/").status_code in (403, 405)


def test_api_docs_page_serves_its_scripts_from_this_site(client, db):
    sign_up(client, "rita")
    call_command("grant", "rita", "researcher")
    page = client.get("/api/docs/")
    html = page.content.decode()
    assert page.status_code == 200 and "/static/drf_spectacular_sidecar/swagger-ui-dist/" in html
    assert "cdn." not in html and "unpkg" not in html and "/api/schema/" in html
    script = client.get("/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js")
    assert script.status_code == 200
    assert b'href="/api/docs/"' in client.get("/research/").content
    assert Client().get("/api/docs/").status_code == 302  # anonymous: sign in first


def test_favicon(client, db):
    answer = client.get("/favicon.ico")
    assert answer.status_code == 302 and answer["Location"] == "/static/favicon.svg"
    assert b"<svg" in b"".join(client.get("/static/favicon.svg"))  # an async stream (servestatic), read here in sync
    assert b'rel="icon"' in client.get("/play/").content
