"""Accounts: small hand-made tossups and an archaeology campaign, and a client that signs up like a person."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.test import Client

PASSWORD = "kettle-orbit-Marzipan-93"

# 20 words, power mark after word 8: a buzz at word_index <= 8 that is correct is a power.
WORDS = [f"w{i:02d}" for i in range(20)]
ARCHAEOLOGY = [
    {
        "id": f"a{i}",
        "text": f"Passage {i}: the answer to question {i} is explained here at some length.",
        "true_question": f"What is the answer to question {i}?",
        "other_question_1": f"Who wrote passage {i}?",
        "other_question_2": f"When was passage {i} written?",
    }
    for i in range(1, 5)
]


@pytest.fixture(autouse=True)
def _fresh_rate_limits():
    """allauth counts sign-ups and failures per address in the cache; each test starts with none."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def tossups(db):  # type: ignore[no-untyped-def]
    """Three tossups in two categories, each 20 words long with the power mark after word 8."""
    from quizsite.items.models import Item, ItemSet

    item_set = ItemSet.objects.create(slug="acc", name="Accounts set")
    out = []
    for n, category in enumerate(["History", "History", "Science"]):
        out.append(
            Item.objects.create(
                item_set=item_set,
                external_id=f"t{n}",
                kind=Item.Kind.TOSSUP,
                category=category,
                text=" ".join(WORDS[:8]) + " (*) " + " ".join(WORDS[8:]),
                answer=f"answer {n}",
                data={"words": WORDS, "clue_ends": [10, 20], "power_index": 8},
            )
        )
    return out


@pytest.fixture
def campaign(db, tmp_path: Path):  # type: ignore[no-untyped-def]
    from quizsite.annotate.services import campaign_create
    from quizsite.items.importers import items_import

    path = tmp_path / "a.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in ARCHAEOLOGY) + "\n", encoding="utf-8")
    items_import(fmt="archaeology", path=path, set_slug="arch")
    from quizsite.items.models import ItemSet

    return campaign_create(
        slug="c", item_set=ItemSet.objects.get(slug="arch"), task="archaeology-choose", per_item=3
    )


def sign_up(client: Client, username: str, email: str | None = None, password: str = PASSWORD, **extra):  # type: ignore[no-untyped-def]
    return client.post(
        "/accounts/signup/",
        {
            "username": username,
            "email": email or f"{username}@example.org",
            "password1": password,
            "password2": password,
            **extra,
        },
    )


def sign_in(client: Client, login: str, password: str = PASSWORD):  # type: ignore[no-untyped-def]
    return client.post("/accounts/login/", {"login": login, "password": password})


def signed_in_as(client: Client) -> str | None:
    from django.contrib.auth import get_user_model

    pk = client.session.get("_auth_user_id")
    return get_user_model().objects.get(pk=pk).get_username() if pk else None


def annotate_one(client: Client, slug: str = "c") -> int:
    """Consent and answer the first item as whoever the client is; the assignment's id."""
    assert client.post(f"/annotate/{slug}/", {"agree": "yes"}).status_code == 302
    page = client.get(f"/annotate/{slug}/item/")
    assert page.status_code == 200, page.status_code
    assignment = page.context["assignment"]
    answered = client.post(
        f"/annotate/{slug}/item/", {"assignment": assignment.pk, "action": "answer", "choice": 0}
    )
    assert answered.status_code == 302
    return assignment.pk
