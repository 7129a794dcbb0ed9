"""`import_items --format quizbowl`: transactional, idempotent, errors name the line."""

import json

import pytest
from django.core.management import CommandError, call_command

from quizsite.items.models import Item
from quizsite.items.tossups import tossup_parse

GOOD = [
    {"id": "a", "question": "First clue here. Second clue (*) here. For ten points, name it.", "answer": "{Thing}", "category": "Science"},
    {"id": "b", "question": "Another tossup. For 10 points, what?", "answer": "Other / Another"},
]


def write(tmp_path, rows, name="q.jsonl"):
    path = tmp_path / name
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


@pytest.mark.django_db
def test_import_is_idempotent_and_parses_clues(tmp_path, capsys):
    path = write(tmp_path, GOOD)
    call_command("import_items", str(path), "--format", "quizbowl", "--set", "s")
    call_command("import_items", str(path), "--format", "quizbowl", "--set", "s")
    out = capsys.readouterr().out
    assert "2 new items" in out and "0 new items, 2 already present" in out
    item = Item.objects.get(external_id="a")
    assert item.data["clue_ends"] == [3, 6, 11] and item.data["power_index"] == 5
    assert item.data["words"][5] == "here."
    assert Item.objects.count() == 2


@pytest.mark.django_db
@pytest.mark.parametrize(
    "rows, message",
    [
        ([GOOD[0], "{broken"], ":2: invalid JSON"),
        ([GOOD[0], {"id": "x", "answer": "y"}], ":2: missing field 'question'"),
        ([GOOD[0], {"id": "x", "question": "Two words.", "answer": ""}], ":2: missing field 'answer'"),
        ([GOOD[0], GOOD[1], GOOD[0]], ":3: duplicate id 'a' (first on line 1)"),
        (["[1, 2]"], ":1: array entry is not an object"),
    ],
)
def test_broken_file_imports_nothing_and_names_the_line(tmp_path, rows, message):
    path = write(tmp_path, rows)
    with pytest.raises(CommandError) as exc:
        call_command("import_items", str(path), "--format", "quizbowl", "--set", "s")
    assert message in str(exc.value) and str(path) in str(exc.value)
    assert Item.objects.count() == 0


@pytest.mark.django_db
def test_missing_and_empty_files(tmp_path):
    with pytest.raises(CommandError, match="file not found"):
        call_command("import_items", str(tmp_path / "nope.jsonl"), "--format", "quizbowl", "--set", "s")
    with pytest.raises(CommandError, match="file is empty"):
        call_command("import_items", str(write(tmp_path, [""])), "--format", "quizbowl", "--set", "s")


def test_tossup_parse_handles_marks_glued_to_words():
    parsed = tossup_parse("He wrote Hamlet(*) and more. For ten points, name him.")
    assert parsed.power_index == 3 and parsed.words[2] == "Hamlet"
    assert parsed.clue_of(0) == 0 and parsed.clue_of(5) == 0 and parsed.clue_of(6) == 1
