"""ASGI entry point: HTTP through Django, websockets through Channels with sessions and auth."""

import gc
import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quizsite.settings.local")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from quizsite.core.wsserver import autobahn_lazy_debug_formatting  # noqa: E402
from quizsite.play.routing import websocket_urlpatterns  # noqa: E402

autobahn_lazy_debug_formatting()  # daphne's websocket handshakes skip a debug line nobody reads

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)

# Everything imported so far (Django, the apps, torch through irt) lives as long as the process: frozen
# out of the cyclic collector's sight, a full collection walks only what the server allocates while it
# runs. Unfrozen, each gen-2 pass over the import-time heap stalled every room's clock for 140-230 ms
# with 500 players (words late by that much; measured with gc.callbacks under benchmarks/ws_load.py).
gc.freeze()
