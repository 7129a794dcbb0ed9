"""Ruling reports: a researcher upholds or overrules; the override sits beside the untouched original."""

from __future__ import annotations

import pytest
from django.urls import reverse

from quizsite.agents.models import Agent
from quizsite.items.models import Response, ResponseOverride, RulingReport
from quizsite.research import services


@pytest.fixture
def reported(world):
    response = Response.objects.filter(agent__kind="human", correct=False).order_by("id").first()
    reporter = response.agent
    other = Agent.objects.create(kind="human", name="teammate")
    first = RulingReport.objects.create(response=response, reporter=reporter, comment="I was right")
    RulingReport.objects.create(response=response, reporter=other, comment="agree")
    return first


def test_overrule_records_override_beside_original(reported, staff):
    original = Response.objects.get(pk=reported.response_id)
    services.report_resolve(report=reported, by=staff, overrule=True, verdict="accept", note="alias")
    override = ResponseOverride.objects.get(response=original)
    assert (override.by, override.verdict, override.correct, override.note) == (staff, "accept", True, "alias")
    assert override.at is not None
    again = Response.objects.get(pk=original.pk)
    assert (again.verdict, again.correct, again.given) == (original.verdict, original.correct, original.given)
    assert set(RulingReport.objects.values_list("status", flat=True)) == {"overruled"}  # both reports answered
    with pytest.raises(ValueError):
        services.report_resolve(report=reported, by=staff, overrule=False)


def test_uphold_writes_no_override(reported, staff):
    services.report_resolve(report=reported, by=staff, overrule=False)
    assert not ResponseOverride.objects.exists()
    assert set(RulingReport.objects.values_list("status", flat=True)) == {"upheld"}


def test_override_verdict_is_accept_or_reject(reported, staff):
    with pytest.raises(ValueError):
        services.response_override(response=reported.response, by=staff, verdict="prompt")


def test_review_page(client, staff, reported):
    client.force_login(staff)
    page = client.get(reverse("research:reports")).content.decode()
    assert "I was right" in page and reported.response.given in page and reported.reporter.public_id in page
    response = client.post(reverse("research:report_resolve", args=[reported.pk]), {"decision": "reject", "note": ""})
    assert response.status_code == 302
    override = ResponseOverride.objects.get()
    assert override.verdict == "reject" and override.correct is False and override.note == "I was right"
    page = client.get(reverse("research:reports")).content.decode()
    assert "No open reports." in page and "reject by res" in page
    assert client.post(reverse("research:report_resolve", args=[reported.pk]), {"decision": "bogus"}).status_code == 302


def test_review_page_names_the_judge_rule(client, staff, reported):
    response = reported.response
    response.meta = {**(response.meta or {}), "rule": "wrong_name"}
    response.judge_version = "1.1"
    response.save(update_fields=["meta", "judge_version"])
    client.force_login(staff)
    page = client.get(reverse("research:reports")).content.decode()
    assert "rule wrong_name, judge 1.1" in page
