"""The websocket server's fixes (quizsite/core/wsserver.py): autobahn's lazy formatter, the frozen heap,
the server's own send."""

import pprint

import pytest

from quizsite.core.wsserver import LazyPformat, autobahn_lazy_debug_formatting


def test_autobahn_formats_its_debug_lines_only_when_they_are_written():
    assert autobahn_lazy_debug_formatting()
    from autobahn.websocket import protocol

    assert protocol.pformat is LazyPformat
    calls = []

    class Spy:
        def __repr__(self):
            calls.append(1)
            return "spy"

    lazy = protocol.pformat([("option", Spy(), "Factory")])
    assert calls == []  # nothing formatted until the line is
    assert f"\n{lazy}" == "\n" + pprint.pformat([("option", "spy", "Factory")]).replace("'spy'", "spy")
    assert calls


def test_the_asgi_process_freezes_its_import_time_heap_out_of_the_collector():
    import gc
    import importlib

    import quizsite.asgi

    gc.unfreeze()
    importlib.reload(quizsite.asgi)
    assert gc.get_freeze_count() > 10_000  # Django, the apps and their imports: not walked by gen-2 passes
    gc.unfreeze()


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
@pytest.mark.usefixtures("close_clients")
async def test_play_sockets_write_through_the_servers_own_send(tossup_set, monkeypatch):
    """Behind quizsite.asgi's ServerSend, a socket's texts skip the middleware stack (Channels' session
    wrapper looked at the session on every one of them); the accept still goes through it."""
    from channels.sessions import InstanceSessionWrapper
    from channels.testing import WebsocketCommunicator

    from quizsite.core.wsserver import ServerSend

    from .wsclient import APP, FAST_QUERY, Client

    through_stack: list[str] = []
    real = InstanceSessionWrapper.send

    async def counted(self, message):
        through_stack.append(message["type"])
        return await real(self, message)

    monkeypatch.setattr(InstanceSessionWrapper, "send", counted)
    a = Client()
    a.comm = WebsocketCommunicator(ServerSend(APP), f"/ws/play/r/?{FAST_QUERY}")
    await a.join("ann")
    await a.send({"type": "next"})
    await a.until("tossup_end", timeout=10)
    assert len(a.frames) > 5
    assert through_stack == ["websocket.accept"]
