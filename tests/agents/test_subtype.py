"""Agent.subtype: a field with a blank default, its migration, set at import (predictions and caimira) and in the admin."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from quizsite.agents.models import Agent
from quizsite.items.importers import ImportError_, items_import


def write(path, rows):  # type: ignore[no-untyped-def]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.django_db
def test_field_default_and_migration_match_the_model():
    assert Agent.objects.create(kind="ai", name="x").subtype == ""
    assert set(Agent.Subtype.values) == {"human", "retriever", "base", "instruct", "api", "rag", "other"}
    out = StringIO()
    call_command(
        "makemigrations", "agents", "--check", "--dry-run", stdout=out
    )  # exits non-zero if a migration is missing
    from django.db import connection

    columns = {
        c.name for c in connection.introspection.get_table_description(connection.cursor(), "agents_agent")
    }
    assert "subtype" in columns


@pytest.mark.django_db
def test_predictions_import_sets_subtype(tossup_set, tmp_path):
    path = write(
        tmp_path / "p.jsonl",
        [
            {
                "agent": "bot-a",
                "item_set": "t",
                "item_id": "marked",
                "guess": "zanzibar",
                "subtype": "instruct",
            },
            {"agent": "bot-b", "item_set": "t", "item_id": "marked", "guess": "Pemba"},
        ],
    )
    call_command("import_predictions", str(path))
    assert dict(Agent.objects.values_list("name", "subtype")) == {"bot-a": "instruct", "bot-b": ""}
    bad = write(
        tmp_path / "bad.jsonl",
        [{"agent": "bot-c", "item_set": "t", "item_id": "marked", "guess": "x", "subtype": "llm"}],
    )
    with pytest.raises(CommandError, match="subtype must be one of"):
        call_command("import_predictions", str(bad))
    assert not Agent.objects.filter(name="bot-c").exists()
    clash = write(
        tmp_path / "clash.jsonl",
        [
            {"agent": "bot-a", "item_set": "t", "item_id": "marked", "guess": "x", "subtype": "base"},
            {"agent": "bot-a", "item_set": "t", "item_id": "marked", "guess": "y", "subtype": "rag"},
        ],
    )
    with pytest.raises(CommandError, match="sub-type 'base' on an earlier line"):
        call_command("import_predictions", str(clash))
    assert Agent.objects.get(name="bot-a").subtype == "instruct"


@pytest.mark.django_db
def test_caimira_agents_jsonl_subtype(tmp_path):
    folder = tmp_path / "c"
    folder.mkdir()
    write(folder / "queries.jsonl", [{"id": "q1", "text": "Name this city.", "answer": "Paris"}])
    write(
        folder / "agents.jsonl",
        [
            {"id": "gpt", "name": "GPT", "type": "ai", "subtype": "api"},
            {"id": "dpr", "name": "DPR", "type": "ai", "subtype": "retriever"},
            {"id": "p1", "name": "P", "type": "human"},
        ],
    )
    write(
        folder / "responses.jsonl",
        [{"query_id": "q1", "agent_id": a, "ruling": 1} for a in ("gpt", "dpr", "p1")],
    )
    items_import(fmt="caimira", path=folder, set_slug="c")
    assert dict(Agent.objects.values_list("name", "subtype")) == {"GPT": "api", "DPR": "retriever", "P": ""}
    write(folder / "agents.jsonl", [{"id": "gpt", "name": "GPT", "type": "ai", "subtype": "chatbot"}])
    with pytest.raises(ImportError_, match="subtype must be one of"):
        items_import(fmt="caimira", path=folder, set_slug="c")


@pytest.mark.django_db
def test_admin_changes_subtype(admin_client):
    agent = Agent.objects.create(kind="ai", name="bot")
    page = admin_client.get(f"/admin/agents/agent/{agent.pk}/change/")
    assert page.status_code == 200 and b'name="subtype"' in page.content
    listing = admin_client.get("/admin/agents/agent/?subtype__exact=")
    assert listing.status_code == 200
