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
