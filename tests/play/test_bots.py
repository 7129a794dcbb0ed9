"""Bots, server side: the catalogue, the `bots` setting, the token check, `bot` in player entries, the room page.

The live games (a bot against a person over real sockets) are in tests/e2e/test_bots.py."""

import pytest
from django.core import signing

from quizsite.agents.models import Agent
from quizsite.play import bots
from quizsite.play.bot_catalog import bot_agent_register, bot_resolve, bots_available
from quizsite.play.messages import players_payload
from quizsite.play.models import Player, Room
from quizsite.play.services import PlayError, room_update_settings, settings_clean

from . import botkinds

pytestmark = pytest.mark.django_db


@pytest.fixture
def cue_bot():
    return bot_agent_register(
        name="cue-bot", kind=botkinds.CueKind.name, kind_settings={"cue": "W03"}, threshold=0.7
    )


def test_a_registered_bot_resolves_to_its_agent_and_kind(cue_bot):
    Agent.objects.create(kind=Agent.Kind.AI, name="imported-system")  # an AI agent with no bot spec
    names = bots_available()  # the registered bot, and the built-in agents that can buzz
    assert "cue-bot" in names and "qb-guesser-tfidf" in names and "imported-system" not in names
    bot = bot_resolve(name="cue-bot")
    assert bot.agent == cue_bot and bot.threshold == 0.7
    assert isinstance(bot.kind, botkinds.CueKind) and bot.kind.settings["cue"] == "W03"
    with pytest.raises(LookupError):
        bot_resolve(name="imported-system")
    with pytest.raises(ValueError, match="not a registered tossup agent kind") as refused:
        bot_agent_register(name="x", kind="no-such-kind")
    known = str(refused.value).split("known: ")[1]  # the tossup kinds only, the guessers among them
    assert "qb-guesser-tfidf" in known and "chat-quizbowl" in known and "archaeology" not in known
    # registering again updates the same agent
    assert bot_agent_register(name="cue-bot", kind=botkinds.CueKind.name, threshold=0.2).pk == cue_bot.pk


def room_with(player_names=("ann",), **settings):
    room = Room.objects.create(slug="r", settings=settings)
    human = Agent.objects.create(kind=Agent.Kind.HUMAN, name="ann")
    player = Player.objects.create(room=room, agent=human, name=player_names[0])
    return room, player


def test_bots_setting_adds_removes_and_refuses_unknown_names(cue_bot):
    room, ann = room_with()
    out = room_update_settings(room=room, player_id=ann.pk, changes={"bots": {"add": "cue-bot"}})
    assert out.events == [
        {"type": "settings", "settings": {**out.events[0]["settings"], "bots": ["cue-bot"]}}
    ]
    assert Room.objects.get(pk=room.pk).settings["bots"] == ["cue-bot"]
    room_update_settings(
        room=room, player_id=ann.pk, changes={"bots": {"add": "cue-bot"}}
    )  # twice: listed once
    assert room.settings["bots"] == ["cue-bot"]
    for bad, why in [
        ({"add": "nobody"}, "available: .*cue-bot"),
        ({"add": 3}, "named by a string"),
        ("cue-bot", "must be"),
        ({"add": "cue-bot", "remove": "x"}, "must be"),
        ([1], "list of bot names"),
    ]:
        with pytest.raises(PlayError, match=why) as exc:
            room_update_settings(room=room, player_id=ann.pk, changes={"bots": bad})
        assert exc.value.code == "bad_settings"
    assert Room.objects.get(pk=room.pk).settings["bots"] == ["cue-bot"]  # a refusal loses nothing
    room_update_settings(room=room, player_id=ann.pk, changes={"bots": {"remove": "cue-bot"}})
    assert Room.objects.get(pk=room.pk).settings["bots"] == []
    with pytest.raises(PlayError, match="at most 8"):
        settings_clean({"bots": [f"b{i}" for i in range(9)]}, check_set=False)


def test_bot_token_is_checked_against_key_room_agent_and_list(cue_bot):
    room, _ = room_with(bots=["cue-bot"])
    good = bots.bot_token(room="r", agent_id=cue_bot.pk, name="cue-bot")
    assert bots.bot_token_check(token=good, room="r") == bots.Claim(agent_id=cue_bot.pk, name="cue-bot")
    human = Agent.objects.get(kind=Agent.Kind.HUMAN)
    refused = {
        "bad signature": [
            good[:-2] + ("AA" if not good.endswith("AA") else "BB"),
            signing.dumps({"room": "r", "agent": cue_bot.pk, "name": "cue-bot"}, salt=bots.SALT, key="k"),
            signing.dumps({"room": "r", "agent": cue_bot.pk, "name": "cue-bot"}, salt="other"),
        ],
        "another room": [bots.bot_token(room="s", agent_id=cue_bot.pk, name="cue-bot")],
        "not an AI agent": [bots.bot_token(room="r", agent_id=human.pk, name="cue-bot")],  # a person's agent
        "must be the token": [True, {"room": "r"}, "", None],
    }
    for why, tokens in refused.items():
        for token in tokens:
            with pytest.raises(PlayError, match=why) as exc:
                bots.bot_token_check(token=token, room="r")
            assert exc.value.code == "bad_bot"
    room.settings = {"bots": []}
    room.save()
    with pytest.raises(PlayError, match="not among the room's bots"):
        bots.bot_token_check(token=good, room="r")
    unlisted = bots.bot_token(room="r", agent_id=cue_bot.pk, name="cue-bot", listed=False)  # the shell's bot
    assert bots.bot_token_check(token=unlisted, room="r").agent_id == cue_bot.pk


def test_player_entries_say_who_is_a_bot(cue_bot):
    room, ann = room_with()
    bot = Player.objects.create(room=room, agent=cue_bot, name="cue-bot")
    assert {p["id"]: p["bot"] for p in players_payload(room)} == {ann.pk: False, bot.pk: True}


def test_room_page_offers_the_available_bots(client, cue_bot):
    page = client.get("/play/r/").content.decode()
    assert (
        'id="bot-add"' in page
        and '<script id="bots-available" type="application/json">[' in page
        and '"cue-bot"' in page.split('id="bots-available"')[1].split("</script>")[0]
    )


async def test_the_leader_starts_a_listed_bot_once_and_not_while_it_is_online(settings):
    settings.PLAY_BOT_LAUNCHER = "off"
    room_bots = bots.RoomBots("r")
    players = {
        7: {"id": 7, "name": "cue-bot", "score": 0, "bot": True},
        8: {"id": 8, "name": "ann", "score": 0},
    }
    assert len(room_bots.wake(["cue-bot", "other"], {}, players)) == 2  # nobody online: both start
    assert room_bots.wake(["cue-bot", "other"], {}, players) == []  # started moments ago: not again
    room_bots.launched.clear()
    assert len(room_bots.wake(["cue-bot", "other"], {7: 1}, players)) == 1  # cue-bot's player is online
    room_bots.launched.clear()
    room_bots.joined("other", 9)
    assert room_bots.wake(["cue-bot", "other"], {7: 1, 9: 1}, players) == []


@pytest.mark.parametrize("code", ["too_fast", "busy"])
def test_a_bot_whose_join_is_refused_reconnects_and_joins_again(code):
    # before its hello, a refused join would otherwise leave the bot in the room for ever, never let in;
    # ConnectionResetError is what BotClient.run backs off from before it connects and joins again
    from quizsite.play.botclient import BotClient, BotConfig

    client = BotClient(BotConfig(url="ws://127.0.0.1:1/ws/play/r/", name="b", token="t"), botkinds.CueKind({"cue": "W03"}))
    with pytest.raises(ConnectionResetError):
        client._on_error({"type": "error", "code": code})
    client.me = 7  # once in, the same codes are about other messages: it stays
    client._on_error({"type": "error", "code": code})


async def test_a_bot_whose_model_fails_says_so_in_the_room_once_and_again_when_it_recovers():
    """A bot whose model raised (a chat endpoint that is not there) used to sit on the scoreboard saying
    nothing, tossup after tossup; the failure was only in the server log."""
    import json

    from quizsite.play.botclient import BotClient, BotConfig

    class Flaky(botkinds.CueKind):
        fail = True

        def answer(self, question):
            if self.fail:
                raise ConnectionError("http://localhost:8000/v1/chat/completions: connection refused")
            return super().answer(question)

    class Socket:
        sent: list = []

        async def send(self, text):
            self.sent.append(json.loads(text))

    kind = Flaky({"cue": "W03"})
    client = BotClient(BotConfig(url="ws://127.0.0.1:1/ws/play/r/", name="b", token="t"), kind)
    client.ws = Socket()
    client._new_tossup("q1", 10, "")
    for n in range(1, 4):  # three batches of words, the model failing on each
        client.words = [f"W{i:02d}" for i in range(1, n + 1)]
        await client._think()
    chats = [m for m in client.ws.sent if m["type"] == "chat"]
    assert len(chats) == 1 and "not answering" in chats[0]["text"] and "connection refused" in chats[0]["text"]
    kind.fail = False
    client.words = ["W01", "W02"]
    await client._think()
    chats = [m for m in client.ws.sent if m["type"] == "chat"]
    assert len(chats) == 2 and chats[1]["text"] == "My model answers again." and client.calls == 1


def test_play_bot_kind_takes_the_built_in_guessers():
    """`play_bot ROOM --agent NAME --kind qb-guesser-tfidf` was refused: the guesser modules were never
    imported where the bot was registered (a fresh process has only the kinds something else imported)."""
    import subprocess
    import sys

    code = ("import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'quizsite.settings.test'); django.setup();"
            "from quizsite.play.bot_catalog import _kinds; print('qb-guesser-tfidf' in _kinds())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "True", out.stderr[-2000:]
