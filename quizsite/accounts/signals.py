"""A guest who signs up or signs in keeps their history: allauth's signals call the merge service.

The guest key lives only in the server-side session (the client never chooses it), and Django keeps the
session's data when an anonymous visitor signs in, so the key read here is the visitor's own.
"""

from __future__ import annotations

from typing import Any

from allauth.account.signals import user_logged_in, user_signed_up
from django.dispatch import receiver
from django.http import HttpRequest

from quizsite.annotate.views import session_remap_participants

from .services import agent_merge_guest_into_user


def merge_session_guest(request: HttpRequest | None, user: Any) -> None:
    session = getattr(request, "session", None)
    if session is None or not session.get("guest_key"):
        return
    result = agent_merge_guest_into_user(user=user, guest_key=session["guest_key"])
    del session["guest_key"]  # signed in, the account is the player; signing out starts a fresh guest
    if result is not None and result.participant_ids:
        session_remap_participants(session, result.participant_ids)


@receiver(user_signed_up, dispatch_uid="accounts-merge-on-signup")
def _on_signed_up(sender: Any, request: HttpRequest | None = None, user: Any = None, **kwargs: Any) -> None:
    merge_session_guest(request, user)


@receiver(user_logged_in, dispatch_uid="accounts-merge-on-login")
def _on_logged_in(sender: Any, request: HttpRequest | None = None, user: Any = None, **kwargs: Any) -> None:
    merge_session_guest(request, user)
