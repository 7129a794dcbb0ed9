"""Practice items: drawn once per campaign, answered first with right/wrong and the correct answer, stored as
practice and counted nowhere (agreement, per-annotator figures, completion, exports' default). And the
skip-or-flag box's reasons reach the stored note."""

from __future__ import annotations

import csv
import io
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from quizsite.annotate import selectors
from quizsite.annotate.models import Assignment, Campaign
from quizsite.annotate.services import _practice_draw
from quizsite.annotate.tasks import AnnotateError
from quizsite.items.models import Response
from quizsite.research import exports
from quizsite.research.prepare import DataSpec
from tests.annotate.test_flow import enter, finish_page, post, show


def _answer_true(client: Client, ctx) -> None:  # type: ignore[no-untyped-def]
    post(client, "c", ctx["assignment"], choice=ctx["choices"].index(ctx["item"].data["true_question"]))


def test_practice_items_are_drawn_once_and_never_real(make_campaign):
    campaign = make_campaign("archaeology-choose", "arch", per_item=2, practice=2)
    drawn = sorted(campaign.training_items.values_list("id", flat=True))
    assert len(drawn) == 2 and campaign.practice_count == 2
    campaign.training_items.clear()
    assert _practice_draw(campaign, 2) == drawn  # seeded by the slug: the same items whoever asks
    campaign.training_items.set(drawn)
    stats = selectors.campaign_stats(campaign, now=Campaign.objects.get().created_at)
    assert stats["progress"]["pool_items"] == 2
    assert not {i["item"] for i in stats["items"]} & set(
        campaign.training_items.values_list("external_id", flat=True)
    )


def test_too_many_practice_items_is_refused_and_creates_nothing(make_campaign):
    with pytest.raises(AnnotateError, match="would leave no real items"):
        make_campaign("archaeology-choose", "arch", practice=4)
    assert not Campaign.objects.exists()
    with pytest.raises(CommandError, match="practice must be 0 or more"):
        call_command(
            "campaign_create",
            "--set",
            "arch",
            "--task",
            "archaeology-choose",
            "--slug",
            "x",
            "--practice",
            "-1",
        )


def test_command_and_manage_page_set_and_show_practice(sets, admin_client):
    out = StringIO()
    call_command(
        "campaign_create",
        "--set",
        "ghig",
        "--task",
        "ghigliottina-choose",
        "--slug",
        "p1",
        "--practice",
        "1",
        stdout=out,
    )
    assert "1 practice item(s)" in out.getvalue()
    assert Campaign.objects.get(slug="p1").training_items.count() == 1
    made = admin_client.post(
        "/annotate/manage/new/",
        {
            "slug": "m1",
            "item_set": "arch",
            "task": "archaeology-choose",
            "per_item": 2,
            "quota": 0,
            "lease_minutes": 5,
            "timer_seconds": 60,
            "practice": 2,
        },
    )
    assert made.status_code == 302
    campaign = Campaign.objects.get(slug="m1")
    assert campaign.practice_count == 2 and campaign.training_items.count() == 2
    detail = admin_client.get("/annotate/manage/m1/").content.decode()
    assert "2 drawn from the set" in detail
    for ext in campaign.training_items.values_list("external_id", flat=True):
        assert f"<code>{ext}</code>" in detail


def test_practice_first_with_feedback_then_excluded_everywhere(make_campaign, client, admin_client):
    campaign = make_campaign("archaeology-choose", "arch", per_item=2, practice=2, min_answers=2)
    practice_ids = set(campaign.training_items.values_list("id", flat=True))
    participant = enter(client, "c")

    # practice 1: wrong answer -> "Not quite." and the correct question
    ctx = show(client, "c")
    assert ctx["training"] and ctx["item"].id in practice_ids
    assert b">practice<" in client.get("/annotate/c/item/").content
    wrong = ctx["choices"].index(ctx["item"].data["other_questions"][0])
    sent = post(client, "c", ctx["assignment"], choice=wrong)
    assert sent.status_code == 302 and sent.url == "/annotate/c/feedback/"
    page = client.get("/annotate/c/feedback/").content.decode()
    assert "Not quite." in page and ctx["item"].data["true_question"] in page
    # practice 2: right answer -> "Right."
    ctx = show(client, "c")
    assert ctx["training"] and ctx["item"].id in practice_ids
    _answer_true(client, ctx)
    assert "Right." in client.get("/annotate/c/feedback/").content.decode()
    assert selectors.participant_answer_count(participant) == 0  # practice does not count toward the code

    # then the two real items, no feedback
    for _ in range(2):
        ctx = show(client, "c")
        assert not ctx["training"] and ctx["item"].id not in practice_ids
        sent = post(client, "c", ctx["assignment"], choice=0)
        assert sent.url == "/annotate/c/item/"
    assert show(client, "c") is None  # done after two real answers

    practice = list(Response.objects.filter(item_id__in=practice_ids))
    real = list(Response.objects.exclude(item_id__in=practice_ids))
    assert len(practice) == 2 and all(r.meta.get("practice") is True for r in practice)
    assert len(real) == 2 and all("practice" not in r.meta for r in real)

    stats = selectors.campaign_stats(campaign, now=real[-1].created_at)
    assert stats["progress"]["answers"] == 2 and stats["annotators"][0]["answered"] == 2
    assert {i["item"] for i in stats["items"] if i["answers"]} == {r.item.external_id for r in real}
    assert selectors.participant_completion(participant).answered == 2
    assert "CODE-123" in client.get("/annotate/c/done/").content.decode()

    # exports: practice left out by default, kept when asked for
    rows = list(csv.DictReader(io.StringIO(b"".join(exports.stream_responses("csv")).decode())))
    assert sorted(int(r["response_id"]) for r in rows) == sorted(r.pk for r in real)
    everything = [
        json.loads(x)
        for x in b"".join(exports.stream_responses("jsonl", DataSpec(include_practice=True)))
        .decode()
        .splitlines()
    ]
    assert len(everything) == 4
    page = admin_client.get("/research/exports/responses.csv")
    assert len(list(csv.DictReader(io.StringIO(b"".join(page.streaming_content).decode())))) == 2
    page = admin_client.get("/research/exports/responses.csv?include_practice=1")
    assert len(list(csv.DictReader(io.StringIO(b"".join(page.streaming_content).decode())))) == 4


def test_practice_answers_move_no_agreement(make_campaign):
    """Two annotators agree on every real item; their practice answers disagree. Kappa is the same as
    without practice, and the practice items are no unit of agreement."""
    from datetime import timedelta

    from django.utils import timezone

    from quizsite.agents.services import agent_get_or_create_external
    from quizsite.annotate.services import assignment_current, assignment_submit, participant_get_or_create

    campaign = make_campaign("archaeology-choose", "arch", per_item=2, practice=1)
    now = timezone.now()
    for n, person in enumerate(("x", "y")):
        agent = agent_get_or_create_external(kind="human", external_id=f"prolific:{person}", name=person)
        p = participant_get_or_create(campaign=campaign, agent=agent)
        while (a := assignment_current(participant=p, now=now)) is not None:
            truth = a.item.data["true_question"]
            pick = (
                a.choices.index(truth)
                if a.role == Assignment.Role.POOL or n == 0
                else a.choices.index(a.item.data["other_questions"][0])
            )
            assignment_submit(participant=p, assignment_id=a.pk, post={"choice": str(pick)}, now=now)
            now += timedelta(seconds=1)
    assert Response.objects.filter(meta__practice=True).count() == 2
    agreement = selectors.campaign_stats(campaign, now)["agreement"]
    assert agreement["n_units"] == 3 and agreement["observed_p_bar"] == pytest.approx(1.0)


def test_skip_reason_from_the_box_is_kept_as_a_flag(make_campaign, client):
    make_campaign("ghigliottina-choose", "ghig", per_item=2)
    enter(client, "c")
    ctx = show(client, "c")
    page = client.get("/annotate/c/item/").content.decode()
    assert (
        'id="skip-confirm"' in page and "Cancel <kbd>Esc</kbd>" in page and '<kbd class="k">1</kbd>' in page
    )
    client.post(
        "/annotate/c/item/",
        {"assignment": ctx["assignment"].pk, "action": "skip", "reason": "wrong", "note": "two right"},
    )
    assert Assignment.objects.get(pk=ctx["assignment"].pk).note == "flag: wrong or broken; two right"
    ctx = show(client, "c")
    client.post("/annotate/c/item/", {"assignment": ctx["assignment"].pk, "action": "skip", "reason": "skip"})
    assert Assignment.objects.get(pk=ctx["assignment"].pk).note == "skipped"
    assert not Response.objects.exists()


def test_multi_answer_practice_feedback_lists_the_candidates_not_json(make_campaign, client):
    """After a RoMQA practice item the annotator reads the correct answers (the candidates' texts) as a list,
    and their own ticks, each marked; never the stored JSON."""
    import re

    make_campaign("romqa-select", "romqa", per_item=1, training_ids=["r1"])  # Rhine, Elbe are answers; Loire is not
    enter(client, "c")
    ctx = show(client, "c")
    assert ctx["training"] and ctx["item"].external_id == "r1"
    post(client, "c", ctx["assignment"], pick=[ctx["choices"].index("Elbe"), ctx["choices"].index("Loire")])
    page = client.get("/annotate/c/feedback/").content.decode()
    assert "[&quot;" not in page and "&quot;]" not in page and '["' not in page

    def items(list_id: str) -> list[str]:
        found = re.search(rf'<ul class="answer-list" id="{list_id}">(.*?)</ul>', page, re.S)
        assert found, list_id
        return [" ".join(re.sub(r"<[^>]+>", "", li).split()) for li in re.findall(r"<li[^>]*>(.*?)</li>", found.group(1), re.S)]

    assert items("feedback-answers") == ["Rhine", "Elbe"]
    assert sorted(items("feedback-picked")) == ["Elbe (an answer)", "Loire (not an answer)"]
    assert "Not quite." in page
    stored = Response.objects.get()
    assert json.loads(stored.given) == sorted(["Elbe", "Loire"], key=ctx["choices"].index)  # what is stored is unchanged


def test_a_skipped_practice_item_is_no_skip_on_the_manage_page(make_campaign, client, admin_client):
    """Practice is counted nowhere: an annotator who skips a practice item, then answers the real items,
    shows 0 skips, per annotator and for the campaign, on the manage page and in its JSON."""
    make_campaign("ghigliottina-choose", "ghig", per_item=2, practice=1, min_answers=1)
    enter(client, "c")
    ctx = show(client, "c")
    assert ctx["training"]
    client.post("/annotate/c/item/", {"assignment": ctx["assignment"].pk, "action": "skip", "reason": "skip"})
    assert Assignment.objects.get(pk=ctx["assignment"].pk).state == Assignment.State.SKIPPED
    ctx = show(client, "c")
    assert not ctx["training"]
    post(client, "c", ctx["assignment"], choice=0)

    data = admin_client.get("/annotate/manage/c/?format=json").json()
    assert data["progress"]["skips"] == 0
    assert [a["skipped"] for a in data["annotators"]] == [0]
    page = admin_client.get("/annotate/manage/c/").content.decode()
    assert "0 skips" in page


def test_end_page_counts_the_real_items_and_the_practice_apart(make_campaign, client):
    """Two practice items, two real ones answered, one skipped: the end page said "(4 items)", practice
    included. It counts the real items answered, and names the practice and the skip apart."""
    make_campaign("archaeology-choose", "arch", per_item=2, practice=1, min_answers=2)
    enter(client, "c")
    ctx = show(client, "c")
    assert ctx["training"]
    _answer_true(client, ctx)
    for _ in range(2):
        ctx = show(client, "c")
        assert not ctx["training"]
        post(client, "c", ctx["assignment"], choice=0)
    ctx = show(client, "c")
    client.post("/annotate/c/item/", {"assignment": ctx["assignment"].pk, "action": "skip", "reason": "skip"})
    page = finish_page(client, "c")
    assert "CODE-123" in page
    finished = page.split('id="finished"', 1)[1].split("</p>", 1)[0]
    assert "you answered 2 items" in finished and "4 items" not in finished and "3 items" not in finished
    assert "1 item skipped" in page
    assert "1 practice item at the start" in page and "not counted" in page
