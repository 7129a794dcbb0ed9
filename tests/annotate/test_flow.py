"""The whole annotator flow through the Django test client, for every task type."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from quizsite.annotate.models import Assignment, AuthoredItem, Participant
from quizsite.annotate.services import AnnotateError
from quizsite.items.models import Item, Response
from tests.annotate.fakes import FakeVectors


def enter(client: Client, slug: str, pid: str = "p1") -> Participant:
    page = client.get(f"/annotate/{slug}/?PROLIFIC_PID={pid}&STUDY_ID=s1&SESSION_ID=x")
    assert page.status_code == 200 and b'name="agree"' in page.content
    refused = client.post(f"/annotate/{slug}/", {})
    assert b"tick the box" in refused.content
    agreed = client.post(f"/annotate/{slug}/", {"agree": "yes"})
    assert agreed.status_code == 302 and agreed.url == f"/annotate/{slug}/instructions/"
    assert client.get(agreed.url).status_code == 200
    participant = Participant.objects.get(campaign__slug=slug, external_id=f"prolific:{pid}")
    assert participant.consented_at and participant.meta == {"STUDY_ID": "s1", "SESSION_ID": "x"}
    return participant


def show(client: Client, slug: str):  # type: ignore[no-untyped-def]
    page = client.get(f"/annotate/{slug}/item/")
    if page.status_code == 302:
        return None
    assert page.status_code == 200
    return page.context


def post(client: Client, slug: str, assignment: Assignment, **data):  # type: ignore[no-untyped-def]
    return client.post(f"/annotate/{slug}/item/", {"assignment": assignment.pk, "action": "answer", **data})


def finish_page(client: Client, slug: str) -> str:
    page = client.get(f"/annotate/{slug}/item/", follow=True)
    assert page.redirect_chain[-1][0] == f"/annotate/{slug}/done/"
    return page.content.decode()


def test_archaeology_choose_full_flow(make_campaign, client):
    make_campaign("archaeology-choose", "arch", per_item=2)
    participant = enter(client, "c")
    seen = []
    for n in range(4):
        ctx = show(client, "c")
        assignment, item = ctx["assignment"], ctx["item"]
        assert ctx["progress"] == {"done": n, "total": 4}
        assert sorted(ctx["choices"]) == sorted([item.data["true_question"], *item.data["other_questions"]])
        assert show(client, "c")["assignment"].pk == assignment.pk  # a reload is the same item, same order
        pick = ctx["choices"].index(item.data["true_question"]) if n % 2 == 0 else ctx["choices"].index(item.data["other_questions"][0])
        assert post(client, "c", assignment, choice=pick).status_code == 302
        seen.append(item.pk)
    assert len(set(seen)) == 4
    page = finish_page(client, "c")
    assert "CODE-123" in page and 'id="completion-code"' in page
    rows = list(Response.objects.order_by("id"))
    assert [r.correct for r in rows] == [True, False, True, False]
    for row, a in zip(rows, Assignment.objects.order_by("position"), strict=True):
        assert row.agent_id == participant.agent_id and row.source == "annotation"
        assert row.choices == a.choices and row.given == a.choices[row.meta["choice_index"]]
        assert row.duration_ms is not None and row.duration_ms >= 0 and row.meta["campaign"] == "c"
        assert row.score == float(row.correct)
    assert Participant.objects.get(pk=participant.pk).finished_at is not None


def test_ghigliottina_choose_training_feedback_then_items(make_campaign, client):
    make_campaign("ghigliottina-choose", "ghig", training_ids=["g1"])
    enter(client, "c")
    ctx = show(client, "c")
    assert ctx["training"] and ctx["item"].external_id == "g1"
    wrong = next(i for i, c in enumerate(ctx["choices"]) if c != "duro")
    answered = post(client, "c", ctx["assignment"], choice=wrong)
    assert answered.url == "/annotate/c/feedback/"
    fb = client.get(answered.url).content.decode()
    assert "Not quite" in fb and "duro" in fb
    for _ in range(3):
        ctx = show(client, "c")
        assert not ctx["training"] and ctx["item"].external_id != "g1"
        post(client, "c", ctx["assignment"], choice=ctx["choices"].index(ctx["item"].answer))
    assert "CODE-123" in finish_page(client, "c")
    roles = [r.meta["role"] for r in Response.objects.order_by("id")]
    assert roles == ["training", "pool", "pool", "pool"]


def test_bad_submission_is_refused_with_a_message(make_campaign, client):
    make_campaign("ghigliottina-choose", "ghig")
    enter(client, "c")
    ctx = show(client, "c")
    page = client.post("/annotate/c/item/", {"assignment": ctx["assignment"].pk, "action": "answer"}, follow=True)
    assert b"Pick one of the options first." in page.content
    assert not Response.objects.exists()
    assert page.context["assignment"].pk == ctx["assignment"].pk


def test_skip_and_flag_records_no_answer_and_keeps_the_note(make_campaign, client):
    make_campaign("ghigliottina-choose", "ghig", quota=2)
    enter(client, "c")
    ctx = show(client, "c")
    client.post("/annotate/c/item/", {"assignment": ctx["assignment"].pk, "action": "skip", "note": "typo in clue"})
    skipped = Assignment.objects.get(pk=ctx["assignment"].pk)
    assert skipped.state == "skipped" and skipped.note == "typo in clue" and not Response.objects.exists()
    ctx2 = show(client, "c")
    assert ctx2["item"].pk != ctx["item"].pk
    post(client, "c", ctx2["assignment"], choice=0)
    ctx3 = show(client, "c")  # quota 2 counts answers: the skipped item is replaced, not counted
    assert ctx3["item"].pk not in (ctx["item"].pk, ctx2["item"].pk)
    post(client, "c", ctx3["assignment"], choice=0)
    assert "CODE-123" in finish_page(client, "c")


def test_archaeology_write_is_scored_afterwards_never_during(make_campaign, client):
    from quizsite.annotate.services import written_score

    make_campaign("archaeology-write", "arch", quota=2)
    enter(client, "c")
    for _ in range(2):
        ctx = show(client, "c")
        assert ctx["choices"] == []
        body = client.get("/annotate/c/item/").content.decode()
        assert ctx["item"].data["true_question"] not in body
        empty = client.post("/annotate/c/item/", {"assignment": ctx["assignment"].pk, "action": "answer", "text": " "}, follow=True)
        assert b"Write the question first." in empty.content
        post(client, "c", ctx["assignment"], text=ctx["item"].data["true_question"].upper() + "  ")
    rows = list(Response.objects.all())
    assert all(r.score is None and r.correct is None for r in rows)
    from quizsite.annotate.models import Campaign

    assert written_score(campaign=Campaign.objects.get(slug="c"), source=FakeVectors()) == 2
    assert written_score(campaign=Campaign.objects.get(slug="c"), source=FakeVectors()) == 0  # never rescored
    rows = list(Response.objects.all())
    assert all(r.score is not None and r.meta["similarity_source"] == "fake:test" for r in rows)


def test_ghigliottina_open_judged_and_timed(make_campaign, client):
    from quizsite.annotate.services import assignment_current, assignment_submit

    campaign = make_campaign("ghigliottina-open", "ghig", timer_seconds=60)
    participant = enter(client, "c")
    ctx = show(client, "c")
    assert 59000 <= ctx["remaining_ms"] <= 60000
    assert 'id="timer"' in client.get("/annotate/c/item/").content.decode()
    post(client, "c", ctx["assignment"], text=ctx["item"].answer.upper())
    first = Response.objects.get()
    assert first.verdict == "accept" and first.correct is True and first.judge_version
    # answered after the timer (server time): kept as typed, judged wrong
    now = timezone.now()
    late = assignment_current(participant=participant, now=now)
    assert late.campaign_id == campaign.pk
    result = assignment_submit(participant=participant, assignment_id=late.pk, post={"text": late.item.answer},
                               now=now + timedelta(seconds=63))
    assert result.response.correct is False and result.response.meta["timeout"] is True
    assert result.response.given == late.item.answer and result.response.duration_ms == 63000
    wrong = assignment_current(participant=participant, now=now + timedelta(seconds=64))
    r = assignment_submit(participant=participant, assignment_id=wrong.pk, post={"text": "zzz"}, now=now + timedelta(seconds=70))
    assert r.response.verdict == "reject" and r.response.correct is False
    # an empty answer with time left is refused and records nothing (it used to count as a wrong answer);
    # sent by the page when the time runs out, it is recorded as no answer
    start = now + timedelta(seconds=71)
    empty = assignment_current(participant=participant, now=start)
    n = Response.objects.count()
    with pytest.raises(AnnotateError, match="Type the link word first"):
        assignment_submit(participant=participant, assignment_id=empty.pk, post={"text": "  "}, now=start + timedelta(seconds=5))
    assert Response.objects.count() == n
    r = assignment_submit(participant=participant, assignment_id=empty.pk, post={"text": ""}, now=start + timedelta(seconds=60, milliseconds=300))
    assert r.response.given == "" and r.response.correct is False and r.response.verdict == "reject"


def test_romqa_clusters_go_to_one_annotator_and_score_f1(make_campaign, client):
    make_campaign("romqa-select", "romqa", per_item=1)
    enter(client, "c", pid="alice")
    ctx = show(client, "c")
    first_cluster = ctx["item"].data["cluster_id"]
    leased = Assignment.objects.filter(state="leased")
    assert {a.item.data["cluster_id"] for a in leased} == {first_cluster} and leased.count() == 2
    # bob, at the same time, gets the other cluster whole (k = 1)
    bob = Client()
    enter(bob, "c", pid="bob")
    assert show(bob, "c")["item"].data["cluster_id"] != first_cluster
    for _ in range(2):
        ctx = show(client, "c")
        item, choices = ctx["item"], ctx["choices"]
        gold = [c["text"] for c in item.data["candidates"] if c["is_answer"]]
        picks = [choices.index(gold[0])]  # one right answer only
        post(client, "c", ctx["assignment"], pick=picks)
    finish_page(client, "c")
    rows = list(Response.objects.order_by("id"))
    for row in rows:
        gold = {c["text"] for c in row.item.data["candidates"] if c["is_answer"]}
        chosen = set(json.loads(row.given))
        assert len(chosen) == 1 and chosen <= gold
        assert row.correct == (chosen == gold)
        assert row.score == pytest.approx(1.0 if len(gold) == 1 else 2 / 3)


def test_archaeology_author_then_researcher_approves(make_campaign, client, admin_client):
    campaign = make_campaign("archaeology-author", "arch", quota=1)
    enter(client, "c")
    page = client.get("/annotate/c/item/")
    assert b'name="other_question_2"' in page.content
    incomplete = client.post("/annotate/c/item/", {"question": "Why?", "text": "Because."})
    assert b"Fill in the other question 1" in incomplete.content and not AuthoredItem.objects.exists()
    done = client.post("/annotate/c/item/", {
        "question": "Why do cats purr?", "text": "Cats purr to signal contentment and to soothe themselves.",
        "other_question_1": "How long do cats live?", "other_question_2": "What do cats eat?",
    })
    assert done.url == "/annotate/c/done/"
    end = client.get(done.url).content.decode()
    assert "CODE-123" in end and "you wrote 1 entry." in end  # entries, not items answered
    authored = AuthoredItem.objects.get()
    assert authored.status == "pending" and authored.duration_ms is not None
    assert client.get("/annotate/manage/c/").status_code == 302  # annotators are not researchers: sent to sign in
    detail = admin_client.get("/annotate/manage/c/")
    assert b"Why do cats purr?" in detail.content
    admin_client.post(f"/annotate/manage/c/authored/{authored.pk}/", {"decision": "approve"})
    item = Item.objects.get(external_id=f"authored-{authored.pk}")
    assert item.item_set_id == campaign.item_set_id and item.kind == "archaeology"
    assert item.data["true_question"] == "Why do cats purr?" and len(item.data["other_questions"]) == 2


def test_a_new_browser_with_the_same_crowd_id_is_refused(make_campaign, client):
    """The crowd id belongs to the browser that presented it first (more in test_crowd.py)."""
    make_campaign("ghigliottina-choose", "ghig")
    enter(client, "c", pid="same")
    ctx = show(client, "c")
    post(client, "c", ctx["assignment"], choice=0)
    current = show(client, "c")["assignment"]
    other = Client()
    again = other.get("/annotate/c/?PROLIFIC_PID=same")
    assert again.status_code == 403 and b"already in use in another browser" in again.content
    assert show(other, "c") is None  # no participant in that browser
    assert show(client, "c")["assignment"].pk == current.pk  # the first browser resumes, no id in the URL
    assert Participant.objects.count() == 1


def test_guest_without_crowd_id_and_closed_campaign(make_campaign, client):
    campaign = make_campaign("ghigliottina-choose", "ghig")
    assert client.get("/annotate/").status_code == 200
    client.post("/annotate/c/", {"agree": "yes"})
    participant = Participant.objects.get()
    assert participant.external_id == "" and participant.agent.guest_key
    campaign.is_open = False
    campaign.save()
    other = Client()
    assert other.get("/annotate/c/").status_code == 410
