"""No agent kind can see an answer: it receives only a Question, and a Question is the same whatever the
answer is. These tests fail if the answer (or which option is right) ever leaks into what agents receive."""

from __future__ import annotations

import copy
import dataclasses
import json

import pytest

from quizsite.agents.kinds import REGISTRY, AgentKind, Question, question_for


def with_other_answer(item, **changes):  # type: ignore[no-untyped-def]
    other = copy.deepcopy(item)
    for key, value in changes.items():
        if key == "answer":
            other.answer = value
        else:
            other.data[key] = value
    return other


def test_every_registered_kind_is_complete():
    expected = {
        "embed-archaeology-choose",
        "embed-archaeology-write",
        "embed-ghigliottina-choose",
        "embed-romqa-select",
        "lmlik-ghigliottina-choose",
        "lmlik-archaeology-choose",
        "chat-quizbowl",
        "chat-ghigliottina-open",
        "chat-ghigliottina-choose",
        "chat-archaeology-choose",
        "chat-archaeology-write",
        "chat-romqa-select",
    }
    assert expected <= set(REGISTRY)
    for name in expected:
        cls = REGISTRY[name]
        assert cls.name == name and cls.item_kinds and cls.answer is not AgentKind.answer
        json.dumps(cls.defaults)  # settings are stored as JSON


def test_questions_do_not_depend_on_the_answer(demo_items):
    for game in demo_items["ghigliottina"][:10]:
        choices = game.data["choices"]
        wrong = next(c for c in choices if c != game.answer)
        moved = with_other_answer(game, answer=wrong, label=choices.index(wrong), links=[])
        assert question_for(game) == question_for(moved)
        assert game.answer not in question_for(game).text.split(" · ")  # the solution is no clue
    for q in demo_items["romqa"][:6]:
        flipped = with_other_answer(
            q, answer="", candidates=[{**c, "is_answer": not c["is_answer"]} for c in q.data["candidates"]]
        )
        assert question_for(q) == question_for(flipped)
    for tossup in demo_items["tossup"][:6]:
        assert question_for(tossup) == question_for(with_other_answer(tossup, answer="Something Else"))
        early = question_for(tossup, clue_index=0)
        assert (
            early.word_index < early.n_words
            and early.text.split() == tossup.data["words"][: early.word_index]
        )
    names = {f.name for f in dataclasses.fields(Question)}
    assert not names & {"answer", "label", "true_question", "is_answer", "solution", "candidates", "data"}


def test_the_true_question_is_not_always_in_one_place(demo_items):
    items = demo_items["archaeology"]
    places = [question_for(i).options.index(i.data["true_question"]) for i in items]
    assert len(set(places)) == 3
    for item in items[:8]:  # a shuffle fixed per item: the same order on every call
        swapped = with_other_answer(
            item,
            true_question=item.data["other_questions"][0],
            other_questions=[item.data["true_question"], item.data["other_questions"][1]],
        )
        assert question_for(item) == question_for(item)
        assert set(question_for(item).options) == set(question_for(swapped).options)


def test_an_embedding_agent_answers_the_same_whichever_option_is_true(demo_items):
    """Relabel which of an item's three questions is the true one: the agent's pick must not move."""
    agent = REGISTRY["embed-archaeology-choose"]()
    items = demo_items["archaeology"][:8]
    relabelled = [
        with_other_answer(
            i,
            true_question=i.data["other_questions"][1],
            other_questions=[i.data["other_questions"][0], i.data["true_question"]],
        )
        for i in items
    ]
    picks = [o.guess for o in agent.answer_many([question_for(i) for i in items])]
    again = [o.guess for o in agent.answer_many([question_for(i) for i in relabelled])]
    assert picks == again


@pytest.mark.parametrize("name", ["embed-ghigliottina-choose", "embed-archaeology-choose"])
def test_answers_are_deterministic(demo_items, name):
    kind = "ghigliottina" if "ghig" in name else "archaeology"
    qs = [question_for(i) for i in demo_items[kind][:10]]
    first = [(o.guess, o.raw) for o in REGISTRY[name]().answer_many(qs)]
    one_by_one = [(o.guess, o.raw) for o in (REGISTRY[name]().answer(q) for q in qs)]
    assert [g for g, _ in first] == [g for g, _ in one_by_one]
    flat = [s for _, r in first for s in r["scores"]]
    assert flat == pytest.approx([s for _, r in one_by_one for s in r["scores"]], abs=1e-5)
