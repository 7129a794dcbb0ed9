"""The admin shows responses but cannot change a ruling: overruling is a researcher's, through the research
reports page, which records a ResponseOverride (tests/research/test_reports.py::test_review_page and
tests/research/test_roles.py::test_report_overrule_needs_a_researcher cover that path)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from quizsite.agents.models import Agent
from quizsite.core.roles import is_researcher
from quizsite.items.models import Response, ResponseOverride


@pytest.fixture
def response(tossup_set) -> Response:
    agent = Agent.objects.create(kind="human", name="h")
    return Response.objects.create(agent=agent, item=tossup_set, source="live", given="zanzibar", verdict="reject",
                                   correct=False, score=0, points=0, room="r")


def _clerk(django_user_model, *codenames: str) -> Client:
    """A staff account with model permissions on responses but not the research one."""
    clerk = django_user_model.objects.create_user("clerk", is_staff=True)
    clerk.user_permissions.add(*Permission.objects.filter(content_type__app_label="items", codename__in=codenames))
    assert not is_researcher(clerk)
    client = Client()
    client.force_login(clerk)
    return client


def _edit(response: Response) -> dict[str, str]:
    """The change form as a browser would post it, with the verdict flipped."""
    return {
        "agent": str(response.agent_id), "item": str(response.item_id), "source": response.source,
        "given": response.given, "verdict": "accept", "correct": "on", "score": "1", "points": "10",
        "room": response.room, "meta": "{}", "_save": "Save",
    }


@pytest.mark.django_db
def test_staff_without_the_research_permission_cannot_overrule_in_the_admin(response, django_user_model):
    client = _clerk(django_user_model, "view_response", "change_response", "delete_response")
    url = reverse("admin:items_response_change", args=[response.pk])
    assert client.post(url, _edit(response)).status_code == 403
    response.refresh_from_db()
    assert (response.verdict, response.correct) == ("reject", False)
    assert not ResponseOverride.objects.exists()

    page = client.get(url)
    assert page.status_code == 200
    assert reverse("research:reports") in page.content.decode()  # where overruling is done
    assert 'name="verdict"' not in page.content.decode()  # shown, not a form field

    assert client.post(reverse("admin:items_response_delete", args=[response.pk]), {"post": "yes"}).status_code == 403
    assert client.post(reverse("admin:items_response_changelist"),
                       {"action": "delete_selected", "_selected_action": [response.pk], "post": "yes"}).status_code == 200
    assert Response.objects.filter(pk=response.pk).exists()


@pytest.mark.django_db
def test_not_even_a_superuser_edits_a_response_in_the_admin(response, admin_client):
    """A superuser is a researcher: the research page is theirs too, and the admin would leave no record."""
    url = reverse("admin:items_response_change", args=[response.pk])
    assert admin_client.post(url, _edit(response)).status_code == 403
    assert admin_client.get(reverse("admin:items_response_add")).status_code == 403
    response.refresh_from_db()
    assert response.verdict == "reject" and not ResponseOverride.objects.exists()
