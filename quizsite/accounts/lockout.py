"""The name django-axes counts a login's failures under (`AXES_USERNAME_CALLABLE`).

A person can sign in as `alice`, `Alice` or `alice@example.org`: each spelling counted apart gave five
guesses per spelling, without end. Every spelling of one account counts as that account; a login that
names no account counts under its case-folded text, so that unknown names cannot be varied either.
"""

from __future__ import annotations

from typing import Any

from allauth.account.models import EmailAddress
from django.contrib.auth import get_user_model
from django.db.models import Q
from django.http import HttpRequest


def lockout_username(request: HttpRequest | None, credentials: dict[str, Any] | None) -> str:
    login = _typed_login(request, credentials).strip()
    if not login:
        return ""
    user_ids = set(get_user_model().objects.filter(Q(username__iexact=login) | Q(email__iexact=login))
                   .values_list("pk", flat=True)[:2])
    user_ids |= set(EmailAddress.objects.filter(email__iexact=login).values_list("user_id", flat=True)[:2])
    if len(user_ids) == 1:
        return f"account:{user_ids.pop()}"
    return login.casefold()


def _typed_login(request: HttpRequest | None, credentials: dict[str, Any] | None) -> str:
    for source in (credentials or {}, getattr(request, "POST", None) or {}):
        for field in ("username", "login", "email"):
            value = source.get(field)
            if isinstance(value, str) and value:
                return value
    return ""
