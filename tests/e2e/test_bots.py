"""Bots in a play room, against a real server: the ASGI server in a child process, people as websocket clients.

The server starts each bot itself (PLAY_BOT_LAUNCHER=inline: an asyncio task of the ASGI process), and
the bot connects back through a TCP proxy of the test's (PLAY_BOT_WS_BASE), so that the test can cut its
socket like a network would.
"""

import asyncio
import json
import sqlite3
import threading
import time
import urllib.request

import pytest
from django.core import signing

from quizsite.play.bots import SALT, bot_token
from tests.conftest import TOSSUPS, free_port, launch_chromium, needs_chromium

from .servers import app_env, asgi_server, manage, stop, wait_http

pytestmark = [pytest.mark.slow, pytest.mark.serial]
KEY = "bots-e2e-secret-key-" + "x" * 40
QUERY = "ms_per_word=120&answer_ms=4000&dead_ms=800&set=bots"
REGISTER = (
    "from quizsite.play.bot_catalog import bot_agent_register as r; "
    "r(name='cue-bot', kind='test-cue', threshold=0.9); "
    "r(name='other-bot', kind='test-cue', kind_settings={'cue': 'W99'}, threshold=0.9)"
)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bots")
    proxy_port, port = free_port(), free_port()
    env = app_env(
        tmp / "var",
        SECRET_KEY=KEY,
        PLAY_BOT_LAUNCHER="inline",
        PLAY_BOT_IDLE_S="3",
        PLAY_BOT_WS_BASE=f"ws://127.0.0.1:{proxy_port}",
        AGENT_KIND_MODULES="tests.play.botkinds",
    )
    items = tmp / "bots.jsonl"
    items.write_text("\n".join(json.dumps(t) for t in TOSSUPS) + "\n")
    # One process for the set-up (each start of one costs seconds on a shared machine).
    manage(
        env,
        "shell",
        "-c",
        "from django.core.management import call_command as c; c('migrate', verbosity=0); "
        f"c('import_items', '--format', 'quizbowl', {str(items)!r}, '--set', 'bots'); {REGISTER}",
    )
    proc = asgi_server(port, env, tmp / "server.log")
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc)
        yield {
            "port": port,
            "proxy_port": proxy_port,
            "db": tmp / "var" / "db.sqlite3",
            "log": tmp / "server.log",
        }
    finally:
        stop(proc)


class Proxy:
    """A TCP relay between the bots and the server; `cut()` drops every connection through it."""

    def __init__(self, listen: int, target: int):
        self.listen, self.target = listen, target
        self.writers: list[asyncio.StreamWriter] = []
        self.paths: list[str] = []  # the websocket path of each connection, in order

    async def __aenter__(self):
        self.server = await asyncio.start_server(self._relay, "127.0.0.1", self.listen)
        return self

    async def __aexit__(self, *exc):
        self.cut()
        self.server.close()
        await asyncio.sleep(0.1)  # the relays see their sockets closed and end

    async def _relay(self, reader, writer):
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target)
        self.writers += [writer, up_writer]
        first = await reader.read(65536)  # the upgrade request: "GET /ws/play/ROOM/ HTTP/1.1"
        self.paths.append(first.split(b" ", 2)[1].decode() if first.count(b" ") >= 2 else "")
        up_writer.write(first)

        async def pipe(src, dst):
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    def accepted(self, room: str) -> int:
        return self.paths.count(f"/ws/play/{room}/")

    def cut(self):
        for w in self.writers:
            w.transport.abort()
        self.writers = []


class Person:
    """A browser-like client: a session cookie from the room page, then the play messages."""

    def __init__(self, server, room: str):
        self.server, self.room = server, room
        self.frames: list[dict] = []
        self.ws = None

    async def connect(self, query: str = QUERY):
        import websockets

        port = self.server["port"]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/play/{self.room}/") as resp:
            cookie = "; ".join(c.split(";")[0] for c in resp.headers.get_all("Set-Cookie") or [])
        self.ws = await websockets.connect(
            f"ws://127.0.0.1:{port}/ws/play/{self.room}/?{query}",
            origin=f"http://127.0.0.1:{port}",
            additional_headers={"Cookie": cookie},
        )

    async def send(self, **msg):
        await self.ws.send(json.dumps(msg))

    async def until(self, kind: str, timeout: float = 10, where=lambda m: True) -> dict:
        end = time.monotonic() + timeout
        while True:
            m = json.loads(await asyncio.wait_for(self.ws.recv(), timeout=max(0.01, end - time.monotonic())))
            self.frames.append(m)
            if m["type"] == kind and where(m):
                return m

    async def join(self, name: str) -> dict:
        await self.connect()
        await self.send(type="join", name=name)
        return await self.until("hello")

    async def bot_online(self, online: bool = True, timeout: float = 10) -> dict:
        """The presence entry of a bot that came (or went)."""
        m = await self.until(
            "presence", timeout, lambda m: any(p.get("bot") and p["online"] == online for p in m["players"])
        )
        return next(p for p in m["players"] if p.get("bot"))


def responses(server, room: str) -> list[dict]:
    with sqlite3.connect(server["db"]) as conn:
        conn.row_factory = sqlite3.Row
        rows = conn.execute(
            "SELECT r.*, a.name AS agent_name, a.kind AS agent_kind FROM items_response r "
            "JOIN agents_agent a ON a.id = r.agent_id WHERE r.room = ? ORDER BY r.id",
            (room,),
        ).fetchall()
    return [dict(r) for r in rows]


def agent_id(server, name: str) -> int:
    with sqlite3.connect(server["db"]) as conn:
        return conn.execute("SELECT id FROM agents_agent WHERE name = ? AND kind = 'ai'", (name,)).fetchone()[
            0
        ]


async def test_bot_plays_a_tossup_against_a_person(server):
    async with Proxy(server["proxy_port"], server["port"]):
        ada = Person(server, "bots-play")
        await ada.join("Ada")
        await ada.send(type="settings", bots={"add": "cue-bot"})
        settings = await ada.until("settings")
        assert settings["settings"]["bots"] == ["cue-bot"]
        bot = await ada.bot_online()
        assert bot["name"] == "cue-bot" and bot["bot"] is True

        await ada.send(type="next")
        tossup = await ada.until("tossup")
        buzz = await ada.until("buzz")
        assert buzz["player_id"] == bot["id"]
        # The cue is word 5: the bot saw 6 words when it became sure; the reading may run a word on
        # while its buzz travels, never past what was revealed.
        assert 6 <= buzz["word_index"] <= 8
        prompt = await ada.until("ruling")
        assert (prompt["player_id"], prompt["text"], prompt["verdict"]) == (bot["id"], "Zanzi", "prompt")
        ruling = await ada.until("ruling")
        assert (ruling["text"], ruling["verdict"], ruling["points"]) == ("Zanzibar", "accept", 15)
        scores = await ada.until("scores")
        by_id = {p["id"]: p for p in scores["players"]}
        assert by_id[bot["id"]]["bot"] is True and by_id[bot["id"]]["score"] == 15
        assert any(p["bot"] is False and p["name"] == "Ada" for p in scores["players"])
        await ada.until("tossup_end")

        rows = responses(server, "bots-play")
        assert [(r["agent_name"], r["agent_kind"], r["verdict"], r["source"]) for r in rows] == [
            ("cue-bot", "ai", "prompt", "live"),
            ("cue-bot", "ai", "accept", "live"),
        ]
        assert all(r["word_index"] == buzz["word_index"] for r in rows)
        assert (
            rows[1]["points"] == 15 and rows[1]["n_words"] == tossup["n_words"] and rows[1]["elapsed_ms"] > 0
        )

        # A person joining later sees who is a bot in the hello.
        bea = Person(server, "bots-play")
        hello = await bea.join("Bea")
        assert {p["name"]: p["bot"] for p in hello["state"]["players"]} == {
            "Ada": False,
            "cue-bot": True,
            "Bea": False,
        }
        await bea.ws.close()
        await ada.ws.close()


async def test_a_browser_cannot_claim_to_be_a_bot(server):
    room = "bots-claims"
    ada = Person(server, room)
    await ada.join("Ada")
    bot_agent = agent_id(server, "cue-bot")
    forged = [
        ("forged", "bad signature"),
        (True, "must be the token"),
        (
            signing.dumps(
                {"room": room, "agent": bot_agent, "name": "cue-bot", "listed": False},
                salt=SALT,
                key="not-the-server-key",
            ),
            "bad signature",
        ),
        (
            bot_token(room="another-room", agent_id=bot_agent, name="cue-bot", listed=False, key=KEY),
            "another room",
        ),
        (bot_token(room=room, agent_id=bot_agent, name="cue-bot", key=KEY), "not among the room's bots"),
    ]
    for token, why in forged:
        mallory = Person(server, room)
        await mallory.connect()
        await mallory.send(type="join", name="cue-bot", bot=token)
        error = await mallory.until("error")
        assert error["code"] == "bad_bot" and why in error["message"], (token, error)
        # The refusal loses nothing: the same socket joins as a person.
        await mallory.send(type="join", name="Mallory")
        hello = await mallory.until("hello")
        me = next(p for p in hello["state"]["players"] if p["id"] == hello["player_id"])
        assert me["bot"] is False
        await mallory.ws.close()
    assert responses(server, room) == []
    await ada.ws.close()


async def test_settings_add_and_remove_a_bot(server):
    async with Proxy(server["proxy_port"], server["port"]):
        ada = Person(server, "bots-settings")
        await ada.join("Ada")
        await ada.send(type="settings", bots={"add": "no-such-bot"})
        error = await ada.until("error")
        assert error["code"] == "bad_settings" and "cue-bot" in error["message"]  # names the available bots
        await ada.send(type="settings", bots={"add": "other-bot"})
        assert (await ada.until("settings"))["settings"]["bots"] == ["other-bot"]
        bot = await ada.bot_online()
        await ada.send(type="settings", bots={"remove": "other-bot"})
        assert (await ada.until("settings"))["settings"]["bots"] == []
        gone = await ada.bot_online(online=False)
        assert gone["id"] == bot["id"]
        await ada.ws.close()


async def test_bot_reconnects_after_its_socket_is_cut(server):
    async with Proxy(server["proxy_port"], server["port"]) as proxy:
        ada = Person(server, "bots-cut")
        await ada.join("Ada")
        await ada.send(type="settings", bots={"add": "cue-bot"})
        bot = await ada.bot_online()
        assert proxy.accepted("bots-cut") == 1
        proxy.cut()
        # The bot connects again (it may be back before the room's presence batch says it left) ...
        end = time.monotonic() + 10
        while proxy.accepted("bots-cut") < 2:
            assert time.monotonic() < end, "the bot did not reconnect"
            await asyncio.sleep(0.05)
        # ... and is the same player, online, as a person joining now sees.
        bea = Person(server, "bots-cut")
        for _ in range(50):
            hello = await bea.join("Bea")
            entry = {p["id"]: p for p in hello["state"]["players"]}[bot["id"]]
            if entry["online"]:
                break
            await bea.ws.close()
            await asyncio.sleep(0.2)
        assert entry["online"] and entry["bot"]
        await bea.ws.close()
        await ada.send(type="next")
        buzz = await ada.until("buzz")
        assert buzz["player_id"] == bot["id"]
        await ada.ws.close()


async def test_model_calls_stay_within_one_per_word_batch(server):
    """A bot that never becomes sure asks its model at most once per `words` message (plus its hello)."""
    from quizsite.agents.kinds import REGISTRY
    from quizsite.play.botclient import BotClient, BotConfig
    from tests.play import botkinds  # noqa: F401  (registers test-cue here too)

    room = "bots-calls"
    ada = Person(server, room)
    await ada.join("Ada")
    token = bot_token(
        room=room, agent_id=agent_id(server, "other-bot"), name="other-bot", listed=False, key=KEY
    )
    config = BotConfig(
        url=f"ws://127.0.0.1:{server['port']}/ws/play/{room}/",
        name="other-bot",
        token=token,
        threshold=0.9,
        idle_s=2,
        listed=False,
    )
    client = BotClient(config, REGISTRY["test-cue"]({"cue": "W99"}))
    run = asyncio.create_task(client.run())
    await ada.bot_online()
    await ada.send(type="next")
    await ada.until("tossup_end", timeout=20)
    batches = sum(1 for m in ada.frames if m["type"] == "words")
    assert 1 <= client.calls <= batches + 1
    assert not any(m["type"] == "buzz" for m in ada.frames)
    await ada.ws.close()
    # Alone in the room (no person online), the bot leaves by itself.
    assert await asyncio.wait_for(run, timeout=20) == "idle"


def test_play_bot_command_joins_plays_and_leaves_an_empty_room(server):
    """`manage.py play_bot ROOM --agent NAME --url ...` from a shell: a player like the server's bots."""
    import subprocess
    import sys

    from .servers import REPO

    async def scenario(proc):
        ada = Person(server, "bots-cmd")
        await ada.join("Ada")
        bot = await ada.bot_online(timeout=60)
        assert bot["name"] == "cue-bot"
        await ada.send(type="next")
        buzz = await ada.until("buzz")
        assert buzz["player_id"] == bot["id"]
        assert (await ada.until("ruling", where=lambda m: m["verdict"] != "prompt"))["verdict"] == "accept"
        await ada.ws.close()

    env = app_env(
        server["db"].parent, SECRET_KEY=KEY, PLAY_BOT_IDLE_S="2", AGENT_KIND_MODULES="tests.play.botkinds"
    )
    proc = subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "play_bot",
            "bots-cmd",
            "--agent",
            "cue-bot",
            "--url",
            f"ws://127.0.0.1:{server['port']}",
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        asyncio.run(scenario(proc))
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            print(proc.communicate()[0])
    assert proc.returncode == 0 and "bot cue-bot left room bots-cmd: idle" in out, out


@needs_chromium
def test_a_person_adds_a_bot_in_the_room_page_and_plays_against_it(server, tmp_path):
    """In Debian's chromium: the Settings card's Add bot, the bot badge on the scoreboard, the bot's points."""
    from playwright.sync_api import expect, sync_playwright

    async def relay(stop: asyncio.Event):
        async with Proxy(server["proxy_port"], server["port"]):
            await stop.wait()

    loop = asyncio.new_event_loop()  # the bots connect through the proxy, in a thread of its own
    stop = asyncio.Event()
    thread = threading.Thread(target=loop.run_until_complete, args=(relay(stop),), daemon=True)
    thread.start()
    try:
        with sync_playwright() as pw:
            browser = launch_chromium(pw)
            try:
                page = browser.new_page()
                page.set_default_timeout(20000)
                page.goto(f"http://127.0.0.1:{server['port']}/play/bots-browser/?{QUERY}")
                page.fill("#name-input", "Ada")
                page.click("#name-form button")
                expect(page.locator("#status")).to_contain_text("Press Next")
                page.select_option("#bot-pick", "cue-bot")
                page.click("#bot-add")
                expect(page.locator("#bot-list")).to_contain_text("cue-bot")
                expect(page.locator("#settings-msg")).to_have_text("Settings applied.")  # where a refusal says why
                bot_row = page.locator("#scoreboard li", has_text="cue-bot")
                expect(bot_row.locator(".badge.bot")).to_have_text("bot")
                expect(page.locator("#scoreboard li", has_text="Ada").locator(".badge")).to_have_count(0)
                page.keyboard.press("n")
                expect(bot_row.locator(".score")).to_have_text("15")
                expect(page.locator("#answerline")).to_contain_text("Zanzibar")
                page.screenshot(path=str(tmp_path / "room-with-bot.png"))
                page.click("#bot-list button")  # Remove
                expect(page.locator("#bot-list li")).to_have_count(0)
                expect(page.locator("#scoreboard li.offline", has_text="cue-bot")).to_have_count(1)
            finally:
                browser.close()
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(timeout=5)


async def test_a_second_client_of_an_online_bot_is_refused_and_gives_up(server):
    from quizsite.agents.kinds import REGISTRY
    from quizsite.play.botclient import BotClient, BotConfig
    from tests.play import botkinds  # noqa: F401  (registers test-cue here too)

    room = "bots-twice"
    ada = Person(server, room)
    await ada.join("Ada")
    token = bot_token(
        room=room, agent_id=agent_id(server, "other-bot"), name="other-bot", listed=False, key=KEY
    )
    url = f"ws://127.0.0.1:{server['port']}/ws/play/{room}/"

    def client():
        config = BotConfig(url=url, name="other-bot", token=token, idle_s=30, listed=False, duplicate_s=1.5)
        return BotClient(config, REGISTRY["test-cue"]({"cue": "W99"}))

    first, second = client(), client()
    first_run = asyncio.create_task(first.run())
    await ada.bot_online()
    assert await asyncio.wait_for(second.run(), timeout=20) == "duplicate"
    assert second.connects >= 2 and second.me is None  # it tried again, and never joined
    assert first.me is not None and not first_run.done()
    first.stop()
    assert await asyncio.wait_for(first_run, timeout=10) == "stopped"
    await ada.ws.close()
