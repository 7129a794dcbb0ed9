"""The lazy formatter handed to autobahn (quizsite/core/wsserver.py)."""

import pprint

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
