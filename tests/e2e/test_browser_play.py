"""A person in Debian's chromium: lobby, join a room, buzz with the space bar, answer, see ruling and score."""

import json

import pytest

from tests.conftest import TOSSUPS, free_port, launch_chromium, needs_chromium

from .servers import app_env, asgi_server, migrate_and_import, stop, wait_http

pytestmark = [pytest.mark.browser, pytest.mark.slow, needs_chromium]


def _serve(tmp_path, **env_extra):
    env = app_env(tmp_path / "var", **env_extra)
    fixture = tmp_path / "e2e.jsonl"
    fixture.write_text("\n".join(json.dumps(t) for t in TOSSUPS) + "\n")
    migrate_and_import(env, fixture, "--set", "e2e", "--name", "E2E set")
    port = free_port()
    proc = asgi_server(port, env, tmp_path / "server.log")
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(proc)


@pytest.fixture
def app_url(tmp_path):
    yield from _serve(tmp_path)


def test_join_buzz_with_space_answer_and_see_score(app_url, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            page = browser.new_page(viewport={"width": 390, "height": 844})  # phone width
            page.set_default_timeout(20000)
            page.goto(f"{app_url}/play/")
            page.fill("input[name=name]", "Ada")
            page.fill("#room-name", "browser-room")
            page.select_option("select[name=set]", "e2e")
            with page.expect_navigation():
                page.click("#join-room")
            assert "/play/browser-room/" in page.url
            expect(page.locator("#status")).to_contain_text("Press Next")
            page.keyboard.press("n")
            expect(page.locator("#text")).to_contain_text("W01")
            assert "Zanzibar" not in page.content()
            page.keyboard.press("Space")
            expect(page.locator("#answer-form")).to_be_visible()
            page.fill("#answer-input", "zanzibar")
            page.keyboard.press("Enter")
            expect(page.locator("#ruling")).to_contain_text("correct")
            expect(page.locator("#scoreboard")).to_contain_text("15")
            expect(page.locator("#answerline")).to_contain_text("Zanzibar")
            page.screenshot(path=str(tmp_path / "play-room.png"))
        finally:
            browser.close()


@pytest.fixture
def paced_app_url(tmp_path):
    """The app with joins from one address paced at one every 2 s, and a queue of at most 2 s."""
    yield from _serve(tmp_path, PLAY_IP_JOINS_PER_S="0.5", PLAY_JOIN_WAIT_MAX_S="2")


def test_a_join_refused_for_a_crowd_at_the_address_is_asked_again_by_the_page(paced_app_url):
    from playwright.sync_api import expect, sync_playwright
    from websockets.sync.client import connect

    ws_url = paced_app_url.replace("http", "ws") + "/ws/play/crowded/?set=e2e"
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        crowd = []
        try:
            page = browser.new_page()
            page.set_default_timeout(20000)
            frames: list[dict] = []
            page.on("websocket", lambda ws: ws.on("framereceived", lambda f: frames.append(json.loads(f))))
            page.goto(f"{paced_app_url}/play/crowded/?set=e2e")
            page.fill("#name-input", "Ada")
            # Two players of the same address join just before: the address's queue is then full for 2 s.
            for n in range(2):
                sock = connect(ws_url, origin=paced_app_url)
                sock.send(json.dumps({"type": "join", "name": f"hall{n}"}))
                crowd.append(sock)
            page.press("#name-input", "Enter")
            expect(page.locator("#status")).to_contain_text("Press Next", timeout=15000)
            kinds = [(f["type"], f.get("code")) for f in frames]
            assert ("error", "too_fast") in kinds, kinds  # the page's first join was refused ...
            assert kinds.index(("error", "too_fast")) < kinds.index(("hello", None))  # ... and its next one got in
            expect(page.locator("#chat-log")).not_to_contain_text("joining from your address")
        finally:
            for sock in crowd:
                sock.close()
            browser.close()
