from django.urls import re_path

from .consumers import PlayConsumer

websocket_urlpatterns = [
    re_path(r"^ws/play/(?P<room>[-a-zA-Z0-9_]{1,64})/$", PlayConsumer.as_asgi()),
]
