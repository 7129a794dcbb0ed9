"""A tiny world for research tests: a few tossups, AI systems and players with responses."""

from __future__ import annotations

import json
import random

import pytest

TOPICS = [
    ("Paris", "This city hosts the Louvre. It lies on the Seine. For ten points, name this capital of France."),
    ("Mercury", "This planet has no moons. It is closest to the Sun. For ten points, name this smallest planet."),
    ("Bach", "This composer wrote the Goldberg Variations. He worked in Leipzig. For ten points, name this Baroque composer."),
    ("Nile", "This river flows through Khartoum. Its delta is in Egypt. For ten points, name this longest river."),
    ("Newton", "This scientist wrote the Principia. He described gravity. For ten points, name this English physicist."),
    ("Hamlet", "This prince sees his father's ghost. He says to be or not to be. For ten points, name this Dane."),
]


def make_world(tmp_path, *, n_humans: int = 4, n_ai: int = 3, seed: int = 0):  # type: ignore[no-untyped-def]
    from quizsite.agents.models import Agent
    from quizsite.items.importers import items_import
    from quizsite.items.models import Item, Response

    path = tmp_path / "world.jsonl"
    path.write_text("".join(json.dumps({"id": f"t{i}", "question": q, "answer": a, "category": "General"}) + "\n"
                            for i, (a, q) in enumerate(TOPICS)))
    items_import(fmt="quizbowl", path=path, set_slug="world")
    items = list(Item.objects.filter(item_set__slug="world").order_by("external_id"))
    rng = random.Random(seed)
    agents = [Agent.objects.create(kind="ai", name=f"bot-{i}") for i in range(n_ai)]
    agents += [Agent.objects.create(kind="human", name=f"Player {i}") for i in range(n_humans)]
    rows = []
    for a, agent in enumerate(agents):
        for item in items:
            clue = rng.randrange(3)
            correct = rng.random() < 0.3 + 0.1 * a
            rows.append(Response(agent=agent, item=item, source="live", given="x", verdict="accept" if correct else "reject",
                                 correct=correct, clue_index=clue, word_index=1, n_words=len(item.data["words"]), room="r"))
    Response.objects.bulk_create(rows)
    return {"items": items, "agents": agents}


@pytest.fixture
def world(db, tmp_path):  # type: ignore[no-untyped-def]
    return make_world(tmp_path)


@pytest.fixture
def research_cache(tmp_path, settings):  # type: ignore[no-untyped-def]
    settings.RESEARCH_EMBEDDING_CACHE = tmp_path / "emb"
    return settings.RESEARCH_EMBEDDING_CACHE


def make_researcher(user):  # type: ignore[no-untyped-def]
    """Put an account in the researcher group (quizsite.core.roles); staff status alone opens nothing."""
    from django.contrib.auth.models import Group

    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    return user


@pytest.fixture
def staff(db, django_user_model):  # type: ignore[no-untyped-def]
    """A researcher account: staff (to sign in at /admin/login/) and in the researcher group."""
    return make_researcher(django_user_model.objects.create_user("res", password="pw", is_staff=True))


@pytest.fixture(autouse=True)
def _fresh_fit_caches():
    """Loaded fits are cached per process by run id; test databases reuse ids, so each test starts clean."""
    from quizsite.research import adaptive, analyses, artifacts, selectors

    for cached in (artifacts.fit_result_load, artifacts.fit_data_load, selectors._rulings_by_query, adaptive._bank,
                   analyses._clusters):
        cached.cache_clear()
    yield
