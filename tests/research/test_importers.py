"""caimira and protobowl-log importers: real published data, idempotence, transactional errors."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from quizsite.agents.models import Agent
from quizsite.items.importers import ImportError_, items_import
from quizsite.items.models import Item, Response

from ..conftest import SHARED_DATA

QANTA = SHARED_DATA / "protobowl" / "qanta2026_adversarial" / "derived_caimira"


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def tiny_caimira(folder: Path, bad_ruling: bool = False) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    write_jsonl(
        folder / "queries.jsonl",
        [
            {"id": "q1_1", "text": "First clue here.", "answer": "Paris", "orig_qid": "q1", "n_clues": 1, "total_clues": 2},
            {"id": "q1_2", "text": "First clue here. Second clue, for ten points.", "answer": "Paris", "orig_qid": "q1", "n_clues": 2, "total_clues": 2},
            {"id": "solo", "text": "A question without clue structure. Name it.", "answer": "Rome"},
        ],
    )
    write_jsonl(
        folder / "agents.jsonl",
        [{"id": "gpt", "name": "GPT", "type": "ai"}, {"id": "team", "name": "Five players", "type": "human_group"}],
    )
    write_jsonl(
        folder / "responses.jsonl",
        [
            {"query_id": "q1_1", "agent_id": "gpt", "ruling": 0},
            {"query_id": "q1_2", "agent_id": "gpt", "ruling": 1},
            {"query_id": "q1_2", "agent_id": "team", "ruling": 1.0},
            {"query_id": "solo", "agent_id": "team", "ruling": "yes" if bad_ruling else True},
        ],
    )
    return folder


@pytest.mark.django_db
def test_caimira_tiny_folder_items_agents_responses(tmp_path):
    report = items_import(fmt="caimira", path=tiny_caimira(tmp_path / "c"), set_slug="c")
    assert report.created == 4  # three queries + the tossup rebuilt from q1's prefixes
    tossup = Item.objects.get(item_set__slug="c", external_id="q1")
    assert tossup.kind == "tossup"
    assert tossup.data["clue_ends"] == [3, 8]
    prefix = Item.objects.get(external_id="q1_2")
    assert prefix.kind == "clue_prefix" and prefix.data["orig_qid"] == "q1" and prefix.data["n_clues"] == 2
    assert Item.objects.get(external_id="solo").kind == "clue_prefix"  # an IRT item as published
    group = Agent.objects.get(kind="human_group")
    assert group.external_id == "c:team" and group.public_id.startswith("h-")
    rows = Response.objects.order_by("id")
    assert [(r.item.external_id, r.correct, r.clue_index, r.source) for r in rows] == [
        ("q1_1", False, 0, "import"), ("q1_2", True, 1, "import"), ("q1_2", True, 1, "import"), ("solo", True, None, "import"),
    ]
    again = items_import(fmt="caimira", path=tmp_path / "c", set_slug="c")
    assert again.created == 0 and again.existing == 4
    assert again.extra["new responses"] == 0 and Response.objects.count() == 4 and Agent.objects.count() == 2


@pytest.mark.django_db
def test_caimira_bad_line_imports_nothing(tmp_path):
    folder = tiny_caimira(tmp_path / "bad", bad_ruling=True)
    with pytest.raises(ImportError_) as exc:
        items_import(fmt="caimira", path=folder, set_slug="bad")
    assert str(exc.value).endswith("responses.jsonl:4: ruling must be 0 or 1, got 'yes'")
    assert not Item.objects.exists() and not Agent.objects.exists() and not Response.objects.exists()


@pytest.mark.django_db
@pytest.mark.slow
@pytest.mark.skipif(not QANTA.exists(), reason="../shared/data is not present")
def test_caimira_published_qanta2026(tmp_path):
    report = items_import(fmt="caimira", path=QANTA, set_slug="qanta26")
    items = Item.objects.filter(item_set__slug="qanta26")
    assert items.filter(kind="clue_prefix").count() == 649
    assert items.filter(kind="tossup").count() == 120
    assert report.created == 769
    assert Agent.objects.filter(kind="ai").count() == 16
    assert Agent.objects.filter(kind="human").count() == 1
    assert Response.objects.count() == 10255
    positive = Response.objects.filter(correct=True).count() / 10255
    assert abs(positive - 0.463) < 0.001  # SOURCE.md's positive rate
    again = items_import(fmt="caimira", path=QANTA, set_slug="qanta26")
    assert again.created == 0 and Response.objects.count() == 10255


def pb_line(user: int, qid: str, ruling, elapsed: float, total: float, date: str = "Fri Apr 27 2018 14:12:05 GMT-0700 (PDT)") -> dict:
    return {
        "date": date,
        "action": "buzz",
        "object": {
            "qid": qid,
            "question_text": "This city hosts the Louvre. It lies on the Seine. For ten points, name this capital of France.",
            "answer": "{Paris}",
            "question_info": {"category": "Geography", "difficulty": "HS"},
            "guess": "paris" if ruling is True else "lyon",
            "ruling": ruling,
            "time_elapsed": elapsed,
            "time_remaining": total,
            "room": "msquizbowl",
            "playback_rate": 1,
            "user": {"id": f"u{user}", "name": f"Player {user}"},
        },
    }


@pytest.mark.django_db
def test_protobowl_log_buzzes_become_responses(tmp_path):
    path = write_jsonl(
        tmp_path / "log.jsonl",
        [
            pb_line(1, "p1", True, 5000, 10000),
            pb_line(2, "p1", "prompt", 9000, 10000),
            pb_line(2, "p1", False, 9500, 10000),
            {"date": "Fri Apr 27 2018 14:13:00 GMT-0700", "action": "chat", "object": {}},
        ],
    )
    report = items_import(fmt="protobowl-log", path=path, set_slug="pb")
    assert report.created == 1 and report.extra["new agents"] == 2 and report.extra["new responses"] == 3
    item = Item.objects.get(item_set__slug="pb", external_id="p1")
    assert item.kind == "tossup" and item.category == "Geography" and item.data["clue_ends"] == [5, 10, 18]
    first = Response.objects.order_by("id").first()
    assert first.word_index == 9 and first.clue_index == 1 and first.n_words == 18  # half of 18 words: clue 2
    assert first.verdict == "accept" and first.correct is True and first.room == "msquizbowl"
    assert first.created_at == datetime(2018, 4, 27, 21, 12, 5, tzinfo=UTC)
    assert list(Response.objects.values_list("verdict", flat=True)) == ["accept", "prompt", "reject"]
    assert set(Agent.objects.values_list("external_id", flat=True)) == {"protobowl:u1", "protobowl:u2"}
    again = items_import(fmt="protobowl-log", path=path, set_slug="pb")
    assert again.created == 0 and again.extra["new responses"] == 0 and Response.objects.count() == 3


@pytest.mark.django_db
def test_protobowl_log_bad_ruling_names_line(tmp_path):
    path = write_jsonl(tmp_path / "log.jsonl", [pb_line(1, "p1", True, 10, 100), pb_line(1, "p2", "maybe", 10, 100)])
    with pytest.raises(ImportError_, match=r"log.jsonl:2: object.ruling"):
        items_import(fmt="protobowl-log", path=path, set_slug="pb")
    assert not Item.objects.exists() and not Response.objects.exists()
