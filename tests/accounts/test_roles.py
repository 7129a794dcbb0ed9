"""Roles through the pages a person uses: `grant`, a researcher who is not staff (research pages, the API,
campaigns; not the admin), an annotator (no research page, nobody else's answers), invite-only campaigns."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from rest_framework.authtoken.models import Token

from quizsite.annotate.models import Assignment
from quizsite.core.roles import has_role, is_researcher
from quizsite.items.models import Response
from tests.accounts.conftest import annotate_one, sign_in, sign_up


@pytest.fixture
def rita(client, db):  # type: ignore[no-untyped-def]
    sign_up(Client(), "rita", email="rita@example.org")
    return get_user_model().objects.get(username="rita")


def test_grant_and_revoke_by_username_or_email(rita, capsys):
    assert not is_researcher(rita)
    call_command("grant", "rita@example.org", "researcher")
    rita = get_user_model().objects.get(pk=rita.pk)
    assert is_researcher(rita) and not rita.is_staff and rita.groups.filter(name="researcher").exists()
    assert rita.has_perm("core.use_research")  # the group carries the permission
    call_command("grant", "rita", "researcher", "--revoke")
    assert not is_researcher(get_user_model().objects.get(pk=rita.pk))
    call_command("grant", "rita", "admin")
    rita = get_user_model().objects.get(pk=rita.pk)
    assert rita.is_staff and rita.is_superuser and has_role(rita, "admin") and is_researcher(rita)
    call_command("grant", "rita", "admin", "--revoke")
    rita = get_user_model().objects.get(pk=rita.pk)
    assert not rita.is_staff and not rita.is_superuser and not is_researcher(rita)
    assert "rita: admin no" in capsys.readouterr().out


def test_grant_refuses_unknown_accounts_and_roles(rita):
    with pytest.raises(CommandError, match="no account named 'nobody'"):
        call_command("grant", "nobody", "researcher")
    with pytest.raises(CommandError, match="everyone is a player"):
        call_command("grant", "rita", "player")
    with pytest.raises(CommandError, match="invalid choice"):
        call_command("grant", "rita", "wizard")
    with pytest.raises(CommandError, match="no campaign"):
        call_command("grant", "rita", "annotator", "--campaign", "nope")


def test_a_researcher_who_is_not_staff_uses_research_pages_and_the_api_but_not_the_admin(client, rita):
    call_command("grant", "rita", "researcher")
    sign_in(client, "rita")
    for url in (
        "/research/",
        "/research/fits/",
        "/research/exports/",
        "/annotate/manage/",
        "/api/responses/",
        "/api/docs/",
    ):
        assert client.get(url).status_code == 200, url
    assert b'href="/research/"' in client.get("/play/").content  # the top bar shows Research
    admin = client.get("/admin/")
    assert admin.status_code == 302 and admin["Location"].startswith("/admin/login/")
    assert b'href="/admin/"' not in client.get("/play/").content
    token = Token.objects.create(user=rita)
    api = Client(HTTP_AUTHORIZATION=f"Token {token.key}")
    assert api.get("/api/items/").status_code == 200
    assert api.get("/api/schema/").status_code == 200


def test_an_annotator_reaches_no_research_page_and_no_one_elses_answers(client, campaign, rita):
    sign_up(client, "anna")
    mine = annotate_one(client)
    other = Client()
    sign_up(other, "otto")
    theirs_page = other.post("/annotate/c/", {"agree": "yes"}) and other.get("/annotate/c/item/")
    theirs = theirs_page.context["assignment"]
    for url in (
        "/research/",
        "/research/exports/",
        "/research/exports/responses.csv",
        "/annotate/manage/",
        "/annotate/manage/c/",
        "/annotate/manage/c/?format=json",
    ):
        answer = client.get(url)
        assert answer.status_code == 403, url
    assert client.get("/api/responses/").status_code == 403
    assert client.get("/api/docs/").status_code == 403
    # answering (or skipping) another annotator's item changes nothing of theirs
    before = Response.objects.count()
    client.post("/annotate/c/item/", {"assignment": theirs.pk, "action": "answer", "choice": 0})
    client.post("/annotate/c/item/", {"assignment": theirs.pk, "action": "skip", "note": "x"})
    theirs.refresh_from_db()
    assert theirs.state == "leased" and theirs.response is None and Response.objects.count() == before
    # and no page of theirs shows this annotator's answer or theirs
    page = client.get("/annotate/c/item/")
    assert page.context["assignment"].pk not in (mine, theirs.pk)


def test_an_invite_only_campaign_admits_invited_accounts_only(client, campaign, rita):
    campaign.invite_only = True
    campaign.save()
    guest = Client()
    answer = guest.get("/annotate/c/")
    assert answer.status_code == 302 and answer["Location"].startswith("/accounts/login/?next=/annotate/c/")
    assert guest.get("/annotate/c/?PROLIFIC_PID=p1").status_code == 302  # a crowd link is no invitation
    sign_up(client, "anna")
    refused = client.get("/annotate/c/")
    assert refused.status_code == 403 and b"invited accounts only" in refused.content
    assert client.post("/annotate/c/", {"agree": "yes"}).status_code == 403
    call_command("grant", "anna", "annotator", "--campaign", "c")
    assert client.get("/annotate/c/").status_code == 200
    annotate_one(client)
    call_command("grant", "anna", "annotator", "--campaign", "c", "--revoke")
    assert client.get("/annotate/c/item/").status_code == 302  # back to the start page, which says why
    assert client.get("/annotate/c/").status_code == 403


def test_the_manage_page_invites_and_switches_invite_only(client, campaign, rita):
    call_command("grant", "rita", "researcher")
    sign_in(client, "rita")
    sign_up(Client(), "anna", email="anna@example.org")
    page = client.get("/annotate/manage/c/")
    assert page.status_code == 200 and b'id="invitations"' in page.content
    answer = client.post(
        "/annotate/manage/c/invitations/",
        {"logins": "anna@example.org", "invite_only": "on", "action": "invite"},
    )
    assert answer.status_code == 302
    campaign.refresh_from_db()
    assert campaign.invite_only and list(campaign.invited.values_list("username", flat=True)) == ["anna"]
    page = client.get("/annotate/manage/c/", follow=True)
    assert b"Invited 1 account(s)" in page.content and b"<code>anna</code>" in page.content
    unknown = client.post(
        "/annotate/manage/c/invitations/", {"logins": "anna, ghost", "action": "invite"}, follow=True
    )
    assert b"no account with the username or email: ghost" in unknown.content
    campaign.refresh_from_db()
    assert campaign.invite_only  # a failed invite changed nothing, the switch included
    client.post("/annotate/manage/c/invitations/", {"logins": "anna", "action": "uninvite"})
    assert not campaign.invited.exists()
    # researchers may always look at (and try) an invite-only campaign
    assert client.get("/annotate/c/").status_code == 200


def test_a_new_campaign_can_start_invite_only(client, campaign, rita):
    call_command("grant", "rita", "researcher")
    sign_in(client, "rita")
    answer = client.post(
        "/annotate/manage/new/",
        {
            "slug": "closed",
            "item_set": "arch",
            "task": "archaeology-choose",
            "per_item": 2,
            "quota": 0,
            "lease_minutes": 10,
            "timer_seconds": 60,
            "invite_only": "on",
            "invited": "rita",
        },
    )
    assert answer.status_code == 302, answer.content[:2000]
    from quizsite.annotate.models import Campaign

    made = Campaign.objects.get(slug="closed")
    assert made.invite_only and list(made.invited.all()) == [rita]


def test_assignment_rows_stay_with_their_annotator(campaign, client):
    sign_up(client, "anna")
    pk = annotate_one(client)
    assert Assignment.objects.get(pk=pk).participant.agent.user.username == "anna"
