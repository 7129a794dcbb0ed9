from django.urls import path, re_path

from . import views

app_name = "play"
urlpatterns = [
    path("", views.lobby, name="lobby"),
    re_path(r"^(?P<slug>[-a-zA-Z0-9_]{1,64})/$", views.room, name="room"),
]
