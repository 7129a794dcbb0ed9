"""ASGI entry point: HTTP through Django, websockets through Channels with sessions (play/routing.py)."""

import gc
import os

from django.core.asgi import get_asgi_application
from django.urls import get_resolver

from quizsite.startup import settings_load_or_exit

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quizsite.settings.local")
settings_load_or_exit()  # a refused configuration: one line and exit 1, not the server's import traceback
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from quizsite.core.wsserver import ServerSend, autobahn_lazy_debug_formatting  # noqa: E402
from quizsite.play.routing import websocket_app  # noqa: E402
from quizsite.research import plots  # noqa: E402

autobahn_lazy_debug_formatting()  # daphne's websocket handshakes skip a debug line nobody reads

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": ServerSend(AllowedHostsOriginValidator(websocket_app())),
    }
)

# Import what the first requests would import anyway, so that it is frozen below with the rest: the
# URLconf and every view module behind it (matplotlib, DRF, allauth: 50,000 objects that full
# collections walked again and again, found with gc.get_objects() in a gc callback under ws_load).
get_resolver().url_patterns  # noqa: B018 - imports the views
plots.pyplot()  # matplotlib, which the views import only when they first draw

# Everything imported so far (Django, the apps and their views) lives as long as the process: frozen
# out of the cyclic collector's sight, a full collection walks only what the server allocates while it
# runs. Unfrozen, each gen-2 pass over the import-time heap stalled every room's clock for 140-230 ms
# with 500 players (words late by that much; measured with gc.callbacks under benchmarks/ws_load.py).
gc.freeze()
