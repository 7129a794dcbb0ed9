"""campaign_create, the researcher pages under /annotate/manage/, and the demo campaigns."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from quizsite.annotate.models import Campaign
from tests.annotate.conftest import ARCHAEOLOGY, GHIGLIOTTINA, ROMQA


def test_campaign_create_command(sets):
    out = StringIO()
    call_command("campaign_create", "--set", "ghig", "--task", "ghigliottina-open", "--per-item", "2", "--slug", "open1",
                 "--training", "g1", "--gold", "g2", "--completion-code", "XYZ", "--timer-seconds", "45", stdout=out)
    assert "annotators start at /annotate/open1/" in out.getvalue()
    c = Campaign.objects.get(slug="open1")
    assert (c.task, c.per_item, c.completion_code, c.timer_seconds) == ("ghigliottina-open", 2, "XYZ", 45)
    assert [i.external_id for i in c.training_items.all()] == ["g1"] and [i.external_id for i in c.gold_items.all()] == ["g2"]
    assert "link" in c.instructions and c.consent_text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--set", "nope", "--task", "romqa-select", "--slug", "x"], "no item set 'nope'"),
        (["--set", "ghig", "--task", "romqa-select", "--slug", "x"], "set ghig has no romqa items for the romqa-select task$"),
        (["--set", "romqa", "--task", "archaeology-choose", "--slug", "x"],
         "set romqa has no archaeology items for the archaeology-choose task$"),
        (["--set", "ghig", "--task", "ghigliottina-choose", "--slug", "x", "--gold", "zz"], "gold items not in set ghig: zz"),
        (["--set", "ghig", "--task", "ghigliottina-choose", "--slug", "x", "--per-item", "0"], "per-item must be at least 1"),
    ],
)
def test_campaign_create_errors(sets, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("campaign_create", *args)
    assert not Campaign.objects.exists()


def test_new_campaign_form_names_the_task_without_an_article(sets, admin_client):
    page = admin_client.post("/annotate/manage/new/", {
        "slug": "m2", "item_set": "ghig", "task": "archaeology-write", "per_item": 2, "quota": 0,
        "lease_minutes": 10, "timer_seconds": 60,
    })
    assert page.status_code == 200 and not Campaign.objects.exists()
    assert b"set ghig has no archaeology items for the archaeology-write task" in page.content


class _Ids(HTMLParser):
    """Every element id on a page, and every id an aria-describedby names."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.described_by: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids.add(found["id"] or "")
        self.described_by += (found.get("aria-describedby") or "").split()


def test_every_aria_describedby_on_the_new_campaign_form_names_an_element_of_the_page(sets, admin_client):
    """Django 5.2 points each input at `<id>_helptext` and `<id>_error`; the template rendered help text
    and errors without those ids, so screen readers announced nothing (checkboxes included)."""
    fresh = admin_client.get("/annotate/manage/new/")
    bad = admin_client.post("/annotate/manage/new/", {"slug": "not a slug", "item_set": "ghig", "task": "ghigliottina-open",
                                                      "per_item": 0, "quota": 0, "lease_minutes": 10, "timer_seconds": 60})
    for page in (fresh, bad):
        parsed = _Ids()
        parsed.feed(page.content.decode())
        assert {"id_slug_helptext", "id_invite_only_helptext"} <= set(parsed.described_by)
        assert not set(parsed.described_by) - parsed.ids
    parsed = _Ids()
    parsed.feed(bad.content.decode())
    assert {"id_slug_error", "id_per_item_error"} <= set(parsed.described_by) <= parsed.ids


def test_authoring_campaign_makes_its_target_set(db):
    call_command("campaign_create", "--set", "new-authored", "--task", "archaeology-author", "--slug", "auth", stdout=StringIO())
    assert Campaign.objects.get(slug="auth").item_set.slug == "new-authored"


def test_manage_pages_need_staff_and_create_a_campaign(sets, client, admin_client):
    assert client.get("/annotate/manage/").status_code == 302
    assert admin_client.get("/annotate/manage/").status_code == 200
    page = admin_client.get("/annotate/manage/new/")
    assert page.status_code == 200 and b"Annotators per item" in page.content
    bad = admin_client.post("/annotate/manage/new/", {
        "slug": "m1", "item_set": "arch", "task": "archaeology-choose", "per_item": 2, "quota": 0,
        "lease_minutes": 10, "timer_seconds": 60, "training_ids": "a1, nope",
    })
    assert b"training items not in set arch: nope" in bad.content
    made = admin_client.post("/annotate/manage/new/", {
        "slug": "m1", "item_set": "arch", "task": "archaeology-choose", "per_item": 2, "quota": 0,
        "lease_minutes": 5, "timer_seconds": 60, "training_ids": "a1", "completion_code": "DONE1",
    })
    assert made.status_code == 302 and made.url == "/annotate/manage/m1/"
    c = Campaign.objects.get(slug="m1")
    assert c.lease_seconds == 300 and c.training_items.count() == 1
    detail = admin_client.get("/annotate/manage/m1/")
    assert b"Fleiss" in detail.content and b"PROLIFIC_PID" in detail.content
    data = json.loads(admin_client.get("/annotate/manage/m1/?format=json").content)
    assert data["progress"]["pool_items"] == 3  # a1 is a training item
    admin_client.post("/annotate/manage/m1/toggle/")
    assert not Campaign.objects.get(slug="m1").is_open


@pytest.mark.parametrize("task,set_slug", [
    ("archaeology-write", "arch"), ("ghigliottina-open", "ghig"), ("romqa-select", "romqa"), ("archaeology-author", "arch"),
])
def test_detail_page_renders_for_every_task(make_campaign, admin_client, task, set_slug):
    make_campaign(task, set_slug)
    assert admin_client.get("/annotate/manage/c/").status_code == 200


def test_demo_load_makes_one_campaign_per_task_once(db, tmp_path, monkeypatch):
    from quizsite.items import demo

    for name, rows in (("archaeology.jsonl", ARCHAEOLOGY), ("ghigliottina.jsonl", GHIGLIOTTINA), ("romqa.jsonl", ROMQA)):
        (tmp_path / name).write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    monkeypatch.setattr(demo, "DEMO_DIR", Path(tmp_path))
    summaries = [r.summary() for r in demo.demo_load() if r.summary().startswith("campaign ")]
    assert len(summaries) == 6 and all(s.endswith("created") for s in summaries)
    assert set(Campaign.objects.values_list("task", flat=True)) == set(Campaign.Task.values)
    again = [r.summary() for r in demo.demo_load() if r.summary().startswith("campaign ")]
    assert Campaign.objects.count() == 6 and all(s.endswith("already present") for s in again)


def test_demo_without_files_makes_no_campaigns(db, tmp_path, monkeypatch):
    from quizsite.items import demo

    monkeypatch.setattr(demo, "DEMO_DIR", Path(tmp_path))
    demo.demo_load()
    assert not Campaign.objects.exists()


def _row(html: str, annotator: str) -> str:
    row = re.search(rf'<tr id="annotator-{re.escape(annotator)}">(.*?)</tr>', html, re.S)
    assert row, f"no row for {annotator}"
    return re.sub(r"<[^>]+>", " ", row.group(1))


def test_manage_page_tells_the_completion_code_from_running_out_of_items(make_campaign, admin_client):
    """Earning the code (min_answers real answers) and having nothing more to be given are two facts: one
    annotator has the code with items still to give, another ran out of items short of the code."""
    from django.test import Client

    from tests.annotate.test_flow import enter, post, show

    make_campaign("archaeology-choose", "arch", per_item=1, min_answers=2)  # 4 items, one annotator each
    ada, bea = Client(), Client()
    ada_p = enter(ada, "c", pid="ada")
    for _ in range(2):
        ctx = show(ada, "c")
        assert post(ada, "c", ctx["assignment"], choice=0).status_code == 302
    bea_p = enter(bea, "c", pid="bea")
    ctx = show(bea, "c")
    post(bea, "c", ctx["assignment"], choice=0)
    ctx = show(bea, "c")  # the last free item: skipped, so it is not an answer
    bea.post("/annotate/c/item/", {"assignment": ctx["assignment"].pk, "action": "skip", "reason": "skip"})
    assert show(bea, "c") is None  # nothing more for bea: ada's two and her own answer are taken at k = 1

    page = admin_client.get("/annotate/manage/c/").content.decode()
    ada_row, bea_row = _row(page, ada_p.agent.public_id), _row(page, bea_p.agent.public_id)
    assert "earned" in ada_row and "(2 of 2)" in ada_row and "more to give" in ada_row
    assert "not yet" in bea_row and "(1 of 2)" in bea_row and "none left" in bea_row
    summary = re.sub(r"<[^>]+>", "", re.search(r'<p id="annotators-summary">(.*?)</p>', page, re.S).group(1))
    assert "Annotators: 2; 1 earned the completion code (2 real answers), 1 has no more items to be given." in summary

    data = json.loads(admin_client.get("/annotate/manage/c/?format=json").content)
    rows = {r["annotator"]: r for r in data["annotators"]}
    assert (rows[ada_p.agent.public_id]["earned_code"], rows[ada_p.agent.public_id]["out_of_items"]) == (True, False)
    assert (rows[bea_p.agent.public_id]["earned_code"], rows[bea_p.agent.public_id]["out_of_items"]) == (False, True)
    out = StringIO()
    call_command("agreement", "c", stdout=out)
    assert "annotators 2: 1 earned the completion code (2 real answers), 1 with no more items to be given" in out.getvalue()


def _agreement_text(page: str) -> str:
    section = re.search(r'<section class="card" id="agreement">(.*?)</section>', page, re.S)
    assert section, "no agreement section"
    return " ".join(re.sub(r"<[^>]+>", " ", section.group(1)).split())


def test_a_pilot_without_overlap_says_why_there_is_no_agreement(make_campaign, admin_client):
    """Breadth-first assignment: two annotators' first answers land on different items, so no item has two
    answers and kappa cannot be computed; the page and `agreement C` say so, with the count, not blank figures."""
    from django.test import Client

    from tests.annotate.test_flow import enter, post, show

    make_campaign("archaeology-choose", "arch", per_item=2)  # 4 items
    annotators = [Client(), Client()]
    for n, client in enumerate(annotators):
        enter(client, "c", pid=f"pilot-{n}")
        post(client, "c", show(client, "c")["assignment"], choice=0)

    text = _agreement_text(admin_client.get("/annotate/manage/c/").content.decode())
    assert "Agreement cannot be computed yet: no item has answers from 2 or more annotators" in text
    assert "(items with overlap: 0; 2 of 4 items have one answer)" in text
    assert "least-answered first" in text and "κ –" not in text and "Fleiss' κ –" not in text
    assert "agreement-compare" not in admin_client.get("/annotate/manage/c/").content.decode()
    assert "Macro-F1" in text  # the figures that need no overlap stay
    data = json.loads(admin_client.get("/annotate/manage/c/?format=json").content)["agreement"]
    assert (data["computable"], data["items_with_overlap"], data["items_answered"]) == (False, 0, 2)
    out = StringIO()
    call_command("agreement", "c", stdout=out)
    assert "Agreement cannot be computed yet: no item has answers from 2 or more annotators (items with overlap: 0; " \
        "2 of 4 items have one answer)" in out.getvalue()
    assert "Fleiss kappa" not in out.getvalue() and "over slot shown" not in out.getvalue()

    for client in annotators:  # both go on to the end: every item then has two answers
        while (ctx := show(client, "c")) is not None:
            post(client, "c", ctx["assignment"], choice=0)
    text = _agreement_text(admin_client.get("/annotate/manage/c/").content.decode())
    assert "cannot be computed" not in text and "items with answers from ≥ 2 annotators 4 of 4 answered" in text
    out = StringIO()
    call_command("agreement", "c", stdout=out)
    assert "over 4 units (4 of 4 answered items have answers from 2+ annotators)" in out.getvalue()


def test_a_campaign_with_one_annotator_per_item_says_it_has_no_agreement(make_campaign, admin_client):
    from django.test import Client

    from tests.annotate.test_flow import enter, post, show

    make_campaign("ghigliottina-choose", "ghig", per_item=1)
    client = Client()
    enter(client, "c")
    while (ctx := show(client, "c")) is not None:
        post(client, "c", ctx["assignment"], choice=0)
    text = _agreement_text(admin_client.get("/annotate/manage/c/").content.decode())
    assert "each item goes to one annotator only (k = 1)" in text


def _item_rows(page: str) -> list[tuple[str, int]]:
    """The Items table's rows on a manage page: (item id, answers)."""
    section = re.search(r'<section class="card" id="items">(.*?)</section>', page, re.S)
    assert section, "no items section"
    return [(m.group(1), int(m.group(2))) for m in re.finditer(r"<tr><td>([^<]+)</td><td>(\d+)</td>", section.group(1))]


def test_a_large_campaign_lists_its_items_a_page_at_a_time(db, tmp_path, admin_client):
    """A campaign of 120 items listed all 120 on its manage page. It lists 50 a page, with page links that
    keep the other query parameters; the totals above are the whole campaign's on every page."""
    from datetime import UTC, datetime

    from quizsite.agents.models import Agent
    from quizsite.annotate.services import (
        assignment_current,
        assignment_submit,
        campaign_create,
        participant_consent,
        participant_get_or_create,
    )
    from quizsite.items.importers import items_import
    from quizsite.items.models import ItemSet

    rows = [{**GHIGLIOTTINA[n % 4], "id": f"big{n:03d}"} for n in range(120)]
    path = tmp_path / "big.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    items_import(fmt="ghigliottina", path=path, set_slug="big")
    campaign = campaign_create(slug="big", item_set=ItemSet.objects.get(slug="big"), task="ghigliottina-choose", per_item=1)
    now = datetime(2026, 1, 1, tzinfo=UTC)
    answered = []
    for name in ("ann1", "ann2", "ann3"):  # one answer each
        agent = Agent.objects.create(kind="human", name=name)
        p = participant_consent(participant=participant_get_or_create(campaign=campaign, agent=agent), now=now)
        a = assignment_current(participant=p, now=now)
        assert a is not None
        assignment_submit(participant=p, assignment_id=a.pk, post={"choice": 0}, now=now)
        answered.append(a.item.external_id)

    seen: list[tuple[str, int]] = []
    for number, size in ((1, 50), (2, 50), (3, 20)):
        page = admin_client.get(f"/annotate/manage/big/?page={number}&view=all").content.decode()
        listed = _item_rows(page)
        assert len(listed) == size, number
        seen += listed
        first = 50 * (number - 1) + 1
        assert f"Items {first}–{first + size - 1} of 120" in page
        # the totals are the campaign's, not the page's
        assert "3 of 120 answers; 3 of 120 items complete" in page  # k = 1
        links = re.findall(r'<a href="(\?[^"]*)"[^>]*>(previous|next)', page)
        for href, _word in links:
            assert "view=all" in href, href  # the other query parameters stay
        assert [w for _h, w in links] == {1: ["next"], 2: ["previous", "next"], 3: ["previous"]}[number]
        if number < 3:
            assert f'<a href="?page={number + 1}&amp;view=all#items" rel="next">next' in page
    assert [i for i, _n in seen] == [r["id"] for r in rows]  # every item once, in order
    assert sorted(i for i, n in seen if n) == sorted(answered) and sum(n for _i, n in seen) == 3
    # a page past the end shows the last one
    assert len(_item_rows(admin_client.get("/annotate/manage/big/?page=99").content.decode())) == 20
    data = json.loads(admin_client.get("/annotate/manage/big/?format=json").content)
    assert len(data["items"]) == 120  # the JSON report keeps every item
