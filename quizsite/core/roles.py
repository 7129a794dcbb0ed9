"""Who is a researcher: the one place that decides it.

Research pages, exports, ruling reviews (upholding or overruling a verdict), the annotation manage pages
and the API all ask `is_researcher`. Staff status alone is not enough: an account may be staff to look
after users or content in the admin, while exports carry every answer anyone typed and an overrule
changes what every later fit learns. A researcher is an active superuser, or an active member of the
`researcher` group (core's migration makes the group; add accounts to it in the admin).

Layering: research and annotate import this module; it imports no app of the project.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import TypeVar, cast

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.http.response import HttpResponseBase

RESEARCHER_GROUP = "researcher"
REFUSED = (
    "This page is for researchers: a superuser or a member of the 'researcher' group. "
    "Staff status alone is not enough; an administrator can add your account to the group in the admin."
)

View = TypeVar("View", bound=Callable[..., HttpResponseBase])


def is_researcher(user: AbstractBaseUser | AnonymousUser | None) -> bool:
    """True for an active superuser or an active member of the researcher group; never for staff alone."""
    if user is None or not user.is_authenticated or not user.is_active:
        return False
    if getattr(user, "is_superuser", False):
        return True
    groups = getattr(user, "groups", None)
    return bool(groups is not None and groups.filter(name=RESEARCHER_GROUP).exists())


def researcher_required(view: View) -> View:
    """Guard a view: anonymous visitors are sent to sign in, signed-in non-researchers get 403.

    A 403 and not a redirect to the admin login: a signed-in staff member sent back to a login form would
    only loop; they are signed in, they lack the role, and the page says so.
    """

    @wraps(view)
    def guarded(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponseBase:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not is_researcher(request.user):
            raise PermissionDenied(REFUSED)
        return view(request, *args, **kwargs)

    return cast(View, guarded)
