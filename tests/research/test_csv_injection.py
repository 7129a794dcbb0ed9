"""CSV formula injection: text that a spreadsheet would run as a formula leaves every CSV export with a
leading single quote; JSON lines and Parquet keep the exact text, and so does the responses table.
Numbers stay numbers (a negative score is not text)."""

from __future__ import annotations

import csv
import io
import json

import pyarrow.parquet as pq
import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from quizsite.agents.models import Agent
from quizsite.core.csvsafe import csv_cell
from quizsite.items.models import Response
from quizsite.research import exports, fits, services
from quizsite.research.fits import FitSpec
from quizsite.research.prepare import DataSpec

HYPERLINK = '=HYPERLINK("http://x","click")'
DANGEROUS = [HYPERLINK, "+1+1", "-2+3", "@SUM(A1:A2)", "\t=1+1", "\r=1+1", "=cmd|' /C calc'!A0"]
HARMLESS = ["Claude Monet", "", "1+1", " =1", "x=1", "'quoted", "[1, 2]"]


def csv_rows(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode())))


@pytest.fixture
def typed(world) -> dict[str, Response]:  # type: ignore[no-untyped-def]
    """Responses whose `given` is each dangerous and harmless text, one with a negative score and points."""
    human = next(a for a in world["agents"] if a.kind == Agent.Kind.HUMAN)
    item = world["items"][0]
    out = {}
    for text in DANGEROUS + HARMLESS:
        out[text] = Response.objects.create(agent=human, item=item, source="live", given=text, verdict="reject",
                                            correct=False, score=-5.0, points=-5, room="r")
    return out


def test_the_one_function():
    for text in DANGEROUS:
        assert csv_cell(text) == "'" + text
    for text in HARMLESS:
        assert csv_cell(text) == text
    for value in (-5, -5.5, 0, True, None):
        assert csv_cell(value) is value  # numbers, booleans and nulls are not text


def test_responses_csv_neutralises_text_but_not_numbers(typed):
    by_id = {int(r["response_id"]): r for r in csv_rows(b"".join(exports.stream_responses("csv")))}
    for text, response in typed.items():
        row = by_id[response.pk]
        assert row["given"] == (("'" + text) if text in DANGEROUS else text)
        assert row["score"] == "-5.0" and row["points"] == "-5"  # numbers stay numbers
    assert Response.objects.get(pk=typed[HYPERLINK].pk).given == HYPERLINK  # the table keeps what was typed


def test_jsonl_and_parquet_keep_the_exact_text(typed):
    lines = {r["response_id"]: r for r in map(json.loads, b"".join(exports.stream_responses("jsonl")).decode().splitlines())}
    table = pq.read_table(io.BytesIO(b"".join(exports.stream_responses("parquet")))).to_pylist()
    parquet = {r["response_id"]: r for r in table}
    for text, response in typed.items():
        assert lines[response.pk]["given"] == text and parquet[response.pk]["given"] == text
        assert lines[response.pk]["score"] == -5.0 and parquet[response.pk]["points"] == -5


def test_web_and_command_csv_exports(typed, staff, tmp_path):
    client = Client()
    client.force_login(staff)
    web = client.get(reverse("research:export_responses", args=["csv"]))
    rows = {int(r["response_id"]): r for r in csv_rows(b"".join(web.streaming_content))}
    assert rows[typed[HYPERLINK].pk]["given"] == "'" + HYPERLINK
    call_command("export", "responses", "--format", "csv", "--out", str(tmp_path / "r.csv"))
    rows = {int(r["response_id"]): r for r in csv_rows((tmp_path / "r.csv").read_bytes())}
    assert rows[typed["@SUM(A1:A2)"].pk]["given"] == "'@SUM(A1:A2)"


def test_fit_parameter_csv_neutralises_names(world, research_cache, tmp_path):
    Agent.objects.filter(pk=world["agents"][0].pk).update(name=HYPERLINK)
    run = fits.fit_run_execute(fit_id=services.fitrun_create(spec=FitSpec(embedder="hashing-16", max_epochs=5, dims=2,
                                                                        data=DataSpec(agent_kinds=["ai", "human"]))).pk)
    assert run.status == "succeeded", run.error
    agents = csv_rows(b"".join(exports.stream_fit(run, "agents", "csv")))
    named = [r for r in agents if r["name"].endswith(HYPERLINK)]
    assert [r["name"] for r in named] == ["'" + HYPERLINK]
    assert all(not r["name"].startswith(("=", "+", "-", "@")) for r in agents)
    assert all(isinstance(float(r["skill_1"]), float) for r in agents)  # numbers, negative ones too, unquoted
    jsonl = [json.loads(x) for x in b"".join(exports.stream_fit(run, "agents", "jsonl")).decode().splitlines()]
    assert HYPERLINK in [r["name"] for r in jsonl]
    call_command("export", "fit", "--fit", str(run.pk), "--params", "agents", "--format", "csv", "--out", str(tmp_path / "a.csv"))
    assert "'" + HYPERLINK in [r["name"] for r in csv_rows((tmp_path / "a.csv").read_bytes())]
