"""Image markers in imported tossups are not words: the reader skips them, the room shows a placeholder."""

import json

import pytest
from django.core.management import call_command

from quizsite.agents.models import Agent
from quizsite.items.models import Item, Response
from quizsite.items.tossups import tossup_parse

QUESTION = (
    "This city is shown [Image: a harbour seen from the hills, with ships]. (image) Its (*) port "
    '<img src="map.png" alt="a map of it"> is big. For ten points, name it [image]'
)


def test_markers_leave_the_words_and_are_recorded_where_they_stood():
    t = tossup_parse(QUESTION)
    assert t.words == [
        "This",
        "city",
        "is",
        "shown.",
        "Its",
        "port",
        "is",
        "big.",
        "For",
        "ten",
        "points,",
        "name",
        "it",
    ]
    assert t.images == (4, 4, 6, 13)  # two pictures before "Its", one before "is", one after the last word
    assert t.power_index == 5 and t.words[t.power_index] == "port"
    assert t.clue_ends == [4, 8, 13]  # sentences of read words only: "shown." keeps its full stop
    assert not any("mage" in w or "<" in w or "harbour" in w for w in t.words)
    assert tossup_parse("Plain text. No pictures (*) here.").images == ()


def _write(tmp_path, question):
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({"id": "img", "question": question, "answer": "{Harbour}"}) + "\n")
    return path


@pytest.mark.django_db
def test_reimport_refreshes_words_of_unanswered_tossups_only(tmp_path, capsys):
    path = _write(tmp_path, QUESTION)
    call_command("import_items", str(path), "--format", "quizbowl", "--set", "s")
    item = Item.objects.get(external_id="img")
    assert item.data["images"] == [4, 4, 6, 13] and "[Image:" not in " ".join(item.data["words"])
    # An item stored by the older parser, which read the markers as words:
    old_words = QUESTION.replace("(*) ", "").split()
    Item.objects.filter(pk=item.pk).update(
        data={"words": old_words, "clue_ends": [len(old_words)], "power_index": 9}
    )
    call_command("import_items", str(path), "--format", "quizbowl", "--set", "s")
    assert "1 re-read" in capsys.readouterr().out
    item.refresh_from_db()
    assert item.data["words"] == tossup_parse(QUESTION).words and item.data["images"] == [4, 4, 6, 13]

    # Once somebody answered it, its words stay as they were: stored word indices count them.
    Item.objects.filter(pk=item.pk).update(
        data={"words": old_words, "clue_ends": [len(old_words)], "power_index": 9}
    )
    agent = Agent.objects.create(kind=Agent.Kind.HUMAN, name="a")
    Response.objects.create(agent=agent, item=item, source=Response.Source.LIVE, given="x", word_index=3)
    call_command("import_items", str(path), "--format", "quizbowl", "--set", "s")
    item.refresh_from_db()
    assert item.data["words"] == old_words
