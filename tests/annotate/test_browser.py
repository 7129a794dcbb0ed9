"""One real browser run: consent, instructions, three items answered by keyboard only, the end page."""

from __future__ import annotations

import pytest

from quizsite.items.models import Response
from tests.conftest import launch_chromium, needs_chromium


@pytest.mark.browser
@pytest.mark.slow
@needs_chromium
def test_consent_three_items_by_keyboard_end_page(make_campaign, live_server, monkeypatch):
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # ORM checks below run beside Playwright's loop
    make_campaign("ghigliottina-choose", "ghig", per_item=2, quota=3)
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            page = browser.new_page(viewport={"width": 390, "height": 844})  # phone width
            page.set_default_timeout(30000)
            page.goto(f"{live_server.url}/annotate/c/?PROLIFIC_PID=pw-1&STUDY_ID=s")
            page.check("#agree")
            with page.expect_navigation():
                page.click("#consent-submit")
            assert page.url.endswith("/annotate/c/instructions/")
            with page.expect_navigation():
                page.keyboard.press("Enter")
            assert page.url.endswith("/annotate/c/item/")
            shown = []
            for n in range(3):
                assert page.locator("#progress").get_attribute("value") == str(n)
                assert page.locator(".clues li").count() == 5
                shown.append(page.locator("label.choice span").first.inner_text())
                page.keyboard.press("1")
                assert page.locator("label.choice input").first.is_checked()
                with page.expect_navigation():
                    page.keyboard.press("Enter")
            assert page.url.endswith("/annotate/c/done/")
            assert page.locator("#completion-code").inner_text().strip() == "CODE-123"
        finally:
            browser.close()
    rows = list(Response.objects.order_by("id"))
    assert [r.given for r in rows] == shown
    assert all(r.meta["choice_index"] == 0 and r.duration_ms is not None and r.source == "annotation" for r in rows)
    assert len({r.agent_id for r in rows}) == 1 and rows[0].agent.external_id == "prolific:pw-1"
