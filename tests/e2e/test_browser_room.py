"""The play room as a moderator and players use it, in Debian's chromium: history, buzz markers and
statistics after a tossup; settings changed in the room and from the lobby; pause; one scoreboard
entry per player across a reconnect and a second tab. Screenshots go to var/screenshots/ (ignored)."""

import contextlib
import json

import pytest

from tests.conftest import TOSSUPS, free_port, launch_chromium, needs_chromium

from .servers import REPO, app_env, asgi_server, migrate_and_import, stop, wait_http

pytestmark = [pytest.mark.browser, pytest.mark.slow, needs_chromium]
SHOTS = REPO / "var" / "screenshots"
PICTURE = {
    "id": "picture",
    "question": "This harbour [Image: a harbour seen from the hills] is famous. Its (*) ships sail. For ten points, name it.",
    "answer": "{Valletta}",
    "category": "History",
    "difficulty": "College",
}
FAST = "ms_per_word=60&dead_ms=800&answer_ms=4000&set=e2e"


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    """One server for the module (each test plays in a room of its own): a start costs seconds."""
    tmp_path = tmp_path_factory.mktemp("browser_room")
    env = app_env(tmp_path / "var")
    fixture = tmp_path / "e2e.jsonl"
    fixture.write_text("\n".join(json.dumps(t) for t in [*TOSSUPS, PICTURE]) + "\n")
    migrate_and_import(env, fixture, "--set", "e2e", "--name", "E2E set")
    port = free_port()
    proc = asgi_server(port, env, tmp_path / "server.log")
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(proc)


@contextlib.contextmanager
def _one_page():
    """chromium with one page (20 s timeouts), closed after."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            page = browser.new_page()
            page.set_default_timeout(20000)
            yield page
        finally:
            browser.close()


def _enter(page, url: str, name: str) -> None:
    page.goto(url)
    dialog = page.locator("#name-dialog")
    if dialog.is_visible():
        page.fill("#name-input", name)
        page.keyboard.press("Enter")


def test_history_buzz_markers_and_stats_after_a_tossup(app_url):
    from playwright.sync_api import expect, sync_playwright

    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.set_default_timeout(20000)
            _enter(page, f"{app_url}/play/hist/?{FAST}&categories=Geography", "Ada")
            expect(page.locator("#status")).to_contain_text("Press Next")
            page.keyboard.press("n")
            expect(page.locator("#text")).to_contain_text("W02")
            page.keyboard.press("Space")
            expect(page.locator("#status")).to_have_text("You buzzed")
            page.fill("#answer-input", "madagascar")
            page.keyboard.press("Enter")
            expect(page.locator("#ruling")).to_contain_text("incorrect")
            # The tossup reads on to its end: the answer line rendered, a marker where Ada buzzed.
            expect(page.locator("#answerline u")).to_have_text("Zanzibar")
            expect(page.locator("#answerline")).not_to_contain_text("<b>")
            expect(page.locator("#answerline")).to_contain_text("[prompt on Zanzi]")
            marker = page.locator("#text .buzz-mark.reject")
            expect(marker).to_contain_text("Ada")
            expect(page.locator("#text .power-mark")).to_have_count(1)
            expect(page.locator("#stats")).to_contain_text("Heard by 1")
            entry = page.locator("#history .history-entry").first
            expect(entry.locator("u")).to_have_text("Zanzibar")
            expect(entry).to_contain_text("Ada: “madagascar”")
            expect(entry.locator(".stats-line")).to_contain_text("converted 0%")
            page.screenshot(path=str(SHOTS / "room-desktop.png"))
            page.set_viewport_size({"width": 390, "height": 844})
            box = page.locator("#buzz").bounding_box()
            assert (
                box is not None and box["width"] >= 300 and box["height"] >= 80
            )  # a big buzz area on a phone
            page.screenshot(path=str(SHOTS / "room-phone.png"))
            page.screenshot(path=str(SHOTS / "room-phone-full.png"), full_page=True)
            page.set_viewport_size({"width": 1280, "height": 800})

            # A reload: the history comes back with the hello, "I was right" still there for Ada's buzz.
            page.reload()
            entry = page.locator("#history .history-entry").first
            expect(entry).to_contain_text("Ada: “madagascar”")
            entry.get_by_role("button", name="I was right").click()
            expect(entry.get_by_role("button", name="Reported")).to_be_disabled()
            expect(page.locator("#chat-log")).to_contain_text("a researcher will review")
        finally:
            browser.close()


def test_settings_changed_in_the_room_reach_everyone_and_pause(app_url):
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            mod = browser.new_context().new_page()
            other = browser.new_context().new_page()
            for p in (mod, other):
                p.set_default_timeout(20000)
            _enter(mod, f"{app_url}/play/set-room/?{FAST}", "Mod")
            _enter(other, f"{app_url}/play/set-room/?{FAST}", "Pat")
            expect(mod.locator("#status")).to_contain_text("Press Next")
            mod.select_option("#set-select", "e2e")
            expect(mod.locator("#difficulty-label")).to_be_visible()  # this set has difficulties
            mod.check("#category-boxes input[value=History]")
            mod.check("#category-boxes input[value=Geography]")
            mod.select_option("#difficulty-select", "College")
            mod.check("#auto-next")
            mod.click("#apply-settings")
            # Geography has no College tossup but History does: the pair is fine.
            expect(mod.locator("#settings-msg")).to_have_text("Settings applied.")
            expect(other.locator("#category-boxes input[value=History]")).to_be_checked()
            expect(other.locator("#auto-next")).to_be_checked()
            mod.uncheck("#category-boxes input[value=History]")
            mod.click("#apply-settings")
            expect(mod.locator("#settings-msg")).to_contain_text("Not applied: no tossups match")
            mod.check("#category-boxes input[value=History]")
            mod.uncheck("#auto-next")
            mod.locator("#pace").fill("300")  # slow enough to pause mid-tossup
            mod.click("#apply-settings")
            expect(mod.locator("#settings-msg")).to_have_text("Settings applied.")

            expect(other.locator("#pace-out")).to_have_text("300 ms/word")
            mod.click("#next")  # only the College History tossup matches: it has a picture
            expect(other.locator("#text .img-ph")).to_be_visible()
            expect(other.locator("#text")).not_to_contain_text("Image:")
            mod.click("#pause")
            expect(other.locator("#status")).to_contain_text("Paused by Mod")
            expect(other.locator("#buzz")).to_be_disabled()
            shown = other.locator("#text").inner_text()
            other.wait_for_timeout(700)
            assert other.locator("#text").inner_text() == shown  # nothing read while paused
            other.click("#pause")
            expect(mod.locator("#status")).to_contain_text("Reading")
            expect(other.locator("#text")).to_contain_text("sail.")
        finally:
            browser.close()


def test_lobby_join_applies_its_settings_to_an_existing_room(app_url):
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            first = browser.new_page()
            first.set_default_timeout(20000)
            _enter(first, f"{app_url}/play/lobby-room/", "Early")
            expect(first.locator("#status")).to_contain_text("Press Next")
            page = browser.new_context().new_page()
            page.set_default_timeout(20000)
            page.goto(f"{app_url}/play/")
            page.fill("input[name=name]", "Late")
            page.fill("#room-name", "lobby-room")
            page.select_option("select[name=set]", "e2e")
            page.select_option("select[name=categories]", ["History"])
            page.fill("input[name=ms_per_word]", "300")
            with page.expect_navigation():
                page.click("#join-room")
            expect(page.locator("#settings-msg")).to_have_text("Your lobby settings were applied.")
            expect(first.locator("#pace-out")).to_have_text("300 ms/word")
            expect(first.locator("#category-boxes input[value=History]")).to_be_checked()

            # A choice that matches nothing is refused in the lobby, saying why.
            page.goto(f"{app_url}/play/")
            page.fill("#room-name", "lobby-room")
            page.select_option("select[name=categories]", ["Geography"])
            page.select_option("select[name=difficulty]", "College")
            page.click("#join-room")
            expect(page.locator("#lobby-error")).to_contain_text("no tossups match")
        finally:
            browser.close()


def test_the_lobby_name_wins_over_the_remembered_one_and_an_error_keeps_the_form(app_url):
    """A browser that joined a room by link as "Bob" and then picks "Robert" in the lobby plays as Robert
    (the page used to prefer the name it remembered); a refused lobby form shows what was sent."""
    from playwright.sync_api import expect

    with _one_page() as page:
        _enter(page, f"{app_url}/play/names-room/", "Bob")
        expect(page.locator("#scoreboard")).to_contain_text("Bob")
        page.goto(f"{app_url}/play/")
        expect(page.locator("#lobby-name")).to_have_value("Bob")  # the name this browser used last
        page.fill("#lobby-name", "Robert")
        page.fill("#room-name", "names-room")
        with page.expect_navigation():
            page.click("#join-room")
        expect(page.locator("#scoreboard")).to_contain_text("Robert")
        expect(page.locator("#scoreboard")).not_to_contain_text("Bob")

        page.goto(f"{app_url}/play/")
        page.fill("#room-name", "!!!")
        page.select_option("select[name=set]", "e2e")
        page.select_option("select[name=categories]", ["History", "Geography"])
        page.fill("input[name=ms_per_word]", "300")
        page.check("input[name=auto_next]")
        page.select_option("select[name=auto_next_ms]", "10000")
        page.click("#join-room")
        expect(page.locator("#lobby-error")).to_contain_text("letters, digits or dashes")
        expect(page.locator("#room-name")).to_have_value("!!!")
        expect(page.locator("select[name=set]")).to_have_value("e2e")
        assert sorted(page.eval_on_selector("select[name=categories]",
                                            "s => [...s.selectedOptions].map(o => o.value)")) == ["Geography", "History"]
        expect(page.locator("input[name=ms_per_word]")).to_have_value("300")
        expect(page.locator("input[name=auto_next]")).to_be_checked()
        expect(page.locator("select[name=auto_next_ms]")).to_have_value("10000")
        expect(page.locator("#lobby-name")).to_have_value("Robert")


def _hold_the_buzzer(page, room_url: str, answer_ms: int) -> None:  # type: ignore[no-untyped-def]
    """Ada enters the room, starts a tossup and buzzes on its third word: the answer box is open."""
    from playwright.sync_api import expect

    _enter(page, f"{room_url}?ms_per_word=60&dead_ms=800&answer_ms={answer_ms}&set=e2e&categories=Geography", "Ada")
    expect(page.locator("#status")).to_contain_text("Press Next")
    page.keyboard.press("n")
    expect(page.locator("#text")).to_contain_text("W02")
    page.keyboard.press("Space")
    expect(page.locator("#answer-input")).to_be_visible()


def test_a_reload_while_holding_the_buzzer_gives_the_answer_box_back_to_you(app_url):
    """The page used to say "<your own name> is answering" after the reload, as if someone else held it."""
    from playwright.sync_api import expect

    with _one_page() as page:
        _hold_the_buzzer(page, f"{app_url}/play/hold-reload/", answer_ms=15000)
        page.reload()
        expect(page.locator("#answer-input")).to_be_visible()
        expect(page.locator("#status")).to_have_text("You are answering")


def test_scoreboard_lists_a_player_once_across_reconnect_and_second_tab(app_url):
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            ada = browser.new_context()
            tab1 = ada.new_page()
            tab1.set_default_timeout(20000)
            _enter(tab1, f"{app_url}/play/board/?{FAST}", "Ada")
            expect(tab1.locator("#scoreboard li")).to_have_count(1)
            tab2 = ada.new_page()  # same browser, same cookie: the same player
            tab2.set_default_timeout(20000)
            _enter(tab2, f"{app_url}/play/board/", "Ada")
            expect(tab2.locator("#scoreboard li")).to_have_count(1)
            bob = browser.new_context().new_page()
            bob.set_default_timeout(20000)
            _enter(bob, f"{app_url}/play/board/", "Bob")
            expect(bob.locator("#scoreboard li")).to_have_count(2)
            tab1.reload()  # a reconnect
            expect(tab1.locator("#scoreboard li")).to_have_count(2)
            expect(bob.locator("#scoreboard li")).to_have_count(2)
            expect(bob.locator("#scoreboard li", has_text="Ada")).to_have_count(1)
            expect(bob.locator("#scoreboard li.online")).to_have_count(2)
            bob.close()
            expect(tab1.locator("#scoreboard li.offline", has_text="Bob")).to_have_count(
                1
            )  # faded, still listed
            expect(tab1.locator("#scoreboard li.online")).to_have_text(["Ada (you)0"])

            # Sound cues are off until the player turns them on; the choice is kept in the browser.
            expect(tab1.locator("#sound")).not_to_be_checked()
            tab1.check("#sound")
            assert tab1.evaluate("localStorage.getItem('thinkalike-sound')") == "1"
            tab1.reload()
            expect(tab1.locator("#sound")).to_be_checked()
        finally:
            browser.close()


def test_mashing_space_and_next_buzzes_once_starts_one_tossup_and_types_no_spaces(app_url):
    """A player who hits space several times used to read "Too slow — someone else buzzed first" while
    holding the buzzer themselves, with the extra spaces typed into the answer box; mashing Next before the
    tossup came filled the chat with "a tossup is running; send its qid with next to skip it"."""
    from playwright.sync_api import expect

    with _one_page() as page:
        page.add_init_script("""(() => { const send = WebSocket.prototype.send; window.sent = [];
          WebSocket.prototype.send = function (d) { window.sent.push(JSON.parse(d).type); return send.call(this, d); }; })();""")
        _enter(page, f"{app_url}/play/mash-room/?ms_per_word=150&dead_ms=800&answer_ms=15000&set=e2e", "Ada")
        expect(page.locator("#status")).to_contain_text("Press Next")
        for _ in range(6):
            page.keyboard.press("n")
        expect(page.locator("#status")).to_have_text("Reading…")
        page.wait_for_timeout(400)  # a few words in
        for _ in range(8):
            page.keyboard.press("Space")
        expect(page.locator("#answer-input")).to_be_visible()
        page.wait_for_timeout(500)  # any reply to an extra buzz has come
        expect(page.locator("#status")).to_have_text("You buzzed")
        expect(page.locator("#answer-input")).to_have_value("")
        expect(page.locator("#chat-log")).to_have_text("")
        sent = page.evaluate("window.sent")  # a Next after the tossup came skips it, as a press meant
        assert sent.count("buzz") == 1 and 1 <= sent.count("next") <= 6, sent
        page.keyboard.type(" x y")
        expect(page.locator("#answer-input")).to_have_value("x y")


def test_a_refused_name_asks_for_another_and_escape_does_not_strand_the_page(app_url):
    """A name the server refuses (a right-to-left override) used to leave the page at "Joining…" for good,
    reloads included (the browser remembered the name); Escape closed the name dialog and the page never
    joined; the lobby took such a name and sent it on to the room."""
    from playwright.sync_api import expect

    with _one_page() as page:
        page.goto(f"{app_url}/play/names-refused/")
        expect(page.locator("#name-dialog")).to_be_visible()
        page.keyboard.press("Escape")
        page.keyboard.press("Escape")
        expect(page.locator("#name-dialog")).to_be_visible()
        page.fill("#name-input", "evil\u202eman")
        page.keyboard.press("Enter")
        expect(page.locator("#name-error")).to_contain_text("invisible or control characters")
        expect(page.locator("#name-dialog")).to_be_visible()
        expect(page.locator("#name-input")).to_have_value("evilman")  # offered again without the override
        page.fill("#name-input", "Eve")
        page.keyboard.press("Enter")
        expect(page.locator("#scoreboard")).to_contain_text("Eve (you)")
        expect(page.locator("#name-dialog")).to_be_hidden()
        page.reload()
        expect(page.locator("#scoreboard")).to_contain_text("Eve (you)")

        page.goto(f"{app_url}/play/")
        page.fill("#lobby-name", "bad\u200bname")
        page.fill("#room-name", "names-refused")
        page.click("#join-room")
        expect(page.locator("#lobby-error")).to_contain_text("That name cannot be used")
        assert page.url.endswith("/play/")


def test_long_names_chat_lines_and_answers_stay_inside_a_phone_screen(app_url):
    """An unbroken 500-character chat line made the page over 4000 px wide at 390 px; a 40-character
    name and a 200-character answer did the same to the scoreboard, the ruling and the history."""
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            page = browser.new_page(viewport={"width": 390, "height": 844})
            page.set_default_timeout(20000)
            _enter(page, f"{app_url}/play/phone-wide/?{FAST}", "W" * 40)
            expect(page.locator("#scoreboard")).to_contain_text("W" * 40)
            page.fill("#chat-input", "x" * 500)
            page.keyboard.press("Enter")
            expect(page.locator("#chat-log")).to_contain_text("x" * 500)
            page.click("#next")
            expect(page.locator("#buzz")).to_be_enabled()
            page.click("#buzz")
            page.fill("#answer-input", "y" * 200)
            page.keyboard.press("Enter")
            expect(page.locator("#ruling")).to_contain_text("y" * 200)
            expect(page.locator("#history .buzzes")).to_contain_text("y" * 200)
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SHOTS / "phone-wide.png"), full_page=True)
            assert page.evaluate("document.documentElement.scrollWidth") <= 390
        finally:
            browser.close()


def test_escape_leaves_the_chat_box_so_space_buzzes_again(app_url):
    """After a chat line the focus stays in the chat box, where space types a space: Esc used to do
    nothing there, so a player could not get back to buzzing without the mouse."""
    from playwright.sync_api import expect

    with _one_page() as page:
        _enter(page, f"{app_url}/play/chat-then-buzz/?ms_per_word=150&dead_ms=800&answer_ms=15000&set=e2e", "Ada")
        expect(page.locator("#status")).to_contain_text("Press Next")
        page.click("#chat-input")
        page.keyboard.type("good luck")
        page.keyboard.press("Enter")
        expect(page.locator("#chat-log")).to_contain_text("good luck")
        page.keyboard.press("Escape")
        page.keyboard.press("n")
        expect(page.locator("#buzz")).to_be_enabled()
        page.keyboard.press("Space")
        expect(page.locator("#answer-input")).to_be_visible()
        expect(page.locator("#chat-input")).to_have_value("")


def test_chat_lines_refused_for_speed_warn_once_not_once_each(app_url):
    """Past a player's chat share (a burst of 5) each refused line added its own warning to the chat."""
    from playwright.sync_api import expect

    with _one_page() as page:
        _enter(page, f"{app_url}/play/chatty/?set=e2e", "Ada")
        expect(page.locator("#status")).to_contain_text("Press Next")
        page.click("#chat-input")
        for n in range(9):
            page.keyboard.type(f"line {n}")
            page.keyboard.press("Enter")
        expect(page.locator("#chat-log")).to_contain_text("line 4")
        expect(page.locator("#chat-log .chat-line.error")).to_have_count(1)
        expect(page.locator("#chat-log .chat-line.error")).to_contain_text("chatting too fast")


def test_after_a_reload_while_answering_the_deadline_bar_shows_the_time_left(app_url):
    """The bar started full after a reload, as if the whole answer time were left, and then ran faster."""
    from playwright.sync_api import expect

    with _one_page() as page:
        _hold_the_buzzer(page, f"{app_url}/play/bar-reload/", answer_ms=10000)
        page.wait_for_timeout(4000)
        page.reload()
        expect(page.locator("#answer-input")).to_be_visible()
        share = page.evaluate("parseFloat(document.getElementById('deadline-bar').style.width)")
        assert 20 < share < 70, share  # about 60% of 10 s left after 4 s and the reload
