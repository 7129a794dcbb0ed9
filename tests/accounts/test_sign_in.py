"""Sign up, sign in (username or email), sign out and password reset through allauth's pages, from the top
bar; the password validators and django-axes' lock-out hold on allauth's login too."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client

from tests.accounts.conftest import PASSWORD, sign_in, sign_up, signed_in_as

REPO = Path(__file__).resolve().parents[2]


def test_top_bar_offers_sign_in_and_sign_up_then_name_profile_and_sign_out(client, db):
    page = client.get("/play/").content.decode()
    assert 'id="nav-signin"' in page and 'href="/accounts/login/?next=/play/"' in page
    assert 'href="/accounts/signup/?next=/play/"' in page and "/admin/login/" not in page
    assert sign_up(client, "ada").status_code == 302
    page = client.get("/annotate/").content.decode()
    assert 'id="nav-profile"' in page and ">ada</a>" in page and 'id="nav-signout"' in page
    assert 'id="nav-signin"' not in page


def test_sign_up_signs_in_and_lands_on_the_profile(client, db):
    answer = sign_up(client, "ada")
    assert answer.status_code == 302 and answer["Location"] == "/accounts/profile/"
    assert signed_in_as(client) == "ada"
    assert get_user_model().objects.get(username="ada").email == "ada@example.org"
    profile = client.get("/accounts/profile/")
    assert profile.status_code == 200 and b"pseudonymous id" in profile.content


def test_sign_up_goes_back_where_the_visitor_was(client, db):
    answer = client.post(
        "/accounts/signup/?next=/play/",
        {
            "username": "ada",
            "email": "ada@example.org",
            "password1": PASSWORD,
            "password2": PASSWORD,
            "next": "/play/",
        },
    )
    assert answer.status_code == 302 and answer["Location"] == "/play/"


@pytest.mark.parametrize("password", ["short1", "password123", "12345678901234", "ada-lovelace-1"])
def test_sign_up_refuses_weak_passwords(client, db, password):
    answer = sign_up(client, "ada-lovelace", password=password)
    assert answer.status_code == 200 and answer.context["form"].errors
    assert (
        not get_user_model().objects.filter(username="ada-lovelace").exists() and signed_in_as(client) is None
    )


def test_sign_up_refuses_a_taken_username_or_email(client, db):
    sign_up(Client(), "ada")
    assert sign_up(client, "ada", email="other@example.org").status_code == 200
    assert sign_up(client, "bob", email="ADA@example.org").status_code == 200
    assert get_user_model().objects.count() == 1


def test_sign_out_and_sign_in_by_username_or_email(client, db):
    sign_up(client, "ada")
    page = client.get("/accounts/logout/")
    assert page.status_code == 200  # a confirm page; signing out is a POST
    assert signed_in_as(client) == "ada"
    assert client.post("/accounts/logout/").status_code == 302 and signed_in_as(client) is None
    assert sign_in(client, "ada", "wrong-password").status_code == 200 and signed_in_as(client) is None
    assert sign_in(client, "ada").status_code == 302 and signed_in_as(client) == "ada"
    client.post("/accounts/logout/")
    assert sign_in(client, "ADA@example.org").status_code == 302 and signed_in_as(client) == "ada"


def test_password_reset_mails_a_link_that_sets_a_new_password(client, db):
    sign_up(Client(), "ada")
    mail.outbox.clear()
    assert client.post("/accounts/password/reset/", {"email": "ada@example.org"}).status_code == 302
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["ada@example.org"]
    link = next(w for w in mail.outbox[0].body.split() if "/accounts/password/reset/key/" in w)
    path = link.split("testserver", 1)[1]
    form = client.get(path, follow=True)
    assert form.status_code == 200
    new = "another-Quiet-harbour-71"
    done = client.post(
        form.redirect_chain[-1][0] if form.redirect_chain else path, {"password1": new, "password2": new}
    )
    assert done.status_code == 302
    assert sign_in(Client(), "ada", new).status_code == 302
    assert sign_in(Client(), "ada").status_code == 200  # the old password no longer works


def test_axes_locks_allauth_login_out_too(client, db):
    sign_up(Client(), "ada")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        answer = sign_in(client, "ada", "wrong-password")
        assert signed_in_as(client) is None
    assert answer.status_code == 429
    answer = sign_in(client, "ada")
    assert answer.status_code == 429 and signed_in_as(client) is None
    # another account from the same address is not locked out
    sign_up(Client(), "bob")
    assert sign_in(client, "bob").status_code == 302 and signed_in_as(client) == "bob"


def test_the_lock_out_page_has_the_site_layout_the_wait_and_a_reset_link(client, db):
    """The page after too many wrong passwords at /accounts/login/: the site's own page (top bar, card), how
    long the lock lasts (AXES_COOLOFF_MINUTES, read at request time) and where to reset the password; axes'
    status stays."""
    import re
    from datetime import timedelta

    from django.test import override_settings

    sign_up(Client(), "ada")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        answer = sign_in(client, "ada", "wrong-password")
    assert answer.status_code == settings.AXES_HTTP_RESPONSE_CODE == 429
    page = answer.content.decode()
    assert '<header class="topbar">' in page and 'id="lockout"' in page and "too many login attempts" in page
    assert 'id="lockout-reset"' in page and 'href="/accounts/password/reset/"' in page

    def wait(html: str) -> str:
        found = re.search(r'<p id="lockout-duration">(.*?)</p>', html, re.S)
        assert found
        return " ".join(re.sub(r"<[^>]+>", "", found.group(1)).split())

    assert settings.AXES_COOLOFF_TIME == timedelta(minutes=15)  # AXES_COOLOFF_MINUTES' default
    assert wait(page).startswith("You can sign in again 15 minutes after the last wrong password")
    with override_settings(AXES_COOLOFF_TIME=timedelta(minutes=90)):
        again = sign_in(client, "ada")
    assert again.status_code == 429 and wait(again.content.decode()).startswith("You can sign in again 1 hour, 30 minutes after")
    assert signed_in_as(client) is None
    reset = client.get("/accounts/password/reset/")
    assert reset.status_code == 200  # the link leads somewhere that works during the lock
    xhr = client.post("/accounts/login/", {"login": "ada", "password": PASSWORD}, HTTP_X_REQUESTED_WITH="XMLHttpRequest")
    assert xhr.status_code == 429 and xhr.json()["username"]  # scripts still get axes' JSON


def test_axes_lock_holds_whichever_spelling_of_the_login(client, db):
    """The lock is on the typed login + address; the same person's email is a second spelling, locked on
    its own count, so an attacker gets at most the limit per spelling, never unlimited tries."""
    sign_up(Client(), "ada")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        sign_in(client, "ada@example.org", "wrong-password")
    assert sign_in(client, "ada@example.org").status_code == 429


def test_mail_goes_to_the_console_unless_smtp_is_configured():
    code = "from django.conf import settings as s; print(s.EMAIL_BACKEND, s.EMAIL_HOST or '-', s.EMAIL_PORT)"
    base = {**os.environ, "DJANGO_SETTINGS_MODULE": "quizsite.settings.local"}
    base.pop("EMAIL_HOST", None)
    out = subprocess.run(
        [sys.executable, "-c", code], env=base, cwd=REPO, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["django.core.mail.backends.console.EmailBackend", "-", "587"]
    smtp = {**base, "EMAIL_HOST": "smtp.example.org", "EMAIL_PORT": "2525"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=smtp, cwd=REPO, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["django.core.mail.backends.smtp.EmailBackend", "smtp.example.org", "2525"]
