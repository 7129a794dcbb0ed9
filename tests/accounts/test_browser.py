"""People in Debian's chromium: a guest plays a tossup, signs up from the top bar and keeps the score; a
researcher who is not staff uses the research pages and the API docs but not the admin. Screenshots of the
profile and research pages at desktop and phone width go to var/screenshots/ for a reviewer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.accounts.conftest import PASSWORD
from tests.conftest import TOSSUPS, free_port, launch_chromium, needs_chromium
from tests.e2e.servers import REPO, app_env, asgi_server, manage, migrate_and_import, stop, wait_http

pytestmark = [pytest.mark.browser, pytest.mark.slow, needs_chromium]
SHOTS = REPO / "var" / "screenshots"
SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}


@pytest.fixture(scope="module")
def app(tmp_path_factory):  # type: ignore[no-untyped-def]
    """One server for the module (the tests sign up different people): a start costs seconds."""
    tmp_path = tmp_path_factory.mktemp("accounts_browser")
    env = app_env(tmp_path / "var")
    fixture = tmp_path / "acc.jsonl"
    fixture.write_text("\n".join(json.dumps(t) for t in TOSSUPS) + "\n")
    migrate_and_import(env, fixture, "--set", "acc", "--name", "Accounts set")
    port = free_port()
    proc = asgi_server(port, env, tmp_path / "server.log")
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc)
        yield f"http://127.0.0.1:{port}", env
    finally:
        stop(proc)


def shoot(browser, url: str, name: str, cookies) -> None:  # type: ignore[no-untyped-def]
    """The page at both widths, signed in with the same session cookies."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    for size, viewport in SIZES.items():
        context = browser.new_context(viewport=viewport)
        context.add_cookies(cookies)
        page = context.new_page()
        page.goto(url)
        page.wait_for_load_state("networkidle")
        page.screenshot(path=str(SHOTS / f"{name}-{size}.png"), full_page=True)
        context.close()


def sign_up(page, base: str, username: str) -> None:  # type: ignore[no-untyped-def]
    page.click("#nav-signup")
    page.fill("#id_username", username)
    page.fill("#id_email", f"{username}@example.org")
    page.fill("#id_password1", PASSWORD)
    page.fill("#id_password2", PASSWORD)
    with page.expect_navigation():
        page.click("form.account-form button[type=submit]")


def test_a_guest_who_played_signs_up_and_keeps_the_score(app):
    from playwright.sync_api import expect, sync_playwright

    base, _ = app
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            context = browser.new_context(viewport=SIZES["phone"])
            page = context.new_page()
            page.set_default_timeout(20000)
            shoot(browser, f"{base}/accounts/signup/", "signup", [])
            shoot(browser, f"{base}/accounts/login/", "login", [])
            page.goto(f"{base}/play/")
            page.fill("input[name=name]", "Ada")
            page.fill("#room-name", "acc-room")
            page.select_option("select[name=set]", "acc")
            with page.expect_navigation():
                page.click("#join-room")
            expect(page.locator("#status")).to_contain_text("Press Next")  # joined: the socket has its hello
            page.keyboard.press("n")
            expect(page.locator("#text")).to_contain_text("W01")
            page.keyboard.press("Space")
            expect(page.locator("#answer-form")).to_be_visible()
            page.fill("#answer-input", "zanzibar")
            page.keyboard.press("Enter")
            expect(page.locator("#scoreboard")).to_contain_text("15")

            sign_up(page, base, "ada")
            assert "/play/acc-room/" in page.url  # back where the guest was
            expect(page.locator("#nav-profile")).to_have_text("ada")
            expect(page.locator("#scoreboard")).to_contain_text("15")  # the same player, the same score

            page.click("#nav-profile")
            expect(page.locator("#fig-buzzes")).to_have_text("1")
            expect(page.locator("#fig-accuracy")).to_have_text("1.00")
            expect(page.locator("#recent")).to_contain_text("zanzibar")
            shoot(browser, page.url, "profile", context.cookies())

            page.click("#nav-signout")
            expect(page.locator("#nav-signin")).to_be_visible()
        finally:
            browser.close()


def test_a_researcher_who_is_not_staff_uses_research_pages_not_the_admin(app):
    from playwright.sync_api import expect, sync_playwright

    base, env = app
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            context = browser.new_context(viewport=SIZES["desktop"])
            page = context.new_page()
            page.set_default_timeout(20000)
            page.goto(f"{base}/play/")
            sign_up(page, base, "rita")
            page.goto(f"{base}/research/")
            expect(page.locator("#forbidden")).to_be_visible()  # not yet a researcher: 403, with the reason
            manage(env, "grant", "rita", "researcher")
            page.goto(f"{base}/play/")
            page.click("a[href='/research/']")  # the top bar now offers Research
            expect(page.locator("nav.subnav")).to_contain_text("Fits")
            page.click("text=API docs")
            expect(page.locator(".swagger-ui")).to_contain_text("Thinkalike API")
            page.goto(f"{base}/accounts/profile/")
            page.click("#token-new")
            key = page.locator("#token-key").text_content()
            assert key and len(key) == 40
            shoot(browser, f"{base}/research/", "research-index", context.cookies())
            shoot(browser, f"{base}/research/exports/", "research-exports", context.cookies())
            shoot(browser, f"{base}/api/docs/", "api-docs", context.cookies())
            shoot(browser, f"{base}/accounts/profile/", "profile-researcher", context.cookies())
            page.goto(f"{base}/admin/")
            assert "/admin/login/" in page.url  # the admin is not a researcher's
            assert Path(SHOTS / "research-index-phone.png").stat().st_size > 0
        finally:
            browser.close()
