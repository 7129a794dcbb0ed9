"""At a phone's width (390 px) the researcher's new-campaign form and a choose campaign's page (agreement,
macro-F1 and the answer-position table) fit the screen: nothing makes the whole page scroll sideways."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from quizsite.agents.models import Agent
from quizsite.annotate.services import (
    assignment_current,
    assignment_submit,
    participant_consent,
    participant_get_or_create,
)
from tests.conftest import PHONE, browser_page, needs_chromium, page_overflow

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _answer_everything(campaign, names: list[str]) -> None:  # type: ignore[no-untyped-def]
    for name in names:
        agent = Agent.objects.create(kind="human", name=name)
        p = participant_consent(participant=participant_get_or_create(campaign=campaign, agent=agent), now=T0)
        while (a := assignment_current(participant=p, now=T0)) is not None:
            assignment_submit(participant=p, assignment_id=a.pk, post={"choice": 0}, now=T0)


@pytest.mark.browser
@pytest.mark.slow
@needs_chromium
def test_new_campaign_form_and_position_table_fit_a_phone(make_campaign, live_server, admin_user, monkeypatch):
    from django.test import Client

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    campaign = make_campaign("archaeology-choose", "arch", per_item=2)
    _answer_everything(campaign, ["ann1", "ann2"])
    client = Client()
    client.force_login(admin_user)
    with browser_page(live_server, client=client, viewport=PHONE) as page:
        page.goto(f"{live_server.url}/annotate/manage/new/")
        assert page.locator("#campaign-form select[name=task]").count() == 1
        assert page.evaluate("() => window.innerWidth") == 390
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390, f"form: {page_overflow(page)}px"
        form = page.locator("#campaign-form").bounding_box()
        assert form and form["x"] >= 0 and form["x"] + form["width"] <= 390
        # a validation error (a long message) does not widen it either
        page.fill("input[name=slug]", "phone1")
        page.select_option("select[name=item_set]", "ghig")
        page.select_option("select[name=task]", "archaeology-choose")
        with page.expect_navigation():
            page.click("#campaign-form button[type=submit]")
        assert "has no archaeology items" in page.locator("#campaign-form .error").first.inner_text()
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390, f"form error: {page_overflow(page)}px"

        page.goto(f"{live_server.url}/annotate/manage/c/")
        assert page.locator("#positions tbody tr").count() == 3
        assert page.locator("#agreement-compare").count() == 1
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390, f"campaign page: {page_overflow(page)}px"
        table = page.locator("#positions").locator("xpath=..").bounding_box()
        assert table and table["x"] + table["width"] <= 390
