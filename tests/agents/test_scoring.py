import pytest

from quizsite.agents.scoring import agent_answer_score
from quizsite.items.models import Item


def test_romqa_scores_set_f1_and_exact_set_accuracy():
    item = Item(kind="romqa", answer="France / Spain", data={"candidates": [
        {"text": "France", "is_answer": True}, {"text": "Spain", "is_answer": True}, {"text": "Italy", "is_answer": False}]})
    full = agent_answer_score(item, ["spain", "France"])
    part = agent_answer_score(item, ["France", "Italy"])
    assert (full.correct, full.score) == (True, 1.0)
    assert (part.correct, part.score) == (False, 0.5)


def test_archaeology_and_ghigliottina():
    arch = Item(kind="archaeology", answer="Why do cats purr?")
    assert agent_answer_score(arch, "why do cats purr").correct
    assert not agent_answer_score(arch, "Why do dogs bark?").correct
    game = Item(kind="ghigliottina", answer="caffè")
    assert agent_answer_score(game, "Caffe").correct and not agent_answer_score(game, "latte").correct
    with pytest.raises(ValueError):
        agent_answer_score(game, 3)
