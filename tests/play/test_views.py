"""The lobby and the room page over HTTP, as a browser sends them."""

import pytest

pytestmark = pytest.mark.django_db


def test_a_room_link_in_capitals_goes_to_the_room_the_lobby_names(client):
    """The lobby sends "Friday" to /play/friday/; a link to /play/Friday/ used to open a second, empty
    room of that spelling."""
    lobby = client.post("/play/", {"name": "Ann", "room": "Friday"})
    assert lobby.status_code == 302 and lobby["Location"] == "/play/friday/"
    link = client.get("/play/Friday/?ms_per_word=300&set=x")
    assert link.status_code == 302 and link["Location"] == "/play/friday/?ms_per_word=300&set=x"
    assert client.get("/play/friday/").status_code == 200


def test_the_lobby_refuses_a_name_the_room_would_refuse(client):
    """A name with a right-to-left override went into the session and was refused by the room on every
    join; the lobby says so instead, keeps the form, and keeps the name the session had."""
    client.post("/play/", {"name": "Ann", "room": "r"})
    page = client.post("/play/", {"name": "evil\u202eman", "room": "r"})
    assert page.status_code == 200
    assert "That name cannot be used" in page.content.decode()
    assert client.session["player_name"] == "Ann"
