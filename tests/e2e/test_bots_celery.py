"""The default way bots run: `manage.py quickstart`'s worker for the `bots` queue (Celery on the embedded
filesystem broker) starts the bot a room adds, and the bot connects to quickstart's own address."""

import asyncio
import signal
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


def test_a_bots_worker_shuts_down_at_once_while_a_bot_retries_an_unreachable_server(tmp_path):
    """A warm shutdown waits for running tasks, and a bot task ends when its bot stops: a bot retrying a
    server that is down held its worker's shutdown for its two minutes of retries."""
    env = app_env(tmp_path / "var", AGENT_KIND_MODULES="tests.play.botkinds",
                  PLAY_BOT_WS_BASE=f"ws://127.0.0.1:{free_port()}")  # nothing listens there
    manage(env, "shell", "-c", f"from django.core.management import call_command as c; c('migrate', verbosity=0); {REGISTER}")
    log = tmp_path / "worker.log"
    worker = start([sys.executable, "-m", "celery", "-A", "quizsite", "worker", "-Q", "bots", "--pool=threads",
                    "--concurrency=2", "-n", "bots@%h", "--loglevel=INFO", "--without-gossip", "--without-mingle"], env, log)
    try:
        manage(env, "shell", "-c", "from quizsite.play.tasks import bot_run_task; "
                                   "bot_run_task.apply_async(args=['down-room', 'cue-bot'], queue='bots')")
        end = time.monotonic() + 60
        while log.read_text().count("connection lost") < 2:  # started, and retrying
            assert worker.poll() is None and time.monotonic() < end, log.read_text()[-3000:]
            time.sleep(0.3)
        asked = time.monotonic()
        code = stop(worker, signal.SIGTERM, timeout=60)  # warm shutdown
        took = time.monotonic() - asked
    finally:
        stop(worker, signal.SIGKILL, timeout=5)
    text = log.read_text()
    assert code == 0 and took < 15, (took, text[-3000:])
    assert "bot cue-bot stopped: the worker is shutting down" in text
