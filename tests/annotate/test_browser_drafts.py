"""In a real browser: text typed on an item survives a reload (sessionStorage, keyed by campaign and item)
and is gone once the answer is sent; the server's clock still times the item from when it was first shown."""

from __future__ import annotations

import time

import pytest

from quizsite.annotate.models import Assignment
from quizsite.items.models import Response
from tests.annotate.test_browser_keys import PHONE, _consent
from tests.conftest import browser_page, needs_chromium

DRAFTS = "() => Object.keys(sessionStorage).filter(k => k.startsWith('annotate-draft:')).sort()"


@pytest.mark.browser
@pytest.mark.slow
@needs_chromium
def test_typed_text_survives_a_reload_until_it_is_sent(make_campaign, live_server, monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # ORM checks below run beside Playwright's loop
    make_campaign("archaeology-write", "arch", slug="w", per_item=1)
    make_campaign("ghigliottina-open", "ghig", slug="o", per_item=1, timer_seconds=60)
    make_campaign("archaeology-author", "arch", slug="au", quota=2)
    with browser_page(live_server, viewport=PHONE) as page:
        # archaeology-write: the question box and the skip note both come back after a reload
        _consent(page, f"{live_server.url}/annotate/w/")
        first = page.locator("input[name=assignment]").first.input_value()
        item_id = Assignment.objects.get(pk=first).item_id
        page.locator("#answer-text").click()
        page.keyboard.type("What does the passage answer?")
        page.keyboard.press("Escape")
        page.keyboard.press("s")
        page.keyboard.press("f")
        page.keyboard.type("the passage is cut short")
        assert page.evaluate(DRAFTS) == [f"annotate-draft:w:item-{item_id}"]
        page.reload()
        assert page.locator("input[name=assignment]").first.input_value() == first  # the same lease
        assert page.locator("#answer-text").input_value() == "What does the passage answer?"
        assert page.locator("#skip-note").input_value() == "the passage is cut short"
        page.locator("#answer-text").press("Control+End")
        page.keyboard.type(" Really?")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert Response.objects.get(agent__external_id="", item_id=item_id).given == "What does the passage answer? Really?"
        assert page.evaluate(DRAFTS) == []  # sent: the draft is gone
        assert page.locator("input[name=assignment]").first.input_value() != first
        assert page.locator("#answer-text").input_value() == "" and page.locator("#skip-note").input_value() == ""

        # ghigliottina-open: the word comes back, the timer does not start again
        _consent(page, f"{live_server.url}/annotate/o/")
        lease = Assignment.objects.get(campaign__slug="o", state="leased")
        served = lease.served_at
        page.locator("#answer-text").type("dur")
        time.sleep(1.5)
        page.reload()
        assert page.locator("#answer-text").input_value() == "dur"
        assert Assignment.objects.get(pk=lease.pk).served_at == served
        assert int(page.locator("#timer").get_attribute("data-remaining-ms")) <= 60000 - 1500
        with page.expect_navigation():
            page.keyboard.press("Enter")  # the restored word, focused, is sent as typed
        answer = Response.objects.get(item_id=lease.item_id, agent__external_id="")
        assert answer.given == "dur" and answer.duration_ms >= 1500  # timed from the first showing
        assert page.evaluate(DRAFTS) == []

        # authoring: an entry half written comes back
        _consent(page, f"{live_server.url}/annotate/au/")
        page.fill("textarea[name=question]", "Why do rivers meander?")
        page.locator("textarea[name=question]").press("Control+End")
        page.keyboard.type("!")
        page.reload()
        assert page.locator("textarea[name=question]").input_value() == "Why do rivers meander?!"
