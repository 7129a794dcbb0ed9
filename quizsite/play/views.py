from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.text import slugify
from django.views.decorators.http import require_http_methods

from quizsite.agents.services import new_guest_key

from . import selectors
from .bot_catalog import bots_available


@require_http_methods(["GET", "POST"])
def lobby(request: HttpRequest) -> HttpResponse:
    error = ""
    if request.method == "POST":
        slug = slugify(request.POST.get("room", ""))[:64]
        name = request.POST.get("name", "").strip()[:40]
        if name:
            request.session["player_name"] = name
        if not slug:
            error = "Give the room a name made of letters, digits or dashes."
        else:
            params = {k: request.POST[k] for k in ("set", "category") if request.POST.get(k)}
            url = f"/play/{slug}/"
            return redirect(f"{url}?{urlencode(params)}" if params else url)
    return render(
        request,
        "play/lobby.html",
        {
            "rooms": selectors.rooms_active(),
            "recent": selectors.rooms_recent(),
            "sets": selectors.tossup_sets(),
            "categories": selectors.tossup_categories(),
            "error": error,
            "player_name": request.session.get("player_name", ""),
        },
    )


def room(request: HttpRequest, slug: str) -> HttpResponse:
    # The guest identity lives in the session; make it before the websocket connects so that a reload
    # (same cookie) is the same player with the same score.
    if not request.session.get("guest_key"):
        request.session["guest_key"] = new_guest_key()
    default_name = request.session.get("player_name", "")
    if not default_name and request.user.is_authenticated:
        default_name = request.user.get_username()
    settings_query = {k: v for k, v in request.GET.items() if k in ("set", "category", "ms_per_word", "answer_ms", "dead_ms")}
    return render(
        request,
        "play/room.html",
        {"slug": slug, "default_name": default_name, "ws_query": urlencode(settings_query),
         "bots_available": bots_available()},
    )
