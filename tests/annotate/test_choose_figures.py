"""Choose tasks' agreement over shared categories, macro-F1 and position effects; RoMQA scores per agent.
Every expected number is worked out by hand in the comments."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from io import StringIO

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command

from quizsite.agents.models import Agent
from quizsite.annotate.agreement import macro_f1, position_effects, robust_scores
from quizsite.annotate.selectors import campaign_stats
from quizsite.annotate.services import (
    assignment_current,
    assignment_submit,
    participant_consent,
    participant_get_or_create,
)
from quizsite.items.models import Item, Response

T0 = datetime(2026, 1, 1, tzinfo=UTC)

# the role each annotator picks on each passage (T: true question, D1/D2: decoys 1/2)
ROLES = {
    "ann1": {"a1": "T", "a2": "T", "a3": "D1", "a4": "T"},
    "ann2": {"a1": "T", "a2": "D2", "a3": "D1", "a4": "T"},
    "ann3": {"a1": "D1", "a2": "T", "a3": "D1", "a4": "T"},
}
# the order of the options each annotator was shown (written over the recorded one, so the numbers are fixed)
ORDER = {"ann1": ["T", "D1", "D2"], "ann2": ["D1", "T", "D2"], "ann3": ["D2", "D1", "T"]}


def _text(item: Item, role: str) -> str:
    return item.data["true_question"] if role == "T" else item.data["other_questions"][int(role[1]) - 1]


def _participant(campaign, name):  # type: ignore[no-untyped-def]
    agent = Agent.objects.create(kind="human", name=name)
    return participant_consent(participant=participant_get_or_create(campaign=campaign, agent=agent), now=T0)


@pytest.fixture
def archaeology(make_campaign):  # type: ignore[no-untyped-def]
    campaign = make_campaign("archaeology-choose", "arch", per_item=3)
    for name, picks in ROLES.items():
        p = _participant(campaign, name)
        while (a := assignment_current(participant=p, now=T0)) is not None:
            wanted = _text(a.item, picks[a.item.external_id])
            assignment_submit(
                participant=p, assignment_id=a.pk, post={"choice": a.choices.index(wanted)}, now=T0
            )
        for r in Response.objects.filter(agent=p.agent).select_related("item"):
            r.choices = [_text(r.item, role) for role in ORDER[name]]
            r.save(update_fields=["choices"])
    return campaign


def test_kappa_over_roles_slots_and_text(archaeology):
    stats = campaign_stats(archaeology, T0)
    a = stats["agreement"]
    # roles per item: a1 T T D1, a2 T D2 T, a3 D1 D1 D1, a4 T T T -> P_i 1/3, 1/3, 1, 1, P_bar = 2/3;
    # shares T 7/12, D1 4/12, D2 1/12 -> P_e = 66/144; kappa = (96 - 66) / (144 - 66) = 5/13
    assert a["observed_p_bar"] == pytest.approx(2 / 3)
    assert a["chance_p_e"] == pytest.approx(66 / 144)
    assert a["fleiss_kappa"] == pytest.approx(5 / 13)
    c = stats["choose"]
    # slots chosen: a1 [0,1,1], a2 [0,2,2], a3 [1,0,1], a4 [0,1,2] -> P_bar = 1/4, shares 4/12, 5/12, 3/12
    s = c["agreement_by_slot"]
    assert s["observed_p_bar"] == pytest.approx(1 / 4) and s["chance_p_e"] == pytest.approx(50 / 144)
    assert s["fleiss_kappa"] == pytest.approx((36 - 50) / (144 - 50))
    # option text: same P_bar as roles (one text per role and item), but no text is shared by two items:
    # shares of a1's texts 2/12, 1/12; a2's 2/12, 1/12; a3's 3/12; a4's 3/12 -> P_e = (4+1+4+1+9+9)/144
    t = c["agreement_by_option_text"]
    assert t["observed_p_bar"] == pytest.approx(2 / 3) and t["chance_p_e"] == pytest.approx(28 / 144)
    assert t["fleiss_kappa"] == pytest.approx((96 - 28) / (144 - 28))


def test_macro_f1_and_positions(archaeology):
    c = campaign_stats(archaeology, T0)["choose"]
    # (gold slot, chosen slot): ann1 (0,0)(0,0)(0,1)(0,0); ann2 (1,1)(1,2)(1,0)(1,1); ann3 (2,1)(2,2)(2,1)(2,2)
    # F1 slot 1: 2*3/(6+1+1); slot 2: 2*2/(4+3+2); slot 3: 2*2/(4+1+2)
    assert c["macro_f1"] == pytest.approx((6 / 8 + 4 / 9 + 4 / 7) / 3)
    assert c["n_answers_with_order"] == 12
    assert [(p["slot"], p["true_shown"], p["chosen"]) for p in c["positions"]] == [
        (1, 4, 4),
        (2, 4, 5),
        (3, 4, 3),
    ]
    assert [p["accuracy_when_true_here"] for p in c["positions"]] == pytest.approx([0.75, 0.5, 0.5])
    assert [p["choice_rate"] for p in c["positions"]] == pytest.approx([4 / 12, 5 / 12, 3 / 12])
    out = StringIO()
    call_command("agreement", "c", "--json", stdout=out)
    printed = json.loads(out.getvalue())
    assert printed["choose"]["macro_f1"] == pytest.approx(c["macro_f1"])
    assert printed["agreement"]["fleiss_kappa"] == pytest.approx(5 / 13)
    text = StringIO()
    call_command("agreement", "c", stdout=text)
    assert (
        "over slot shown" in text.getvalue()
        and "macro-F1" in text.getvalue()
        and "slot 2: true shown 4" in text.getvalue()
    )


def test_pure_helpers():
    assert macro_f1(["a", "a", "b"], ["a", "b", "b"]) == pytest.approx((2 / 3 + 2 / 3) / 2)
    assert macro_f1([], []) is None
    rows = position_effects([(0, 0), (1, 0)], 2)
    assert rows[0]["choice_rate"] == 1.0 and rows[1]["accuracy_when_true_here"] == 0.0
    s = robust_scores([("c1", 1.0, True), ("c1", 0.5, False), ("c2", 1.0, True)])
    assert (s.f1, s.accuracy, s.robust_f1, s.robust_accuracy) == pytest.approx((2.5 / 3, 2 / 3, 0.75, 0.5))


PICKS = {"r1": ["Rhine"], "r2": ["Inn"], "r3": ["Vienna", "Budapest"], "r4": ["Budapest"]}


def test_romqa_scores_per_agent_humans_and_ai(make_campaign, client, django_user_model):
    campaign = make_campaign("romqa-select", "romqa", per_item=1)
    p = _participant(campaign, "alice")
    while (a := assignment_current(participant=p, now=T0)) is not None:
        assignment_submit(
            participant=p,
            assignment_id=a.pk,
            post={"pick": [a.choices.index(t) for t in PICKS[a.item.external_id]]},
            now=T0,
        )
    bot = Agent.objects.create(kind="ai", name="multi-bot", subtype="rag")
    items = {i.external_id: i for i in Item.objects.filter(kind="romqa")}
    for ext, score, correct in (("r1", 1.0, True), ("r2", 0.0, False), ("r3", 0.5, False), ("r3", 1.0, True)):
        Response.objects.create(agent=bot, item=items[ext], source="agent_run", score=score, correct=correct)
    romqa = campaign_stats(campaign, T0)["romqa"]
    rows = {r["agent"]: r for r in romqa["per_agent"]}
    # alice: F1 2/3, 1, 1, 1; robust: c1 min(2/3, 1), c2 1; accuracy 3/4, robust c1 no, c2 yes
    human = rows[p.agent.public_id]
    assert (human["f1"], human["accuracy"], human["robust_f1"], human["robust_accuracy"]) == pytest.approx(
        (11 / 12, 3 / 4, 5 / 6, 0.5)
    )
    # the bot's latest answer on r3 counts: r1 (1, yes), r2 (0, no), r3 (1, yes); c1 min 0, c2 1
    ai = rows["multi-bot"]
    assert (ai["f1"], ai["accuracy"], ai["robust_f1"], ai["robust_accuracy"]) == pytest.approx(
        (2 / 3, 2 / 3, 0.5, 0.5)
    )
    assert ai["n_clusters"] == 2 and ai["n_answers"] == 3

    # the research page reads the responses table the same way
    from quizsite.research.analyses import romqa_by_agent

    by_agent = {r["agent"]: r for r in romqa_by_agent()}
    assert (
        by_agent["multi-bot"]["robust_f1"] == pytest.approx(0.5) and by_agent["multi-bot"]["group"] == "rag"
    )
    assert by_agent[p.agent.public_id]["robust_f1"] == pytest.approx(5 / 6)
    client.force_login(django_user_model.objects.create_user("romqa-player"))
    assert client.get("/research/romqa/").status_code == 403
    researcher = django_user_model.objects.create_user("romqa-res")
    researcher.groups.add(Group.objects.get_or_create(name="researcher")[0])
    client.force_login(researcher)
    page = client.get("/research/romqa/")
    assert page.status_code == 200 and b"multi-bot" in page.content and b"0.500" in page.content
    data = client.get("/research/romqa/?format=json").json()
    assert {r["agent"] for r in data["agents"]} == {"multi-bot", p.agent.public_id}
