from django.urls import re_path

from .consumers import NoRouteConsumer, PlayConsumer

websocket_urlpatterns = [
    re_path(r"^ws/play/(?P<room>[-a-zA-Z0-9_]{1,64})/$", PlayConsumer.as_asgi()),
    re_path(r"", NoRouteConsumer.as_asgi()),  # any other path closes cleanly instead of raising in the router
]
