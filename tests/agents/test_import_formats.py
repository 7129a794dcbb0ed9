"""The formats that create agents (caimira, protobowl-log) live in the agents app and reach `import_items`
through the items importers' registry: the command, its --format choices and `items_import` are the same
as when the importers lived in items."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.apps import apps
from django.core.management import CommandError, call_command

from quizsite.agents.importers import FORMATS, import_caimira, import_protobowl_log
from quizsite.agents.models import Agent
from quizsite.items.importers import IMPORTERS, ImportError_, importer_register, items_import
from quizsite.items.models import Response


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_the_agents_app_registers_its_formats_with_items():
    assert FORMATS == {"caimira": import_caimira, "protobowl-log": import_protobowl_log}
    assert {fmt: IMPORTERS[fmt] for fmt in FORMATS} == FORMATS
    assert {"quizbowl", "ghigliottina", "archaeology", "romqa"} <= set(IMPORTERS)


def test_importer_register_refuses_another_importer_under_a_taken_name_and_ignores_the_same_one():
    """It once overwrote in silence, so two apps claiming one name would swap importers unnoticed; the
    same importer again is no change (AppConfig.ready() may run twice in tests)."""
    importer_register("caimira", import_caimira)
    apps.get_app_config("agents").ready()
    assert IMPORTERS["caimira"] is import_caimira
    with pytest.raises(ValueError, match="format 'caimira' is already registered"):
        importer_register("caimira", import_protobowl_log)
    assert IMPORTERS["caimira"] is import_caimira


def test_an_unknown_format_says_that_the_agents_formats_come_when_the_apps_load(tmp_path, monkeypatch):
    monkeypatch.delitem(IMPORTERS, "caimira")
    with pytest.raises(ImportError_, match="unknown format 'caimira'.*registered when Django's apps load"):
        items_import(fmt="caimira", path=tmp_path / "release", set_slug="rel")


@pytest.mark.django_db
def test_import_items_command_reads_a_caimira_folder(tmp_path):
    folder = tmp_path / "release"
    folder.mkdir()
    write(folder / "queries.jsonl", [{"id": "q1", "text": "Name this city.", "answer": "Paris"}])
    write(folder / "agents.jsonl", [{"id": "gpt", "name": "GPT", "type": "ai", "subtype": "api"}])
    write(folder / "responses.jsonl", [{"query_id": "q1", "agent_id": "gpt", "ruling": 1}])
    out = StringIO()
    call_command("import_items", str(folder), "--format", "caimira", "--set", "rel", stdout=out)
    assert "new responses" in out.getvalue()
    agent = Agent.objects.get()
    assert (agent.kind, agent.external_id, agent.subtype) == (Agent.Kind.AI, "gpt", "api")
    assert Response.objects.filter(agent=agent, item__item_set__slug="rel", correct=True).count() == 1


@pytest.mark.django_db
def test_import_items_command_reads_a_protobowl_log(tmp_path):
    line = {
        "date": "Fri Apr 27 2018 14:12:05 GMT-0700 (PDT)",
        "action": "buzz",
        "object": {
            "qid": "p1",
            "question_text": "This city on the Seine is the capital. Name this city.",
            "answer": "Paris",
            "guess": "paris",
            "ruling": True,
            "time_elapsed": 5,
            "time_remaining": 10,
            "user": {"id": "u1", "name": "Player 1"},
        },
    }
    path = write(tmp_path / "log.jsonl", [line])
    call_command("import_items", str(path), "--format", "protobowl-log", "--set", "pb", stdout=StringIO())
    assert list(Agent.objects.values_list("kind", "external_id")) == [(Agent.Kind.HUMAN, "protobowl:u1")]
    assert Response.objects.get().correct is True
    with pytest.raises(CommandError, match="nothing imported"):
        call_command(
            "import_items", str(tmp_path), "--format", "protobowl-log", "--set", "pb", stdout=StringIO()
        )
