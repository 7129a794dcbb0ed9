"""Exports: responses in three formats with DATA.md columns and overrides, the caimira round trip through
`python -m irt fit`, fit parameters, and the export command."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys

import pyarrow.parquet as pq
import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from quizsite.items.models import Response, ResponseOverride
from quizsite.research import exports, fits, services
from quizsite.research.fits import FitSpec
from quizsite.research.prepare import DataSpec

from ..conftest import REPO

DATA_MD_COLUMNS = [
    "response_id", "created_at", "agent_id", "agent_kind", "agent_name", "item_id", "item_set", "item_kind", "tossup_id",
    "clue_index", "word_index", "n_words", "elapsed_ms", "duration_ms", "given", "choices", "verdict", "correct", "score",
    "points", "room", "source",
]
OVERRIDE_COLUMNS = ["override_verdict", "override_correct", "override_by", "override_at"]
CAMPAIGN_COLUMNS = ["campaign", "practice"]  # after the override, at the end: DATA.md's columns keep their places


def body(response) -> bytes:  # type: ignore[no-untyped-def]
    return b"".join(response.streaming_content)


@pytest.fixture
def overridden(world, staff):
    response = Response.objects.filter(agent__kind="human", correct=False).order_by("id").first()
    ResponseOverride.objects.create(response=response, by=staff, verdict="reject", correct=False, note="first look")
    ResponseOverride.objects.create(response=response, by=staff, verdict="accept", correct=True, note="on appeal")
    return response


def test_responses_csv_columns_overrides_and_pseudonyms(world, overridden):
    text = b"".join(exports.stream_responses("csv")).decode()
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == DATA_MD_COLUMNS + OVERRIDE_COLUMNS + CAMPAIGN_COLUMNS
    assert len(rows) - 1 == Response.objects.count()
    by_id = {int(r[0]): dict(zip(rows[0], r, strict=True)) for r in rows[1:]}
    row = by_id[overridden.pk]
    assert row["verdict"] == "reject" and row["correct"] == "False"  # the original ruling, unchanged
    assert row["override_verdict"] == "accept" and row["override_correct"] == "True" and row["override_by"] == "res"
    assert row["override_at"]
    assert row["agent_name"] == row["agent_id"] and row["agent_id"].startswith("h-")
    assert "Player" not in text
    assert row["tossup_id"] == row["item_id"] and row["item_kind"] == "tossup" and row["source"] == "live"


def test_responses_jsonl_and_parquet_agree(world, overridden):
    lines = [json.loads(x) for x in b"".join(exports.stream_responses("jsonl")).decode().splitlines()]
    assert list(lines[0]) == DATA_MD_COLUMNS + OVERRIDE_COLUMNS + CAMPAIGN_COLUMNS
    table = pq.read_table(io.BytesIO(b"".join(exports.stream_parquet(exports.response_rows(exports.responses_queryset()), row_group=7))))
    assert table.schema.names == DATA_MD_COLUMNS + OVERRIDE_COLUMNS + CAMPAIGN_COLUMNS
    assert table.num_rows == len(lines) == Response.objects.count()
    assert table.column("response_id").to_pylist() == [r["response_id"] for r in lines]
    assert table.column("correct").to_pylist() == [r["correct"] for r in lines]
    mine = next(r for r in table.to_pylist() if r["response_id"] == overridden.pk)
    assert mine["override_correct"] is True and mine["correct"] is False


def test_parquet_of_nothing_is_a_valid_empty_file(db):
    table = pq.read_table(io.BytesIO(b"".join(exports.stream_responses("parquet"))))
    assert table.num_rows == 0 and table.schema.names[-2:] == CAMPAIGN_COLUMNS


def test_filters(world):
    ai = [json.loads(x) for x in b"".join(exports.stream_responses("jsonl", DataSpec(agent_kinds=["ai"]))).decode().splitlines()]
    assert ai and {r["agent_kind"] for r in ai} == {"ai"} and len(ai) == Response.objects.filter(agent__kind="ai").count()
    assert b"".join(exports.stream_responses("jsonl", DataSpec(item_sets=["none"]))) == b""
    late = b"".join(exports.stream_responses("jsonl", DataSpec(since="2999-01-01"))).decode()
    assert late == ""


def test_web_exports_stream(client, staff, world):
    client.force_login(staff)
    response = client.get(reverse("research:export_responses", args=["parquet"]), {"agent_kind": "human"})
    assert response.streaming and response["Content-Disposition"].endswith('responses.parquet"')
    assert pq.read_table(io.BytesIO(body(response))).num_rows == Response.objects.filter(agent__kind="human").count()
    assert client.get(reverse("research:exports")).status_code == 200
    archive = client.get(reverse("research:export_caimira"), {"grouping": "groups", "group_sizes": "2"})
    assert archive.status_code == 200 and body(archive)[:2] == b"PK"


def test_an_unknown_item_set_or_campaign_is_refused_not_an_empty_export(client, staff, world, tmp_path):
    """A mistyped name used to give a 200 with no rows (or an empty zip, an empty API page), as if the
    set had no answers."""
    from rest_framework.test import APIClient

    client.force_login(staff)
    for url in (reverse("research:export_responses", args=["jsonl"]), reverse("research:export_caimira")):
        response = client.get(url, {"item_set": "nope"})
        assert response.status_code == 400 and response.content.decode() == "unknown item set: nope"
    response = client.get(reverse("research:export_responses", args=["csv"]), {"campaign": ["zz", "aa"]})
    assert response.status_code == 400 and response.content.decode() == "unknown campaigns: aa, zz"
    api = APIClient()
    api.force_authenticate(staff)
    answer = api.get("/api/responses/", {"item_set": "nope"})
    assert answer.status_code == 400 and "unknown item set: nope" in answer.json()["detail"]
    with pytest.raises(CommandError, match="unknown item set: nope"):
        call_command("export", "responses", "--sets", "nope", "--out", str(tmp_path / "r.csv"))
    with pytest.raises(CommandError, match="unknown campaign: zz"):
        call_command("fit_caimira", "--campaign", "zz", "--wait")
    known = sorted({s for s in Response.objects.values_list("item__item_set__slug", flat=True)})[0]
    assert client.get(reverse("research:export_responses", args=["jsonl"]), {"item_set": known}).status_code == 200


@pytest.mark.parametrize("query, says", [
    ({"grouping": "groups", "group_sizes": "abc"}, "whole numbers separated by commas"),
    ({"grouping": "groups", "group_sizes": "0"}, "positive whole number"),
    ({"grouping": "paper", "groups_per_size": "five"}, "groups per size"),
])
def test_caimira_export_refuses_group_settings_it_cannot_read(client, staff, world, query, says):
    """It used to build the zip with groups of one instead (sizes "abc" read as [1]), saying nothing."""
    client.force_login(staff)
    response = client.get(reverse("research:export_caimira"), query)
    assert response.status_code == 400 and says in response.content.decode()


def test_caimira_export_round_trip_through_irt_cli(world, overridden, tmp_path):
    folder = tmp_path / "caimira"
    counts = exports.caimira_export(spec=DataSpec(), directory=folder)
    agents = [json.loads(x) for x in (folder / "agents.jsonl").read_text().splitlines()]
    assert all("agent_pk" not in a for a in agents) and {a["type"] for a in agents} == {"ai", "human"}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-m", "irt", "fit", "--queries", str(folder / "queries.jsonl"), "--agents", str(folder / "agents.jsonl"),
         "--responses", str(folder / "responses.jsonl"), "--out", str(tmp_path / "fit"), "--model", "1pl", "--epochs", "20",
         "--no-progress"],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    metrics = json.loads((tmp_path / "fit" / "metrics.json").read_text())
    assert (metrics["n_responses"], metrics["n_items"], metrics["n_agents"]) == (counts["responses"], counts["items"], counts["agents"])


def test_fit_parameter_exports_and_command(world, research_cache, tmp_path, capsys):
    run = fits.fit_run_execute(fit_id=services.fitrun_create(spec=FitSpec(embedder="hashing-16", max_epochs=10, dims=3)).pk)
    rows = list(csv.DictReader(io.StringIO(b"".join(exports.stream_fit(run, "agents", "csv")).decode())))
    assert len(rows) == 7 and {"skill_1", "skill_2", "skill_3"} <= set(rows[0])
    items = [json.loads(x) for x in b"".join(exports.stream_fit(run, "items", "jsonl")).decode().splitlines()]
    assert len(items) == run.counts["items"] and len(items[0]["relevance"]) == 3 and items[0]["item_set"] == "world"
    call_command("export", "fit", "--params", "items", "--format", "csv", "--out", str(tmp_path / "items.csv"))
    assert (tmp_path / "items.csv").read_text().startswith("id,item_set,item_id,clue,")
    call_command("export", "responses", "--format", "parquet", "--agent-kinds", "ai", "--out", str(tmp_path / "r.parquet"))
    assert pq.read_table(tmp_path / "r.parquet").num_rows == Response.objects.filter(agent__kind="ai").count()
    call_command("export", "caimira", "--out", str(tmp_path / "c"), "--grouping", "groups", "--group-sizes", "2")
    assert "human_group" in (tmp_path / "c" / "agents.jsonl").read_text()
