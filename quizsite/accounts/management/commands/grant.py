"""`grant USER ROLE [--revoke] [--campaign SLUG]`: give or take a role (quizsite.core.roles)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db.models import Q

from quizsite.annotate.models import Campaign
from quizsite.annotate.services import campaign_invite, campaign_uninvite
from quizsite.core.roles import ANNOTATOR, ROLES, RoleError, has_role, role_grant, role_revoke


class Command(BaseCommand):
    help = (
        "Grant (or with --revoke take away) a role: researcher (research pages, exports, campaigns, the API; "
        "not the admin) or admin (the Django admin: staff and superuser). annotator with --campaign SLUG "
        "invites the account to an invite-only campaign. USER is a username or an email."
    )

    def add_arguments(self, parser):
        parser.add_argument("user", help="username or email")
        parser.add_argument("role", choices=ROLES)
        parser.add_argument("--revoke", action="store_true", help="take the role away instead")
        parser.add_argument("--campaign", help="annotator: the campaign (slug) to invite to or uninvite from")

    def handle(self, *args, user: str, role: str, revoke: bool, campaign: str | None, **opts):
        account = self._account(user)
        if role == ANNOTATOR and campaign:
            found = Campaign.objects.filter(slug=campaign).first()
            if found is None:
                raise CommandError(f"no campaign {campaign!r}")
            if revoke:
                campaign_uninvite(campaign=found, logins=[account.get_username()])
                self.stdout.write(f"{account.get_username()} is no longer invited to {found.slug}")
            else:
                campaign_invite(campaign=found, logins=[account.get_username()])
                note = "" if found.invite_only else " (the campaign is open to everyone anyway)"
                self.stdout.write(f"{account.get_username()} is invited to {found.slug}{note}")
            return
        if campaign:
            raise CommandError("--campaign goes with the annotator role only")
        try:
            (role_revoke if revoke else role_grant)(user=account, role=role)
        except RoleError as exc:
            raise CommandError(str(exc)) from None
        holds = has_role(account, role)
        self.stdout.write(
            f"{account.get_username()}: {role} {'yes' if holds else 'no'}"
            + (" (still a superuser: revoke admin too)" if revoke and holds else "")
        )

    def _account(self, login: str) -> Any:
        matches = list(
            get_user_model().objects.filter(Q(username__iexact=login) | Q(email__iexact=login))[:2]
        )
        exact = [u for u in matches if u.get_username() == login]
        if exact:
            return exact[0]
        if len(matches) != 1:
            raise CommandError(
                f"no account named {login!r}" if not matches else f"{login!r} names more than one account"
            )
        return matches[0]
