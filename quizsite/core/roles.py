"""Who may do what: the one place that decides it.

Four roles:

* **player**: anyone, signed in or a guest. Nothing to check.
* **annotator**: anyone who consents to a campaign; a campaign restricted to invited accounts admits only
  the accounts on its invitation list (and researchers, who look after it). `may_join_campaign` decides.
* **researcher**: research pages, exports, ruling reviews, the annotation manage pages and the API. Not
  the admin. An active superuser, or an active account holding the `core.use_research` permission (the
  `researcher` group carries it; core's migrations make the group and give it the permission), or a
  member of that group (so a group made by hand before the permission existed still counts).
* **admin**: the Django admin: staff and superuser (a superuser is a researcher too).

Staff status alone is not enough for research: an account may be staff to look after users or content in
the admin, while exports carry every answer anyone typed and an overrule changes what every later fit learns.

Writes (`role_grant`, `role_revoke`) live here too, beside the rules they must match, so that the
`grant` command, the admin and tests cannot disagree about what a role is.

Layering: research, annotate and accounts import this module; it imports no app of the project.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from functools import wraps
from typing import Any, TypeVar, cast

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser, Group, Permission
from django.contrib.auth.views import redirect_to_login
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpRequest
from django.http.response import HttpResponseBase

PLAYER, ANNOTATOR, RESEARCHER, ADMIN = "player", "annotator", "researcher", "admin"
ROLES = (PLAYER, ANNOTATOR, RESEARCHER, ADMIN)
RESEARCHER_GROUP = "researcher"
RESEARCH_PERMISSION = "core.use_research"  # app label + codename (core.models.RolePermissions)
REFUSED = (
    "This page is for researchers: a superuser or a member of the 'researcher' group. "
    "Staff status alone is not enough; an administrator can give your account the role "
    "(python manage.py grant USER researcher)."
)

View = TypeVar("View", bound=Callable[..., HttpResponseBase])
AnyUser = AbstractBaseUser | AnonymousUser | None


class RoleError(ValueError):
    """An unknown role, or a role that cannot be granted that way; the message says which."""


def _active(user: AnyUser) -> bool:
    return user is not None and user.is_authenticated and user.is_active


def is_researcher(user: AnyUser) -> bool:
    """True for an active superuser, holder of the research permission or member of the researcher group."""
    if not _active(user):
        return False
    if getattr(user, "is_superuser", False):
        return True
    if cast(Any, user).has_perm(RESEARCH_PERMISSION):
        return True
    groups = getattr(user, "groups", None)
    return bool(groups is not None and groups.filter(name=RESEARCHER_GROUP).exists())


def is_admin(user: AnyUser) -> bool:
    """The Django admin's own rule (active staff); a researcher who is not staff never gets in."""
    return _active(user) and bool(getattr(user, "is_staff", False))


def may_join_campaign(user: AnyUser, *, invite_only: bool, invited_user_ids: Collection[int]) -> bool:
    """Anyone may annotate an open campaign; an invite-only one takes invited accounts and researchers."""
    if not invite_only:
        return True
    if not _active(user):
        return False
    return is_researcher(user) or cast(Any, user).pk in invited_user_ids


def has_role(user: AnyUser, role: str) -> bool:
    """Whether the account holds `role` in general (annotator: may annotate open campaigns, i.e. anyone)."""
    if role in (PLAYER, ANNOTATOR):
        return True
    if role == RESEARCHER:
        return is_researcher(user)
    if role == ADMIN:
        return (
            _active(user)
            and bool(getattr(user, "is_staff", False))
            and bool(getattr(user, "is_superuser", False))
        )
    raise RoleError(f"unknown role {role!r}; roles are: {', '.join(ROLES)}")


def research_permission() -> Permission:
    """The research permission, made if a flushed database lost it (post_migrate makes it otherwise)."""
    app_label, codename = RESEARCH_PERMISSION.split(".")
    content_type, _ = ContentType.objects.get_or_create(app_label=app_label, model="rolepermissions")
    permission, _ = Permission.objects.get_or_create(
        content_type=content_type,
        codename=codename,
        defaults={"name": "Can use research pages, exports, campaigns and the API"},
    )
    return permission


def researcher_group() -> Group:
    """The researcher group with its permission, made (or mended) if a flushed database lost either."""
    group, _ = Group.objects.get_or_create(name=RESEARCHER_GROUP)
    group.permissions.add(research_permission())
    return group


@transaction.atomic
def role_grant(*, user: AbstractBaseUser, role: str) -> None:
    """researcher: into the group; admin: staff and superuser. Player and annotator need no grant."""
    if role == RESEARCHER:
        cast(Any, user).groups.add(researcher_group())
    elif role == ADMIN:
        account = cast(Any, user)
        account.is_staff = account.is_superuser = True
        account.save(update_fields=["is_staff", "is_superuser"])
    elif role in (PLAYER, ANNOTATOR):
        raise RoleError(
            f"everyone is a {role} already; to let an account into an invite-only campaign, "
            "use: grant USER annotator --campaign SLUG"
        )
    else:
        raise RoleError(f"unknown role {role!r}; roles are: {', '.join(ROLES)}")


@transaction.atomic
def role_revoke(*, user: AbstractBaseUser, role: str) -> None:
    """The reverse of role_grant. Revoking researcher from a superuser leaves them one (revoke admin too)."""
    if role == RESEARCHER:
        cast(Any, user).groups.remove(researcher_group())
        cast(Any, user).user_permissions.remove(research_permission())
    elif role == ADMIN:
        account = cast(Any, user)
        account.is_staff = account.is_superuser = False
        account.save(update_fields=["is_staff", "is_superuser"])
    elif role in (PLAYER, ANNOTATOR):
        raise RoleError(
            f"nobody can stop being a {role}; use --campaign SLUG to withdraw a campaign invitation"
        )
    else:
        raise RoleError(f"unknown role {role!r}; roles are: {', '.join(ROLES)}")


def researcher_required(view: View) -> View:
    """Guard a view: anonymous visitors are sent to sign in, signed-in non-researchers get 403.

    A 403 and not a redirect to the login: a signed-in account sent back to a login form would only loop;
    they are signed in, they lack the role, and the page says so.
    """

    @wraps(view)
    def guarded(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponseBase:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not is_researcher(request.user):
            raise PermissionDenied(REFUSED)
        return view(request, *args, **kwargs)

    return cast(View, guarded)
