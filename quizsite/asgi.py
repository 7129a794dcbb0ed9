"""ASGI entry point: HTTP through Django, websockets through Channels with sessions and auth."""

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
