"""Each built-in kind beats chance where answers repeat, and never scores from the question it answers."""

from __future__ import annotations

import pytest

from quizsite.agents import kinds
from quizsite.agents.kinds._bank import main_answer
from quizsite.agents.models import AgentAnswer
from quizsite.items.models import Item, Response
from quizsite.judge import judge

from .helpers import final_accuracy, run_agent

BUILTIN = ["qb-guesser-tfidf", "qb-guesser-embed", "retriever-bm25", "retriever-embed"]
N_ANSWERS = 70  # demo tossups, each with its own answer


def test_the_builtin_kinds_are_registered():
    registry = kinds.load_all()
    assert set(BUILTIN) <= set(registry)
    assert all("guesser" in k for k in BUILTIN[:2])
    assert all(registry[k].per_clue and registry[k].item_kinds == {Item.Kind.TOSSUP} for k in BUILTIN)


@pytest.mark.django_db
@pytest.mark.parametrize("kind", BUILTIN)
def test_kind_beats_chance_on_the_late_halves(halves, kind):
    """Answering the last two clues of each demo tossup, with the first three (another question) in the bank.
    Chance: one answer in 70 for a guesser; k=10 titles of 70 answers for a retriever."""
    run = run_agent(kind, "halves-late")
    assert run.status == "done", run.error
    chance = 10 / N_ANSWERS if kind.startswith("retriever") else 1 / N_ANSWERS
    acc = final_accuracy(run)
    assert acc > 3 * chance, f"{kind}: {acc:.3f} vs chance {chance:.3f}"


@pytest.mark.django_db
@pytest.mark.parametrize("kind", BUILTIN)
def test_kind_never_sees_the_tossup_it_answers(demo, kind):
    """Every demo tossup's answer occurs in no other tossup: an agent that saw the question (or the copy of
    it imported into another set) would get the final clue right; one that did not must miss every one,
    except where the judge accepts another tossup's answer (it takes "Mansa Musa" for "Moses (accept
    Musa)"), which an agent may honestly guess."""
    from quizsite.items.demo import DEMO_DIR
    from quizsite.items.importers import items_import

    items_import(fmt="quizbowl", path=DEMO_DIR / "tossups.jsonl", set_slug="demo-copy")
    run = run_agent(kind, "demo-tossups")
    assert run.status == "done", run.error
    assert run.total == AgentAnswer.objects.filter(version=run.version).count() > 0
    tossups = list(Item.objects.filter(item_set__slug="demo-tossups"))
    titles = {i.pk: main_answer(i.answer) for i in tossups}
    reachable = {
        i.pk
        for i in tossups
        if any(judge(i.answer, t).verdict == "accept" for pk, t in titles.items() if pk != i.pk)
    }
    assert reachable == {i.pk for i in tossups if i.external_id == "demo-myth-005"}  # Moses: "Mansa Musa"
    right = set(
        Response.objects.filter(agent=run.version.agent, correct=True).values_list("item_id", flat=True)
    )
    assert right <= reachable
