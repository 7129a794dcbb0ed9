"""The websocket routes, and the stack in front of them (served by quizsite/asgi.py, driven by the tests)."""

from typing import Any

from channels.routing import URLRouter
from channels.sessions import SessionMiddlewareStack
from django.urls import re_path

from .consumers import NoRouteConsumer, PlayConsumer

websocket_urlpatterns = [
    re_path(r"^ws/play/(?P<room>[-a-zA-Z0-9_]{1,64})/$", PlayConsumer.as_asgi()),
    re_path(r"", NoRouteConsumer.as_asgi()),  # any other path closes cleanly instead of raising in the router
]


def websocket_app() -> Any:
    """Sessions from the cookie, and no user yet: Channels' AuthMiddleware reads the user on connect,
    a trip to the database thread per socket (7-10% of the main thread while 500 players joined, py-spy),
    although a cookieless socket has none and a browser's is needed only when it joins, where the
    consumer reads it in the same trip as its guest key (`PlayConsumer._identity`)."""
    return SessionMiddlewareStack(URLRouter(websocket_urlpatterns))
