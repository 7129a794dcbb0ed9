"""AI agents' answers go through the same judge and land in the responses table (source agent_run)."""

import json

import pytest
from django.core.management import CommandError, call_command

from quizsite.agents.models import Agent
from quizsite.items.models import Response
from quizsite.judge import JUDGE_VERSION


def write(tmp_path, rows):
    path = tmp_path / "pred.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


@pytest.mark.django_db
def test_predictions_are_judged_positioned_and_idempotent(tossup_set, tmp_path, capsys):
    rows = [
        {"agent": "bot-a", "item_set": "t", "item_id": "marked", "guess": "zanzibar", "clue_index": 0},
        {"agent": "bot-a", "item_set": "t", "item_id": "marked", "guess": "zanzi", "word_index": 20},
        {"agent": "bot-b", "item_set": "t", "item_id": "marked", "guess": "Pemba", "confidence": 0.2},
    ]
    path = write(tmp_path, rows)
    call_command("import_predictions", str(path))
    call_command("import_predictions", str(path))
    out = capsys.readouterr().out
    assert "3 new responses from 2 agents" in out and "0 new responses from 2 agents, 3 already present" in out
    got = list(Response.objects.order_by("id").values_list("verdict", "correct", "word_index", "clue_index", "source", "judge_version"))
    assert got == [
        ("accept", True, 7, 0, "agent_run", JUDGE_VERSION),
        ("prompt", False, 20, 2, "agent_run", JUDGE_VERSION),
        ("reject", False, 27, 3, "agent_run", JUDGE_VERSION),
    ]
    assert set(Agent.objects.filter(kind="ai").values_list("name", flat=True)) == {"bot-a", "bot-b"}


@pytest.mark.django_db
@pytest.mark.parametrize(
    "row, message",
    [
        ({"agent": "x", "item_set": "t", "item_id": "nope", "guess": "a"}, ":2: unknown item t/nope"),
        ({"agent": "x", "item_set": "t", "item_id": "marked"}, ":2: missing field 'guess'"),
        ({"item_set": "t", "item_id": "marked", "guess": "a"}, ":2: no agent"),
        ({"agent": "x", "item_set": "t", "item_id": "marked", "guess": "a", "clue_index": 9}, ":2: clue_index 9 is outside"),
        ({"agent": "x", "item_set": "t", "item_id": "marked", "guess": ["a"]}, ":2: a tossup guess is a string"),
    ],
)
def test_bad_predictions_import_nothing(tossup_set, tmp_path, row, message):
    good = {"agent": "x", "item_set": "t", "item_id": "marked", "guess": "zanzibar"}
    with pytest.raises(CommandError) as exc:
        call_command("import_predictions", str(write(tmp_path, [good, row])))
    assert message in str(exc.value)
    assert Response.objects.count() == 0
