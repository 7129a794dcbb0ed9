"""At a phone's width (390 px) the AI agents pages (the agents list, an agent's page with its runs) and a fit's
item list fit the screen: wide tables scroll inside their card, the item filter wraps; the page itself never
scrolls sideways."""

from __future__ import annotations

import pytest

from tests.conftest import PHONE, browser_page, needs_chromium, page_overflow
from tests.research.conftest import make_researcher


@pytest.mark.browser
@pytest.mark.slow
@needs_chromium
@pytest.mark.django_db(transaction=True)
def test_agents_pages_and_fit_items_fit_a_phone(live_server, django_user_model, tossup_set, monkeypatch):
    from django.test import Client

    from quizsite.agents import runs, selectors
    from quizsite.research.models import FitItem, FitRun

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    user = make_researcher(django_user_model.objects.create_user("res", password="pw"))
    client = Client()
    client.force_login(user)
    assert client.get("/research/agents/").status_code == 200  # makes the built-in agents
    runs.agentrun_create(version=selectors.agentversion_resolve("retriever-bm25"), item_set=tossup_set.item_set)
    fit = FitRun.objects.create(status=FitRun.Status.SUCCEEDED, settings={"dims": 2, "model": "caimira"})
    FitItem.objects.create(fit=fit, key="t/marked_1", item=tossup_set, clue=1, relevance=[0.5, 0.5], difficulty=[1, 2],
                           effective_difficulty=[0.5, 1.0])
    with browser_page(live_server, client=client, viewport=PHONE) as page:
        for path, table in (
            ("/research/agents/", "#agents"),
            ("/research/agents/retriever-bm25/", "table.runs"),
            (f"/research/fits/{fit.pk}/items/", "table.items"),
        ):
            page.goto(f"{live_server.url}{path}")
            assert page.locator(table).count() == 1, path
            assert page.evaluate("() => window.innerWidth") == 390
            assert page.evaluate("() => document.documentElement.scrollWidth") <= 390, f"{path}: {page_overflow(page)}px"
        button = page.locator("form.card button[type=submit]").bounding_box()
        assert button and button["x"] + button["width"] <= 390
