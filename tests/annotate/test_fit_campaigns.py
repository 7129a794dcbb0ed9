"""The New-fit form fits the answers of chosen annotation campaigns only, as `fit_caimira --campaign` does:
a researcher picks campaigns on the form, the run keeps them in its data spec, and the data the fit
prepares holds only those campaigns' answers (practice left out unless its box is ticked)."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from quizsite.agents.models import Agent
from quizsite.annotate.models import Campaign
from quizsite.items.models import Response
from quizsite.research import cli
from quizsite.research.models import FitRun
from quizsite.research.prepare import DataSpec, prepare
from tests.annotate.test_export_campaigns import answers  # noqa: F401  (the export tests' answers)

FORM = {"agent_kinds": ["human", "ai"], "grouping": "individual", "group_sizes": "1,5", "model": "caimira", "dims": 2,
        "embedder": "hashing-16", "template": "{text}", "max_epochs": 5, "val_fraction": 0.1, "seed": 0, "n_clusters": 2}


@pytest.fixture
def crowd(answers):  # type: ignore[no-untyped-def]  # noqa: F811
    """Four more annotators in each campaign, each on every item of its set, written as the annotation pages
    write their rows. One answer per campaign (the export tests' data) is too little for a fit, which the
    New-fit form refuses (research README, "The least data a fit is made from")."""
    rows: dict[str, list[Response]] = {}
    for slug in ("c1", "c2"):
        campaign = Campaign.objects.get(slug=slug)
        rows[slug] = []
        for a in range(4):
            agent = Agent.objects.create(kind="human", name=f"{slug} annotator {a}")
            for j, item in enumerate(campaign.item_set.items.order_by("id")):
                right = (a + j) % 2 == 0
                rows[slug].append(Response.objects.create(
                    agent=agent, item=item, source="annotation", given="x", verdict="accept" if right else "reject",
                    correct=right, meta={"campaign": slug, "task": campaign.task, "role": "pool"}))
    return rows


def agents_of(rows: list[Response]) -> set[str]:
    return {r.agent.public_id for r in rows}


def start(client, label: str, **data) -> FitRun:  # type: ignore[no-untyped-def]
    response = client.post(reverse("research:fit_new"), {**FORM, "label": label, **data})
    assert response.status_code == 302, response.context["form"].errors if response.context else response
    return FitRun.objects.get(label=label)


def test_form_offers_the_campaigns(admin_client, answers):  # noqa: F811
    html = admin_client.get(reverse("research:fit_new")).content.decode()
    assert 'name="campaigns"' in html and "Annotation campaigns" in html
    assert '<option value="c1">c1 (' in html and '<option value="c2">c2 (' in html


def test_fit_of_chosen_campaigns(admin_client, answers, crowd):  # noqa: F811
    run = start(admin_client, "c1 only", campaigns=["c1"])
    spec = DataSpec.from_dict(run.settings["data"])
    assert run.settings["data"]["campaigns"] == ["c1"]
    # what `fit_caimira --campaign c1` records, the rest of the form's choices aside
    assert spec.campaigns == cli.data_spec({"sets": "", "item_kinds": "", "agent_kinds": "human,ai", "since": "", "until": "",
                                            "grouping": "individual", "group_sizes": "1", "seed": 0, "campaign": "c1"}).campaigns
    prepared = prepare(spec)
    real = [answers["c1_real"], *crowd["c1"]]  # not c1's practice answers, not the AI row whose meta names c1, not c2
    assert prepared.counts["source_responses"] == len(real)
    assert {r["agent_id"] for r in prepared.responses} == agents_of(real)
    assert {q["item_pk"] for q in prepared.queries} == {r.item_id for r in real}

    both = DataSpec.from_dict(start(admin_client, "both", campaigns=["c1", "c2"]).settings["data"])
    assert both.campaigns == ["c1", "c2"]
    assert {q["item_pk"] for q in prepare(both).queries} == {r.item_id for r in [*real, answers["c2"], *crowd["c2"]]}

    every = DataSpec.from_dict(start(admin_client, "every").settings["data"])
    crowded = len(crowd["c1"]) + len(crowd["c2"])
    assert every.campaigns == [] and prepare(every).counts["source_responses"] == 4 + crowded  # live, AI, c1 and c2 answers


def test_repeat_a_run_keeps_its_campaigns(admin_client, answers, crowd):  # noqa: F811
    run = start(admin_client, "c2 only", campaigns=["c2"])
    html = admin_client.get(reverse("research:fit_new") + f"?from={run.pk}").content.decode()
    assert '<option value="c2" selected>' in html and '<option value="c1" selected>' not in html


def test_practice_answers_are_fitted_when_the_box_is_ticked(admin_client, answers, crowd):  # noqa: F811
    unticked = DataSpec.from_dict(start(admin_client, "without", campaigns=["c1"]).settings["data"])
    assert not unticked.include_practice and prepare(unticked).counts["source_responses"] == 1 + len(crowd["c1"])
    run = start(admin_client, "with practice", campaigns=["c1"], include_practice="on")
    spec = DataSpec.from_dict(run.settings["data"])
    # c1's real answer, its practice answer and the old one known by its role only (as --include-practice)
    assert spec.include_practice and prepare(spec).counts["source_responses"] == 3 + len(crowd["c1"])
    page = admin_client.get(reverse("research:fit_detail", args=[run.pk])).content.decode()
    assert "<th>Practice answers</th><td>included</td>" in page
    again = admin_client.get(reverse("research:fit_new") + f"?from={run.pk}").content.decode()
    assert re.search(r'<input type="checkbox" name="include_practice"[^>]* checked', again)


def test_unknown_campaign_is_refused(admin_client, answers):  # noqa: F811
    response = admin_client.post(reverse("research:fit_new"), {**FORM, "label": "x", "campaigns": ["nope"]})
    assert response.status_code == 200 and "campaigns" in response.context["form"].errors
    assert not FitRun.objects.exists()


def test_the_fit_reads_those_rows(admin_client, answers, crowd, settings, tmp_path,  # noqa: F811
                                  django_capture_on_commit_callbacks):
    """The run as the form starts it (its Celery task, eager here) fits the two campaigns' answers only."""
    settings.RESEARCH_EMBEDDING_CACHE = tmp_path / "emb"
    with django_capture_on_commit_callbacks(execute=True):
        run = start(admin_client, "fitted", campaigns=["c1", "c2"])
    run.refresh_from_db()
    assert run.status == "succeeded", run.error
    assert run.counts["source_responses"] == 2 + len(crowd["c1"]) + len(crowd["c2"])
    assert run.counts["agents"] == len(agents_of([answers["c1_real"], answers["c2"], *crowd["c1"], *crowd["c2"]]))
    page = admin_client.get(reverse("research:fit_detail", args=[run.pk])).content.decode()
    assert "<th>Campaigns</th><td>c1, c2</td>" in page
