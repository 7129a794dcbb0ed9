"""The API's responses carry the export's campaign and practice columns and take its campaign and
include_practice filters, with the same values: the rows are the export's `answers` (two campaigns
answered through the annotation pages, a practice item, a live buzz, an AI row naming a campaign)."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from quizsite.research import exports
from quizsite.research.prepare import DataSpec
from tests.annotate.test_export_campaigns import answers, jsonl_rows  # noqa: F401  (answers: the shared fixture)


@pytest.fixture
def api(admin_user) -> APIClient:  # type: ignore[no-untyped-def]
    """A superuser (a researcher by quizsite.core.roles without a query), authenticated without a token row,
    so the queries counted are the endpoint's own."""
    client = APIClient()
    client.force_authenticate(admin_user)
    return client


def api_rows(api: APIClient, **params) -> list[dict]:  # type: ignore[no-untyped-def]
    got = api.get("/api/responses/", {"page_size": 1000, **params})
    assert got.status_code == 200, got.content
    body = got.json()
    assert body["next"] is None
    return body["results"]


def export_rows(spec: DataSpec) -> list[dict]:
    return jsonl_rows(b"".join(exports.stream_responses("jsonl", spec)))


def test_campaign_and_practice_fields_equal_the_export(api, answers):  # noqa: F811
    rows = api_rows(api, include_practice="1")
    assert list(rows[0])[-6:] == ["override_verdict", "override_correct", "override_by", "override_at", "campaign", "practice"]
    got = {r["response_id"]: (r["campaign"], r["practice"]) for r in rows}
    assert got == {r["response_id"]: (r["campaign"], r["practice"]) for r in export_rows(DataSpec(include_practice=True))}
    assert {name: got[r.pk] for name, r in answers.items()} == {
        "c1_practice": ("c1", True), "c1_real": ("c1", False), "c2": ("c2", False),
        "live": ("", False), "ai": ("", False), "old_practice": ("c1", True),
    }
    one = api.get(f"/api/responses/{answers['c2'].pk}/").json()
    assert (one["campaign"], one["practice"]) == ("c2", False)


def test_practice_left_out_unless_asked_and_campaign_filter(api, answers):  # noqa: F811
    def ids(**params) -> set[int]:  # type: ignore[no-untyped-def]
        return {r["response_id"] for r in api_rows(api, **params)}

    default = api_rows(api)
    assert {r["practice"] for r in default} == {False}
    assert {r["response_id"] for r in default} == {r["response_id"] for r in export_rows(DataSpec())}
    assert {answers["c1_practice"].pk, answers["old_practice"].pk}.isdisjoint(r["response_id"] for r in default)
    assert ids(include_practice="false") == ids()
    assert ids(campaign="c1") == {answers["c1_real"].pk}  # not the AI row whose meta names c1
    assert ids(campaign=["c1", "c2"]) == {answers["c1_real"].pk, answers["c2"].pk}
    assert ids(campaign="c1", include_practice="true") == {
        answers["c1_real"].pk, answers["c1_practice"].pk, answers["old_practice"].pk}
    assert api.get("/api/responses/", {"campaign": "nope"}).json() == {"detail": "unknown campaign: nope"}
    for params, spec in (({"campaign": ["c1", "c2"], "include_practice": "1"}, DataSpec(campaigns=["c1", "c2"], include_practice=True)),
                         ({"campaign": "c2"}, DataSpec(campaigns=["c2"]))):
        assert ids(**params) == {r["response_id"] for r in export_rows(spec)}


def test_one_query_per_page(api, answers, django_assert_num_queries):  # noqa: F811
    for size in (2, 1000):  # the columns come from the page's own query, not one query per row
        with django_assert_num_queries(2):  # the page's rows, and the check that campaigns c1 and c2 exist
            page = api.get("/api/responses/", {"page_size": size, "include_practice": "1", "campaign": ["c1", "c2"]})
        results = page.json()["results"]
        assert len(results) == min(size, 4) and {(r["campaign"], r["practice"]) for r in results} <= {("c1", True), ("c1", False), ("c2", False)}
    assert {r["response_id"] for r in results} == {answers[n].pk for n in ("c1_practice", "c1_real", "old_practice", "c2")}


def test_schema_documents_the_fields_and_parameters(api):
    schema = api.get("/api/schema/", {"format": "json"}).json()
    params = {p["name"]: p for p in schema["paths"]["/api/responses/"]["get"]["parameters"]}
    assert {"item_set", "agent_kind", "since", "source"} <= set(params)  # the others were documented already
    assert params["campaign"]["schema"] == {"type": "array", "items": {"type": "string"}} and params["campaign"]["explode"]
    assert params["include_practice"]["schema"] == {"type": "boolean"}
    fields = schema["components"]["schemas"]["Response"]["properties"]
    assert fields["campaign"]["type"] == "string" and fields["practice"]["type"] == "boolean"
