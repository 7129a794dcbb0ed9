"""The signed-in player's own pages: profile and figures, their data, API tokens, deleting the account."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from typing import cast

from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST
from rest_framework.authtoken.models import Token

from quizsite.core.csvsafe import csv_cell
from quizsite.core.roles import is_researcher, researcher_required
from quizsite.core.streaming import closing_iter, streaming_response

from . import selectors, services

CONFIRM_WORD = "delete"


def _user(request: HttpRequest) -> User:
    """The signed-in account (the views below are all behind login_required or researcher_required)."""
    return cast(User, request.user)


@login_required
def profile(request: HttpRequest) -> HttpResponse:
    agent = selectors.agent_of(request.user)  # none until a first answer (or a guest's history) gives one
    researcher = is_researcher(request.user)
    return render(
        request,
        "accounts/profile.html",
        {
            "agent": agent,
            "figures": selectors.profile_figures(agent) if agent is not None else None,
            "recent": selectors.recent_tossups(agent) if agent is not None else [],
            "researcher": researcher,
            "token": Token.objects.filter(user=request.user).first() if researcher else None,
        },
    )


class _Echo:
    def write(self, value: str) -> str:
        return value


def _csv_rows(rows: Iterator[dict]) -> Iterator[str]:
    writer = csv.writer(_Echo())
    yield writer.writerow(selectors.DOWNLOAD_FIELDS)
    with closing_iter(rows) as source:
        for row in source:
            yield writer.writerow([csv_cell(row[f]) for f in selectors.DOWNLOAD_FIELDS])


def _jsonl_rows(rows: Iterator[dict]) -> Iterator[str]:
    with closing_iter(rows) as source:
        for row in source:
            yield json.dumps(row, ensure_ascii=False) + "\n"


@login_required
def download(request: HttpRequest, fmt: str) -> HttpResponse | StreamingHttpResponse:
    """The player's own responses: CSV (spreadsheet-safe cells) or JSON lines (exact text)."""
    agent = selectors.agent_of(request.user)
    rows = selectors.own_responses(agent) if agent is not None else iter(())
    if fmt == "csv":
        chunks: Iterator[str] = _csv_rows(rows)
        content_type = "text/csv; charset=utf-8"
    elif fmt == "jsonl":
        chunks = _jsonl_rows(rows)
        content_type = "application/x-ndjson; charset=utf-8"
    else:
        return HttpResponse("format must be csv or jsonl", status=404, content_type="text/plain")
    # streams under ASGI too (quizsite.core.streaming), rows read in batches on the request's sync thread
    return streaming_response(chunks, content_type=content_type, filename=f"my-responses.{fmt}")


@researcher_required
@require_POST
def token_create(request: HttpRequest) -> HttpResponse:
    services.api_token_create(user=_user(request))
    messages.success(request, "A new API token is ready; any older one no longer works.")
    return redirect("accounts:profile")


@researcher_required
@require_POST
def token_revoke(request: HttpRequest) -> HttpResponse:
    if services.api_token_revoke(user=_user(request)):
        messages.success(request, "API token revoked.")
    else:
        messages.info(request, "You had no API token.")
    return redirect("accounts:profile")


@login_required
@require_http_methods(["GET", "POST"])
def delete(request: HttpRequest) -> HttpResponse:
    """A confirm step: the account goes only when the person types the word, so a stray click loses nothing."""
    error = ""
    if request.method == "POST":
        if request.POST.get("confirm", "").strip().lower() != CONFIRM_WORD:
            error = f"Type {CONFIRM_WORD} to confirm."
        else:
            user = _user(request)
            try:
                services.account_delete(user=user)
            except services.AccountError as exc:
                error = exc.message
            else:
                logout(request)
                messages.success(
                    request,
                    "Your account is deleted. Your answers stay in the research data under a pseudonymous id.",
                )
                return redirect("/play/")
    return render(
        request,
        "accounts/delete.html",
        {"error": error, "confirm_word": CONFIRM_WORD},
        status=400 if error else 200,
    )
