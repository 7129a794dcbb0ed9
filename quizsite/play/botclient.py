"""A bot player: an AI agent kind in a play room through the websocket messages a browser sends.

The bot follows the words as they are revealed (asking for the missed ones with `sync` after a gap),
asks its model about the words seen so far, and buzzes once the model's confidence reaches its
threshold; the server times and scores that buzz like anyone's. The model is asked at most once per
batch of new words and never twice at once: a slow model sees the latest prefix, not a queue of old
ones. It reconnects with backoff when the socket drops, and stops when removed from the room, refused,
or when no person has been online for `idle_s`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import websockets
from websockets.typing import Origin

from quizsite.agents.kinds import AgentKind, Output, tossup_prefix_question

log = logging.getLogger(__name__)


@dataclass
class BotConfig:
    url: str  # ws://host/ws/play/<room>/
    name: str  # the bot's name in the room's `bots` setting, and the name it joins with
    token: str  # minted by the server (play/bots.py)
    threshold: float = 0.5
    idle_s: float = 60.0
    listed: bool = True  # a listed bot leaves when the room's `bots` setting drops it
    backoff_s: tuple[float, ...] = (0.2, 0.5, 1.0, 2.0, 4.0, 8.0)
    give_up_s: float = 120.0  # stop reconnecting after this long without a hello
    duplicate_s: float = 30.0  # another client of this bot is online: wait this long for it to go, then stop
    origin: str = field(default="")


class Stop(Exception):
    """The bot is done (removed, refused, idle): no reconnect."""


class BotClient:
    def __init__(self, config: BotConfig, kind: AgentKind):
        self.config, self.kind = config, kind
        self.stop_reason = ""
        self.ws: Any = None
        self.me: int | None = None
        self.people: dict[int, dict[str, Any]] = {}  # player id -> {"bot", "online"}
        self.alone_since: float | None = None
        self.connects = 0
        self.calls = 0  # model calls, for tests and logs
        self.failing = False  # the model raised on its last call (and the room was told)
        self.hello_at = 0.0  # when the last hello came (monotonic)
        self.duplicate = False  # refused: another client of this bot is online
        self._new_tossup("", 0, "")
        self.thinking: asyncio.Task | None = None
        self.woken: asyncio.Event | None = None  # set by `stop`: a backoff's wait ends at once

    def _new_tossup(self, qid: str, n_words: int, category: str) -> None:
        self.qid, self.n_words, self.category = qid, n_words, category
        self.words: list[str] = []
        self.reading = bool(qid)
        self.holder: int | None = None
        self.done = False  # buzzed and ruled, or locked out: no more buzzes on this tossup
        self.buzz_sent = False
        self.guesses: list[str] = []

    # --- the connection -------------------------------------------------------------------------------

    async def run(self) -> str:
        """Play until stopped; the reason it stopped."""
        last_hello, attempt, duplicate_since = time.monotonic(), 0, None
        self.woken = asyncio.Event()
        while not self.stop_reason:
            self.me = None
            try:
                origin = Origin(self.config.origin or _http_origin(self.config.url))
                async with websockets.connect(
                    self.config.url,
                    origin=origin,
                    open_timeout=10,
                    ping_interval=10,
                    ping_timeout=10,
                    max_size=2**20,
                ) as ws:
                    self.ws = ws
                    self.connects += 1
                    await self._send({"type": "join", "name": self.config.name, "bot": self.config.token})
                    await self._read(ws)
            except Stop as exc:
                self.stop_reason = self.stop_reason or str(exc)
            except (OSError, TimeoutError, websockets.WebSocketException) as exc:
                log.info("bot %s: connection lost (%s)", self.config.name, exc)
            finally:
                self.ws = None
                if self.thinking is not None:
                    self.thinking.cancel()
            if self.stop_reason:
                break
            now = time.monotonic()
            if self.hello_at > last_hello:  # that connection got in: the backoff starts again
                last_hello, attempt = self.hello_at, 0
            if self.duplicate:
                duplicate_since = duplicate_since or now
                if now - duplicate_since > self.config.duplicate_s:
                    self.stop_reason = "duplicate"
                    break
            else:
                duplicate_since = None
            if now - last_hello > self.config.give_up_s:
                self.stop_reason = "unreachable"
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.woken.wait(), self.config.backoff_s[min(attempt, len(self.config.backoff_s) - 1)])
            attempt += 1
        log.info("bot %s stopped: %s", self.config.name, self.stop_reason)
        return self.stop_reason

    def stop(self, reason: str = "stopped") -> None:
        """Leave the room (from outside, on the bot's own loop: a command's Ctrl-C, the worker's shutdown,
        a test). A bot waiting to reconnect stops at once; one connecting, within its open timeout."""
        self.stop_reason = reason
        if self.woken is not None:
            self.woken.set()
        if self.ws is not None:
            asyncio.ensure_future(self.ws.close())

    async def _read(self, ws: Any) -> None:
        while not self.stop_reason:
            try:
                raw = await asyncio.wait_for(ws.recv(), timeout=1.0)
            except TimeoutError:
                self._check_idle()
                continue
            try:
                message = json.loads(raw)
            except ValueError:
                continue
            self.duplicate = self.duplicate and message.get("type") != "hello"
            await self._handle(message)
            self._check_idle()
        await ws.close()

    async def _send(self, message: dict[str, Any]) -> None:
        if self.ws is not None:
            await self.ws.send(json.dumps(message))

    # --- the room ---------------------------------------------------------------------------------------

    async def _handle(self, m: dict[str, Any]) -> None:
        kind = m.get("type")
        if kind == "hello":
            await self._on_hello(m)
        elif kind == "tossup":
            self._new_tossup(m["qid"], m.get("n_words", 0), m.get("category", ""))
        elif kind == "words":
            await self._on_words(m)
        elif kind == "buzz" and m.get("qid") == self.qid:
            self.holder = m["player_id"]
            if self.holder == self.me:
                await self._answer()
        elif kind == "ruling" and m.get("qid") == self.qid:
            await self._on_ruling(m)
        elif kind == "tossup_end" and m.get("qid") == self.qid:
            self.reading, self.done, self.holder = False, True, None
        elif kind in ("presence", "scores"):
            self._people(m["players"])
        elif kind == "settings":
            self._check_listed(m["settings"])
        elif kind == "error":
            self._on_error(m)

    async def _on_hello(self, m: dict[str, Any]) -> None:
        self.me, self.hello_at = m["player_id"], time.monotonic()
        st = m["state"]
        self.people = {}
        self._people(st.get("players", []))
        self._check_listed(st.get("settings", {}))
        if st.get("qid"):
            if st["qid"] != self.qid:
                self._new_tossup(st["qid"], st.get("n_words", 0), st.get("category", ""))
            self.words = list(st.get("words", []))
            self.done = self.done or self.me in st.get("locked_out", [])
            buzz = st.get("buzz")
            self.holder = buzz["player_id"] if buzz else None
            if self.holder == self.me:  # we reconnected while holding the buzzer: answer now
                await self._answer()
            else:
                self._think_soon()
        else:
            self.reading = False

    async def _on_words(self, m: dict[str, Any]) -> None:
        if m.get("qid") != self.qid:
            return
        start, words = m["start"], m["words"]
        if start > len(self.words):  # a gap (a server went away): ask for what we missed
            await self._send({"type": "sync", "qid": self.qid, "have": len(self.words)})
            return
        if start + len(words) > len(self.words):
            self.words = self.words[:start] + list(words)
            self.holder = None  # words flow only while nobody holds the buzzer
            self._think_soon()

    async def _on_ruling(self, m: dict[str, Any]) -> None:
        if m.get("player_id") != self.me:
            self.holder = None
            return
        if m.get("verdict") == "prompt":
            await self._answer()  # the next guess, or give up with an empty answer
            return
        self.done, self.holder = True, None

    def _on_error(self, m: dict[str, Any]) -> None:
        code = m.get("code")
        if code == "bad_bot":
            raise Stop(f"refused: {m.get('message', '')}")
        if code == "bot_running":
            self.duplicate = True
            raise ConnectionResetError("another client of this bot is online")
        if code in ("too_fast", "busy") and self.me is None:  # its join was refused: back off, join again
            raise ConnectionResetError(f"the room did not let it in ({code})")
        if code == "buzzer_taken":
            self.buzz_sent = False  # someone else is answering; we may buzz after their ruling
        elif code in ("locked_out", "no_tossup"):
            self.done, self.buzz_sent = True, False
        elif code == "not_your_buzz":
            self.buzz_sent = False

    def _people(self, players: list[dict[str, Any]]) -> None:
        for p in players:
            known = self.people.setdefault(p["id"], {"bot": False, "online": True})
            known["bot"] = bool(p.get("bot", known["bot"]))
            if "online" in p:
                known["online"] = bool(p["online"])

    def _check_listed(self, settings: dict[str, Any]) -> None:
        if self.config.listed and self.config.name not in (settings.get("bots") or []):
            raise Stop("removed")

    def _check_idle(self) -> None:
        if self.me is None:
            return
        humans = any(p["online"] and not p["bot"] for pid, p in self.people.items() if pid != self.me)
        now = time.monotonic()
        if humans:
            self.alone_since = None
        elif self.alone_since is None:
            self.alone_since = now
        elif now - self.alone_since > self.config.idle_s:
            raise Stop("idle")

    # --- thinking and buzzing -----------------------------------------------------------------------

    def _may_buzz(self) -> bool:
        return (
            self.reading and not self.done and not self.buzz_sent and self.holder is None and bool(self.words)
        )

    def _think_soon(self) -> None:
        if self._may_buzz() and (self.thinking is None or self.thinking.done()):
            self.thinking = asyncio.get_running_loop().create_task(self._think())

    async def _think(self) -> None:
        """Ask the model about the latest prefix until it is confident or no new words came meanwhile."""
        while self._may_buzz():
            qid, seen = self.qid, len(self.words)
            question = tossup_prefix_question(
                self.words[:seen], n_words=self.n_words or None, category=self.category
            )
            try:
                out: Output = await asyncio.to_thread(self.kind.answer, question)
            except Exception as exc:
                log.exception("bot %s: the model failed on %s words", self.config.name, seen)
                if not self.failing:  # say so in the room once, not at every word: players see a silent bot otherwise
                    self.failing = True
                    await self._send({"type": "chat", "text": f"My model is not answering, so I will not buzz: "
                                                              f"{type(exc).__name__}: {str(exc)[:200]}"})
                return
            if self.failing:
                self.failing = False
                await self._send({"type": "chat", "text": "My model answers again."})
            self.calls += 1
            if qid != self.qid or not self._may_buzz():
                return
            guess = out.guess if isinstance(out.guess, str) else (out.guess[0] if out.guess else "")
            if guess and (out.confidence or 0.0) >= self.config.threshold:
                alternatives = [
                    a for a in (out.raw or {}).get("alternatives", []) if isinstance(a, str) and a != guess
                ]
                self.guesses = [guess, *alternatives]
                self.buzz_sent = True
                await self._send({"type": "buzz", "qid": qid})
                return
            if len(self.words) == seen:
                return

    async def _answer(self) -> None:
        """Answer with the next guess; with none left, give up (an empty answer is ruled at once)."""
        text = self.guesses.pop(0) if self.guesses else ""
        await self._send({"type": "answer", "qid": self.qid, "text": text[:200]})


def _http_origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{'https' if parts.scheme == 'wss' else 'http'}://{parts.netloc}"
