"""Login brute force: django-axes locks a username + IP pair out after too many wrong passwords, the lock
lifts after the cool-off, a success resets the count; password validators refuse weak passwords."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import authenticate, get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.test import RequestFactory, override_settings

REPO = Path(__file__).resolve().parents[2]
PASSWORD = "kettle-orbit-Marzipan-93"
LOGIN = "/admin/login/"


@pytest.fixture
def staff(db):
    return get_user_model().objects.create_user("alice", password=PASSWORD, is_staff=True)


def attempt(client, password: str, username: str = "alice"):
    return client.post(LOGIN, {"username": username, "password": password, "next": "/admin/"})


def logged_in(client) -> bool:
    return "_auth_user_id" in client.session


def fail_until_locked(client) -> None:
    for _ in range(settings.AXES_FAILURE_LIMIT):
        response = attempt(client, "wrong-password")
        assert not logged_in(client)
    assert response.status_code == 429  # the limit-th failure already answers with the lock-out


def test_right_password_is_refused_while_locked_out(client, staff):
    fail_until_locked(client)
    response = attempt(client, PASSWORD)
    assert response.status_code == 429 and not logged_in(client)
    assert b"too many login attempts" in response.content


def test_lock_is_per_username_and_ip(client, staff):
    get_user_model().objects.create_user("bob", password=PASSWORD, is_staff=True)
    fail_until_locked(client)
    assert attempt(client, PASSWORD, username="bob").status_code == 302 and logged_in(client)


def test_login_works_again_after_the_cool_off(client, staff):
    with override_settings(AXES_COOLOFF_TIME=timedelta(hours=1)):
        fail_until_locked(client)
        assert attempt(client, PASSWORD).status_code == 429
    # The same failures seen with a cool-off they have outlived.
    with override_settings(AXES_COOLOFF_TIME=timedelta(microseconds=1)):
        response = attempt(client, PASSWORD)
    assert response.status_code == 302 and logged_in(client)


def test_success_resets_the_failure_count(client, staff):
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        attempt(client, "wrong-password")
    assert attempt(client, PASSWORD).status_code == 302
    client.logout()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert attempt(client, "wrong-password").status_code == 200  # the form again, not a lock-out
    assert attempt(client, PASSWORD).status_code == 302 and logged_in(client)


def test_any_authenticate_call_with_a_request_is_guarded(staff):
    """Not only the admin: the backend refuses a locked-out pair wherever authenticate() is called."""
    factory = RequestFactory()
    for _ in range(settings.AXES_FAILURE_LIMIT):
        assert authenticate(factory.post("/elsewhere/login"), username="alice", password="nope") is None
    assert authenticate(factory.post("/elsewhere/login"), username="alice", password=PASSWORD) is None


def test_axes_is_wired_for_every_login():
    assert settings.AXES_ENABLED and settings.AXES_RESET_ON_SUCCESS
    assert settings.AXES_LOCKOUT_PARAMETERS == [["username", "ip_address"]]
    assert settings.AUTHENTICATION_BACKENDS[0] == "axes.backends.AxesStandaloneBackend"
    assert settings.MIDDLEWARE[-1] == "axes.middleware.AxesMiddleware"


def test_axes_limits_come_from_the_environment():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "quizsite.settings.test", "AXES_FAILURE_LIMIT": "9",
           "AXES_COOLOFF_MINUTES": "2", "AXES_IPWARE_PROXY_COUNT": "1",
           "AXES_IPWARE_META_PRECEDENCE_ORDER": "HTTP_X_FORWARDED_FOR,REMOTE_ADDR"}
    code = ("from django.conf import settings as s; print(s.AXES_FAILURE_LIMIT, s.AXES_COOLOFF_TIME, "
            "s.AXES_IPWARE_PROXY_COUNT, ','.join(s.AXES_IPWARE_META_PRECEDENCE_ORDER))")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["9", "0:02:00", "1", "HTTP_X_FORWARDED_FOR,REMOTE_ADDR"]


@pytest.mark.parametrize(
    "password",
    ["short1", "password123", "12345678901234", "alice-smith-2"],  # too short, common, all digits, like the user
)
def test_weak_passwords_are_refused(db, password):
    user = get_user_model()(username="alice-smith", email="alice@example.org")
    with pytest.raises(ValidationError):
        validate_password(password, user=user)


def test_a_strong_password_passes(db):
    validate_password(PASSWORD, user=get_user_model()(username="alice"))


@pytest.mark.django_db(transaction=True)
async def test_lock_out_holds_under_asgi_too(async_client):
    """Daphne serves the app through ASGI, where Django runs axes' middleware in its async form."""
    from asgiref.sync import sync_to_async

    await sync_to_async(get_user_model().objects.create_user)("carol", password=PASSWORD, is_staff=True)
    for _ in range(settings.AXES_FAILURE_LIMIT):
        response = await async_client.post(LOGIN, {"username": "carol", "password": "wrong-password"})
    assert response.status_code == 429
    response = await async_client.post(LOGIN, {"username": "carol", "password": PASSWORD})
    assert response.status_code == 429 and "sessionid" not in response.cookies


def test_every_spelling_of_one_account_shares_its_lock(client, staff):
    """Five guesses per spelling (`Alice`, `ALICE`, the email in any case) were guesses without end."""
    staff.email = "alice@example.org"
    staff.save()
    for login in ("Alice", "ALICE", "alice@EXAMPLE.org", "Alice@example.org", "aLiCe"):
        attempt(client, "wrong-password", username=login)
    for login in ("alice", "ALICE", "alice@example.org"):
        response = attempt(client, PASSWORD, username=login)
        assert response.status_code == 429 and not logged_in(client), login


def test_an_unknown_login_cannot_be_varied_either(client, staff):
    for login in ("Mallory", "MALLORY", "mallory", "malLory", "MaLLoRy"):
        attempt(client, "wrong-password", username=login)
    assert attempt(client, "wrong-password", username="mallory").status_code == 429
