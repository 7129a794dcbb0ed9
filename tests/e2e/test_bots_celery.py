"""The default way bots run: `manage.py quickstart`'s worker for the `bots` queue (Celery on the embedded
filesystem broker) starts the bot a room adds, and the bot connects to quickstart's own address."""

import asyncio
import sys
import time

import pytest

from tests.conftest import free_port

from .servers import app_env, manage, start, stop, wait_http
from .test_bots import REGISTER, Person

pytestmark = pytest.mark.slow


def test_quickstart_worker_plays_the_bot_a_room_adds(tmp_path):
    port = free_port()
    env = app_env(tmp_path / "var", AGENT_KIND_MODULES="tests.play.botkinds")
    manage(
        env,
        "shell",
        "-c",
        f"from django.core.management import call_command as c; c('migrate', verbosity=0); {REGISTER}",
    )
    log = tmp_path / "quickstart.log"
    proc = start([sys.executable, "manage.py", "quickstart", "--port", str(port)], env, log)

    async def scenario():
        ada = Person({"port": port}, "celery-bots")
        await ada.connect(query="ms_per_word=120")
        await ada.send(type="join", name="Ada")
        await ada.until("hello")
        await ada.send(type="settings", bots={"add": "cue-bot"})
        assert (await ada.until("settings"))["settings"]["bots"] == ["cue-bot"]
        bot = await ada.bot_online(timeout=60)
        assert bot["name"] == "cue-bot" and bot["bot"] is True
        await ada.send(type="settings", bots={"remove": "cue-bot"})
        assert (await ada.bot_online(online=False, timeout=20))["id"] == bot["id"]
        await ada.ws.close()

    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc, timeout=120)
        end = time.monotonic() + 90
        while "bots@" not in log.read_text() or log.read_text().count(" ready.") < 2:  # both workers are up
            assert time.monotonic() < end, log.read_text()[-3000:]
            time.sleep(0.5)
        asyncio.run(scenario())
    finally:
        code = stop(proc)
    assert code == 0, log.read_text()[-2000:]
    assert "play.bot_run" in log.read_text()  # the bots worker ran the task
