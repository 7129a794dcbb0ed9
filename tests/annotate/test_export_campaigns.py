"""The responses export says which annotation campaign a row belongs to and whether it was practice, and
filters by campaign: as columns at the end (DATA.md's keep their places) in CSV, JSON lines and Parquet,
and as `--campaign` on the command line, `campaign` on the HTTP export, a field on the export page."""

from __future__ import annotations

import csv
import io
import json

import pyarrow.parquet as pq
import pytest
from django.core.management import call_command
from django.test import Client

from quizsite.agents.models import Agent
from quizsite.items.models import Item, Response
from quizsite.research import exports
from quizsite.research.prepare import DataSpec
from tests.annotate.test_flow import enter, post, show


@pytest.fixture
def answers(make_campaign, client):  # type: ignore[no-untyped-def]
    """Campaign c1 (one practice item, then real ones) and c2, answered through the annotation pages; a
    live buzz; an AI row whose meta happens to name c1; an old practice answer known by its role only."""
    make_campaign("archaeology-choose", "arch", slug="c1", per_item=2, practice=1)
    make_campaign("ghigliottina-choose", "ghig", slug="c2", per_item=2)
    enter(client, "c1")
    for _ in range(2):  # the practice item comes first
        ctx = show(client, "c1")
        post(client, "c1", ctx["assignment"], choice=0)
    other = Client()
    enter(other, "c2", pid="p2")
    ctx = show(other, "c2")
    post(other, "c2", ctx["assignment"], choice=1)
    item = Item.objects.filter(item_set__slug="arch").first()
    person = Agent.objects.create(kind="human", name="Someone")
    ai = Agent.objects.create(kind="ai", name="bot")
    rows = {
        "live": Response.objects.create(agent=person, item=item, source="live", given="x", verdict="reject", correct=False),
        "ai": Response.objects.create(agent=ai, item=item, source="agent_run", given="y", meta={"campaign": "c1"}),
        "old_practice": Response.objects.create(agent=person, item=item, source="annotation", given="z",
                                                meta={"campaign": "c1", "role": "training"}),
    }
    by_campaign = {slug: list(Response.objects.filter(meta__campaign=slug, source="annotation").exclude(
        pk=rows["old_practice"].pk).order_by("id")) for slug in ("c1", "c2")}
    assert [r.meta.get("practice", False) for r in by_campaign["c1"]] == [True, False]
    assert len(by_campaign["c2"]) == 1
    return {**rows, "c1_practice": by_campaign["c1"][0], "c1_real": by_campaign["c1"][1], "c2": by_campaign["c2"][0]}


def csv_rows(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode())))


def jsonl_rows(data: bytes) -> list[dict]:
    return [json.loads(x) for x in data.decode().splitlines()]


def test_campaign_and_practice_columns_in_every_format(answers, django_assert_num_queries):
    spec = DataSpec(include_practice=True)
    with django_assert_num_queries(1):  # read from each row's meta: one query, however many rows
        text = b"".join(exports.stream_responses("csv", spec))
    rows = {int(r["response_id"]): r for r in csv_rows(text)}
    got = {name: (rows[r.pk]["campaign"], rows[r.pk]["practice"]) for name, r in answers.items()}
    assert got == {
        "c1_practice": ("c1", "True"), "c1_real": ("c1", "False"), "c2": ("c2", "False"),
        "live": ("", "False"), "ai": ("", "False"),  # only annotation answers belong to a campaign
        "old_practice": ("c1", "True"),  # the role alone marks it, as the default export's filter reads it
    }
    assert list(csv_rows(text)[0])[-6:] == ["override_verdict", "override_correct", "override_by", "override_at",
                                            "campaign", "practice"]

    lines = {r["response_id"]: r for r in jsonl_rows(b"".join(exports.stream_responses("jsonl", spec)))}
    assert {name: (lines[r.pk]["campaign"], lines[r.pk]["practice"]) for name, r in answers.items()} == {
        name: (c, p == "True") for name, (c, p) in got.items()
    }
    table = pq.read_table(io.BytesIO(b"".join(exports.stream_responses("parquet", spec))))
    assert str(table.schema.field("practice").type) == "bool" and str(table.schema.field("campaign").type) == "string"
    parquet = dict(zip(table.column("response_id").to_pylist(),
                       zip(table.column("campaign").to_pylist(), table.column("practice").to_pylist(), strict=True),
                       strict=True))
    assert parquet == {r["response_id"]: (r["campaign"], r["practice"]) for r in lines.values()}


def test_default_export_leaves_practice_out(answers):
    lines = jsonl_rows(b"".join(exports.stream_responses("jsonl")))
    assert {r["practice"] for r in lines} == {False}
    assert {answers["c1_practice"].pk, answers["old_practice"].pk}.isdisjoint(r["response_id"] for r in lines)


def test_campaign_filter(answers):
    def ids(spec: DataSpec) -> set[int]:
        return {r["response_id"] for r in jsonl_rows(b"".join(exports.stream_responses("jsonl", spec)))}

    assert ids(DataSpec(campaigns=["c1"])) == {answers["c1_real"].pk}  # not the AI row that names c1 in its meta
    assert ids(DataSpec(campaigns=["c1"], include_practice=True)) == {
        answers["c1_real"].pk, answers["c1_practice"].pk, answers["old_practice"].pk}
    assert ids(DataSpec(campaigns=["c1", "c2"])) == {answers["c1_real"].pk, answers["c2"].pk}
    assert ids(DataSpec(campaigns=["nope"])) == set()


def test_campaign_filter_on_the_command_line(answers, tmp_path):
    out = tmp_path / "c1.csv"
    call_command("export", "responses", "--format", "csv", "--campaign", "c1", "--include-practice", "--out", str(out))
    rows = csv_rows(out.read_bytes())
    assert {int(r["response_id"]) for r in rows} == {answers["c1_real"].pk, answers["c1_practice"].pk,
                                                     answers["old_practice"].pk}
    assert {r["campaign"] for r in rows} == {"c1"}
    call_command("export", "responses", "--format", "parquet", "--campaign", "c1,c2", "--out", str(tmp_path / "r.parquet"))
    assert sorted(pq.read_table(tmp_path / "r.parquet").column("campaign").to_pylist()) == ["c1", "c2"]


def test_campaign_filter_over_http_and_on_the_export_page(answers, admin_client):
    page = admin_client.get("/research/exports/").content.decode()
    assert 'name="campaign"' in page and '<option value="c1">' in page and '<option value="c2">' in page
    got = admin_client.get("/research/exports/responses.jsonl", {"campaign": "c2"})
    assert [r["response_id"] for r in jsonl_rows(b"".join(got.streaming_content))] == [answers["c2"].pk]
    got = admin_client.get("/research/exports/responses.csv", {"campaign": ["c1", "c2"], "include_practice": "1"})
    rows = csv_rows(b"".join(got.streaming_content))
    assert {(r["campaign"], r["practice"]) for r in rows} == {("c1", "True"), ("c1", "False"), ("c2", "False")}
