"""Crowd abuse, driven as people would with the Django test client (one Client = one browser).

1. A crowd id (PROLIFIC_PID, workerId) is no secret: it belongs to the first browser that presents it.
   Another browser presenting it is refused (403) and learns nothing of that worker; the owning browser
   goes on working without the id in later URLs.
2. The completion code needs the campaign's minimum of real answers: skipping every item earns nothing.
"""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from quizsite.annotate.models import Assignment, Campaign, CrowdIdentity, Participant
from quizsite.items.models import Response

IN_USE = "already in use in another browser"


def enter(client: Client, slug: str, pid: str) -> None:
    assert client.get(f"/annotate/{slug}/?PROLIFIC_PID={pid}&STUDY_ID=s1").status_code == 200
    assert client.post(f"/annotate/{slug}/", {"agree": "yes"}).status_code == 302


def current(client: Client, slug: str) -> Assignment | None:
    page = client.get(f"/annotate/{slug}/item/")
    return page.context["assignment"] if page.status_code == 200 else None


def answer(client: Client, slug: str) -> None:
    a = current(client, slug)
    assert a is not None
    client.post(f"/annotate/{slug}/item/", {"assignment": a.pk, "action": "answer", "choice": 0})


def skip(client: Client, slug: str) -> bool:
    a = current(client, slug)
    if a is None:
        return False
    client.post(f"/annotate/{slug}/item/", {"assignment": a.pk, "action": "skip", "note": ""})
    return True


def test_a_crowd_id_belongs_to_the_first_browser(make_campaign):
    make_campaign("ghigliottina-choose", "ghig", slug="c", completion_code="SECRET-CODE")
    make_campaign("ghigliottina-choose", "ghig", slug="other")
    worker, intruder = Client(), Client()
    enter(worker, "c", "victim")
    answer(worker, "c")
    victim = Participant.objects.get(external_id="prolific:victim")

    refused = intruder.get("/annotate/c/?PROLIFIC_PID=victim&STUDY_ID=s1")
    assert refused.status_code == 403
    text = refused.content.decode()
    assert IN_USE in text
    for secret in ("SECRET-CODE", victim.agent.public_id, "s1", 'name="agree"', "progress"):
        assert secret not in text
    # nothing the intruder does afterwards is in the worker's name, in this campaign or another one
    assert intruder.get("/annotate/other/?workerId=x&PROLIFIC_PID=victim").status_code == 403
    assert intruder.get("/annotate/c/item/").status_code == 302
    intruder.post("/annotate/c/", {"agree": "yes"})  # goes on as an anonymous guest at most
    if (a := current(intruder, "c")) is not None:
        intruder.post("/annotate/c/item/", {"assignment": a.pk, "action": "answer", "choice": 0})
    assert Response.objects.filter(agent=victim.agent).count() == 1
    assert Participant.objects.filter(agent=victim.agent).count() == 1

    # the worker's own browser goes on, with or without the id in the URL
    assert worker.get("/annotate/c/").status_code == 302
    assert current(worker, "c") is not None
    assert worker.get("/annotate/c/?PROLIFIC_PID=victim").status_code == 302
    answer(worker, "c")
    assert Response.objects.filter(agent=victim.agent).count() == 2
    enter(worker, "other", "victim")  # the same browser uses its id in another campaign
    assert Participant.objects.filter(agent=victim.agent).count() == 2


def test_the_same_answer_for_an_unknown_browser_whatever_the_worker_did(make_campaign):
    make_campaign("ghigliottina-choose", "ghig")
    Client().get("/annotate/c/?PROLIFIC_PID=idle")  # opened the link, did nothing
    busy = Client()
    enter(busy, "c", "busy")
    answer(busy, "c")
    pages = [Client().get(f"/annotate/c/?PROLIFIC_PID={pid}") for pid in ("idle", "busy")]
    assert [p.status_code for p in pages] == [403, 403]
    assert pages[0].content.replace(b"idle", b"X") == pages[1].content.replace(b"busy", b"X")


def test_a_released_id_moves_to_the_next_browser(make_campaign):
    """A worker who lost their cookies asks; a researcher deletes the claim in the admin."""
    make_campaign("ghigliottina-choose", "ghig")
    first, second = Client(), Client()
    enter(first, "c", "lost")
    assert second.get("/annotate/c/?PROLIFIC_PID=lost").status_code == 403
    CrowdIdentity.objects.filter(external_id="prolific:lost").delete()
    enter(second, "c", "lost")
    assert current(second, "c") is not None
    # the first browser has lost the id: refused, not served in the worker's name
    assert first.get("/annotate/c/item/").status_code == 302
    assert first.get("/annotate/c/").status_code == 403


def test_participants_from_before_the_claims_keep_their_browser(make_campaign):
    make_campaign("ghigliottina-choose", "ghig")
    worker = Client()
    enter(worker, "c", "early")
    CrowdIdentity.objects.all().delete()  # as after the upgrade: a participant, no claim yet
    assert current(worker, "c") is not None  # the browser holding the participant claims the id
    assert Client().get("/annotate/c/?PROLIFIC_PID=early").status_code == 403


def test_skipping_every_item_earns_no_code(make_campaign):
    make_campaign("ghigliottina-choose", "ghig", quota=2, completion_url="https://app.prolific.com/submissions/complete?cc=CODE-123")
    client = Client()
    enter(client, "c", "skipper")
    skipped = 0
    while skip(client, "c"):
        skipped += 1
    assert skipped == 4  # a skip does not use up the quota: every item is offered, none answered
    page = client.get("/annotate/c/done/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "CODE-123" not in text and "prolific.com" not in text and 'id="completion-code"' not in text
    assert "2 more answers needed" in text and "skipped items do not count" in text


def test_enough_real_answers_earn_the_code(make_campaign):
    campaign = make_campaign("ghigliottina-choose", "ghig", quota=2)
    assert campaign.min_answers == 2  # default: the items per annotator
    client = Client()
    enter(client, "c", "honest")
    skip(client, "c")  # a flagged item is replaced, not counted
    answer(client, "c")
    assert client.get("/annotate/c/done/").status_code == 302  # not finished: back to the items
    answer(client, "c")
    page = client.get("/annotate/c/item/", follow=True)
    assert page.redirect_chain[-1][0] == "/annotate/c/done/"
    assert 'id="completion-code"' in page.content.decode() and "CODE-123" in page.content.decode()


def test_explicit_minimum_and_the_pool_running_dry(make_campaign):
    campaign = make_campaign("ghigliottina-choose", "ghig", per_item=1, min_answers=3)
    first, late = Client(), Client()
    enter(first, "c", "first")
    for _ in range(3):
        answer(first, "c")
    enter(late, "c", "late")
    answer(late, "c")  # the last item; the pool is now dry for everyone
    page = late.get("/annotate/c/item/", follow=True)
    text = page.content.decode()
    assert page.redirect_chain[-1][0] == "/annotate/c/done/"
    assert "CODE-123" not in text and "2 more answers needed" in text and "no more items" in text
    # an item comes back to the pool (here: the first annotator's answer is withdrawn): the late one goes on
    Assignment.objects.filter(participant__external_id="prolific:first").update(state="expired")
    assert current(late, "c") is not None
    assert Campaign.objects.get(pk=campaign.pk).min_answers == 3


def test_min_answers_from_the_command_and_the_form(sets, admin_client):
    call_command("campaign_create", "--set", "ghig", "--task", "ghigliottina-choose", "--slug", "cmd", "--quota", "3",
                 stdout=StringIO())
    call_command("campaign_create", "--set", "ghig", "--task", "ghigliottina-choose", "--slug", "cmd2",
                 "--min-answers", "4", stdout=StringIO())
    call_command("campaign_create", "--set", "ghig", "--task", "ghigliottina-choose", "--slug", "cmd3", stdout=StringIO())
    assert [Campaign.objects.get(slug=s).min_answers for s in ("cmd", "cmd2", "cmd3")] == [3, 4, 1]
    made = admin_client.post("/annotate/manage/new/", {
        "slug": "m1", "item_set": "ghig", "task": "ghigliottina-choose", "per_item": 2, "quota": 0,
        "lease_minutes": 10, "timer_seconds": 60, "min_answers": 2,
    })
    assert made.status_code == 302 and Campaign.objects.get(slug="m1").min_answers == 2
    assert b"2 real answers" in admin_client.get("/annotate/manage/m1/").content


def test_admin_lists_and_releases_claims(make_campaign, admin_client):
    make_campaign("ghigliottina-choose", "ghig")
    Client().get("/annotate/c/?PROLIFIC_PID=stuck")
    claim = CrowdIdentity.objects.get()
    assert claim.external_id == "prolific:stuck" and len(claim.browser_hash) == 64  # a hash, not the token
    assert b"prolific:stuck" in admin_client.get("/admin/annotate/crowdidentity/").content
    admin_client.post(f"/admin/annotate/crowdidentity/{claim.pk}/delete/", {"post": "yes"})
    assert not CrowdIdentity.objects.exists()
    assert Client().get("/annotate/c/?PROLIFIC_PID=stuck").status_code == 200


def test_a_campaign_whose_code_needs_more_answers_than_an_annotator_can_give_is_refused(make_campaign):
    from quizsite.annotate.services import AnnotateError

    with pytest.raises(AnnotateError) as exc:
        make_campaign("ghigliottina-choose", "ghig", slug="too-many", per_item=1, quota=3, min_answers=50)
    assert exc.value.code == "bad_min_answers" and "at most 3" in str(exc.value)
    assert make_campaign("ghigliottina-choose", "ghig", slug="fine", per_item=1, quota=3, min_answers=3).min_answers == 3
