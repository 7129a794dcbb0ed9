from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.text import slugify
from django.views.decorators.http import require_http_methods

from quizsite.agents.services import new_guest_key

from . import selectors
from .bot_catalog import bots_available
from .names import BadName, name_clean
from .services import PlayError, settings_clean

# What the lobby's form may set (and the room page passes on to its socket).
LOBBY_SETTINGS = ("set", "categories", "difficulty", "ms_per_word", "auto_next", "auto_next_ms")
ROOM_QUERY_SETTINGS = ("set", "category", "ms_per_word", "answer_ms", "dead_ms", "categories", "difficulty",
                       "auto_next", "auto_next_ms")


def _lobby_settings(post: dict[str, list[str]]) -> dict[str, str]:
    values = {k: post[k][-1].strip() for k in LOBBY_SETTINGS if k != "categories" and post.get(k) and post[k][-1].strip()}
    categories = [c for c in post.get("categories", []) if c.strip()]
    if categories:
        values["categories"] = ",".join(categories)
    if values.get("auto_next") != "1":
        values.pop("auto_next", None)
        values.pop("auto_next_ms", None)
    return values


def _room_options() -> dict:
    return {
        "sets": [{"slug": s.slug, "name": s.name, "n": getattr(s, "n_tossups", 0)} for s in selectors.tossup_sets()],
        "categories": selectors.tossup_categories(),
        "difficulties": selectors.tossup_difficulties(),
    }


@require_http_methods(["GET", "POST"])
def lobby(request: HttpRequest) -> HttpResponse:
    error, posted = "", None
    if request.method == "POST":
        slug = slugify(request.POST.get("room", ""))[:64]
        name = request.POST.get("name", "").strip()[:40]
        if name:
            try:  # the room would refuse it on every join of this session: say so here
                request.session["player_name"] = name_clean(name)
            except BadName as exc:
                error = f"That name cannot be used: {exc}."
        params = _lobby_settings(dict(request.POST.lists()))
        try:
            settings_clean(dict(params), check_set=True)  # a bad choice is said here, before the room
        except PlayError as exc:
            error = error or f"Those settings cannot be used: {exc.message}."
        if not slug:
            error = "Give the room a name made of letters, digits or dashes."
        # after an error the form shows what was sent, not the defaults
        posted = {**params, "room": request.POST.get("room", ""), "name": name, "categories": params.get("categories", "").split(",")}
        if not error:
            url = f"/play/{slug}/"
            # apply=1: the room applies these settings on joining, also to a room that already exists
            # (between tossups; otherwise it says why not).
            return redirect(f"{url}?{urlencode({**params, 'apply': '1'})}" if params else url)
    return render(
        request,
        "play/lobby.html",
        {
            "rooms": selectors.rooms_active(),
            "recent": selectors.rooms_recent(),
            "sets": selectors.tossup_sets(),
            "categories": selectors.tossup_categories(),
            "difficulties": sorted({d for ds in selectors.tossup_difficulties().values() for d in ds}),
            "error": error,
            "player_name": request.session.get("player_name", ""),
            "posted": posted,
        },
    )


def room(request: HttpRequest, slug: str) -> HttpResponse:
    # The lobby names rooms in lower case ("Friday" -> /play/friday/): a link typed or shared as
    # /play/Friday/ goes to that room, not to a room of its own nobody else is in.
    if slug != slug.lower():
        query = request.META.get("QUERY_STRING", "")
        return redirect(f"/play/{slug.lower()}/" + (f"?{query}" if query else ""))
    # The guest identity lives in the session; make it before the websocket connects so that a reload
    # (same cookie) is the same player with the same score.
    if not request.session.get("guest_key"):
        request.session["guest_key"] = new_guest_key()
    # the name given in the lobby wins over the one this browser remembers from an earlier room (room.js);
    # an account's username is the fallback after both
    lobby_name = request.session.get("player_name", "")
    default_name = request.user.get_username() if request.user.is_authenticated else ""
    settings_query = {k: v for k, v in request.GET.items() if k in ROOM_QUERY_SETTINGS}
    return render(
        request,
        "play/room.html",
        {"slug": slug, "lobby_name": lobby_name, "default_name": default_name, "ws_query": urlencode(settings_query),
         "apply_settings": request.GET.get("apply") == "1" and bool(settings_query), "room_options": _room_options(),
         "bots_available": bots_available()},
    )
