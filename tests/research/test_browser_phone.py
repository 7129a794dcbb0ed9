"""At a phone's width (390 px) the AI agents pages (the agents list, an agent's page with its runs), a fit's
item list and a fit's page of one item fit the screen: wide tables scroll inside their card, the item filter
and long item ids wrap; the page itself never scrolls sideways."""

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


@pytest.mark.browser
@pytest.mark.slow
@needs_chromium
@pytest.mark.django_db(transaction=True)
def test_a_fit_item_page_fits_a_phone(live_server, staff, world, research_cache, monkeypatch):
    """A fit's page of one item (relevance and difficulty per dimension, p(correct) per agent) was wider
    than a 390 px phone: its heading, the item's set and id as one long word, ran past the screen. The
    heading wraps; the tables scroll inside their cards."""
    from django.test import Client

    from quizsite.items.models import ItemSet, Response
    from quizsite.research import fits, services
    from quizsite.research.fits import FitSpec

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    # names as the QANTA-2026 release has them: a long set slug, 20-character ids, owner/model AI names
    ItemSet.objects.filter(slug="world").update(slug="qanta2026_adversarial")
    item, cold = world["items"][0], world["items"][1]
    for tossup, external_id in ((item, "2qjNtyR0Nu4o5kUO7P0k"), (cold, "OQitnm4abxopSfLNgZpP")):
        tossup.external_id = external_id
        tossup.save(update_fields=["external_id"])
    Response.objects.filter(item=cold).delete()  # not in the fit: its page shows cold-start columns
    for n, agent in enumerate(a for a in world["agents"] if a.kind == "ai"):
        agent.name = f"divyagoyal6224/moksh_tossup_multimodal_qa_{n}"
        agent.save(update_fields=["name"])
    spec = FitSpec(embedder="hashing-16", max_epochs=10, dims=5)
    run = fits.fit_run_execute(fit_id=services.fitrun_create(spec=spec).pk)
    assert run.status == "succeeded", run.error
    client = Client()
    client.force_login(staff)
    with browser_page(live_server, client=client, viewport=PHONE) as page:
        for shown in (item, cold):
            page.goto(f"{live_server.url}/research/fits/{run.pk}/items/{shown.pk}/")
            assert page.locator("table.params").count() == 1 and page.locator("table.pred").count() == 1
            assert page.evaluate("() => window.innerWidth") == 390
            overflow = page_overflow(page)
            assert overflow <= 0, f"{shown.external_id}: the page is {overflow} px wider than the phone"
