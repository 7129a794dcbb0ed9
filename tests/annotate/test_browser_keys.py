"""In a real browser: a practice item shows right/wrong and the correct answer; `s` opens the skip-or-flag box
and nothing is skipped before the confirm step says yes; keys do nothing while the annotator types; the
research index's tables scroll inside their card at phone width. Screenshots go to var/screenshots/."""

from __future__ import annotations

from pathlib import Path

import pytest

from quizsite.annotate.models import Assignment
from tests.conftest import launch_chromium, needs_chromium

SHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}


def _consent(page, url: str) -> None:  # type: ignore[no-untyped-def]
    page.goto(url)
    page.check("#agree")
    with page.expect_navigation():
        page.click("#consent-submit")
    with page.expect_navigation():
        page.keyboard.press("Enter")  # instructions -> first item


def _shoot(page, name: str) -> None:  # type: ignore[no-untyped-def]
    SHOTS.mkdir(parents=True, exist_ok=True)
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        page.screenshot(path=str(SHOTS / f"{name}-{label}.png"), full_page=True)


@pytest.mark.browser
@pytest.mark.slow
@needs_chromium
def test_practice_feedback_and_s_asks_before_skipping(make_campaign, live_server, monkeypatch):
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # ORM checks below run beside Playwright's loop
    make_campaign("ghigliottina-choose", "ghig", per_item=2, practice=1)
    make_campaign("archaeology-write", "arch", slug="w", per_item=2)
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            page = browser.new_page(viewport=PHONE)
            page.set_default_timeout(30000)
            _consent(page, f"{live_server.url}/annotate/c/?PROLIFIC_PID=keys-1")
            assert page.locator(".item-head .pill").inner_text() == "practice"
            practice = Assignment.objects.get(role="training")
            solution = practice.item.data["choices"][practice.item.data["label"]]
            page.keyboard.press(str(practice.choices.index(solution) + 1))
            with page.expect_navigation():
                page.keyboard.press("Enter")
            assert page.url.endswith("/annotate/c/feedback/")
            assert page.locator("#feedback-verdict").inner_text() == "Right."
            assert solution in page.locator("section.card").inner_text()
            _shoot(page, "annotate-practice-feedback")
            with page.expect_navigation():
                page.keyboard.press("Enter")

            # a real item: s opens the box, and asks before it skips
            real = Assignment.objects.get(role="pool", state="leased")
            assert not page.locator("#skip-box").evaluate("d => d.open")
            page.keyboard.press("s")
            assert page.locator("#skip-box").evaluate("d => d.open")
            assert page.locator("#skip-reasons").is_visible() and page.locator("#skip-cancel").is_visible()
            page.keyboard.press("2")
            assert page.locator("#skip-reasons input").nth(1).is_checked()
            page.keyboard.press("Enter")
            assert page.locator("#skip-confirm").is_visible() and page.locator("#skip-yes").is_visible()
            _shoot(page, "annotate-skip-confirm")
            page.set_viewport_size(PHONE)
            assert Assignment.objects.get(pk=real.pk).state == "leased"  # asked, not skipped
            page.keyboard.press("Escape")  # back from the confirm step
            assert not page.locator("#skip-confirm").is_visible() and page.locator("#skip-box").evaluate(
                "d => d.open"
            )
            page.keyboard.press("Escape")  # closes the box
            assert not page.locator("#skip-box").evaluate("d => d.open")
            assert Assignment.objects.get(pk=real.pk).state == "leased"
            page.keyboard.press("s")
            page.keyboard.press("Enter")
            with page.expect_navigation():
                page.keyboard.press("y")
            skipped = Assignment.objects.get(pk=real.pk)
            assert skipped.state == "skipped" and skipped.note == "flag: unclear"
            _shoot(page, "annotate-item")

            # archaeology-write: s and digits are text while the annotator types
            page.set_viewport_size(PHONE)
            _consent(page, f"{live_server.url}/annotate/w/")
            page.locator("#answer-text").click()
            page.keyboard.type("Is this s1?")
            assert page.locator("#answer-text").input_value() == "Is this s1?"
            assert not page.locator("#skip-box").evaluate("d => d.open")
        finally:
            browser.close()


@pytest.mark.browser
@pytest.mark.slow
@needs_chromium
def test_research_index_tables_stay_inside_their_card_on_a_phone(db, live_server, admin_user, monkeypatch):
    from django.conf import settings
    from django.test import Client
    from playwright.sync_api import sync_playwright

    from quizsite.research.models import FitRun

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    for n in range(3):
        FitRun.objects.create(label=f"nightly fit of every item set, run {n}", status=FitRun.Status.SUCCEEDED)
    client = Client()
    client.force_login(admin_user)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            context = browser.new_context(viewport=PHONE)
            context.add_cookies(
                [{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_server.url}]
            )
            page = context.new_page()
            page.goto(f"{live_server.url}/research/")
            assert page.locator("table.runs").count() == 1
            overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 0, f"the page scrolls sideways by {overflow}px"
            card = page.locator("table.runs").locator("xpath=ancestor::section[1]").bounding_box()
            wrapper = page.locator("table.runs").locator("xpath=..")
            box = wrapper.bounding_box()
            assert card and box and box["x"] + box["width"] <= card["x"] + card["width"] + 0.5
            assert wrapper.evaluate("w => getComputedStyle(w).overflowX") == "auto"
            assert wrapper.evaluate("w => w.scrollWidth > w.clientWidth")  # the table scrolls inside its card
            _shoot(page, "research-index")
        finally:
            browser.close()
