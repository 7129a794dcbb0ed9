"""Agents are scored by the rules people are scored by in annotation (the task names the rule)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from quizsite.agents.scoring import WRITE_SIMILARITY_THRESHOLD, agent_answer_score
from quizsite.annotate.models import Campaign
from quizsite.annotate.tasks import set_f1, submission_judge
from quizsite.items.models import Item


class TwoDimVectors:
    """Texts on a circle: the angle is set per text, so cosine similarities are known exactly."""

    name = "fake-angles"

    def __init__(self, angles: dict[str, float]):
        self.angles = angles

    def vectors(self, words):  # type: ignore[no-untyped-def]
        return np.array([[np.cos(self.angles[w]), np.sin(self.angles[w])] for w in words], np.float32)

    def vocabulary(self):  # type: ignore[no-untyped-def]
        return None


def test_written_questions_score_by_similarity_as_in_annotation():
    assert WRITE_SIMILARITY_THRESHOLD == Campaign._meta.get_field("similarity_threshold").default
    item = Item(
        kind="archaeology", answer="Why is the sky blue?", data={"true_question": "Why is the sky blue?"}
    )
    source = TwoDimVectors(
        {"Why is the sky blue?": 0.0, "What colour is the sky, and why?": 0.5, "Who built Rome?": 1.4}
    )
    close = agent_answer_score(
        item, "What colour is the sky, and why?", task="archaeology-write", similarity_source=source
    )
    far = agent_answer_score(item, "Who built Rome?", task="archaeology-write", similarity_source=source)
    assert close.correct and close.score == pytest.approx(np.cos(0.5), abs=1e-6)  # 0.88 >= 0.8
    assert not far.correct and far.score == pytest.approx(np.cos(1.4), abs=1e-6)
    # without the task an archaeology answer is a pick among the shown questions: exact text only
    assert not agent_answer_score(item, "What colour is the sky, and why?").correct


def test_romqa_f1_is_annotations_f1_for_every_pick(demo_items):
    for item in demo_items["romqa"][:3]:
        cands = [c["text"] for c in item.data["candidates"]]
        gold = {c["text"] for c in item.data["candidates"] if c["is_answer"]}
        for r in range(len(cands) + 1):
            for pick in itertools.combinations(cands, r):
                assert agent_answer_score(item, list(pick)).score == pytest.approx(set_f1(set(pick), gold))
        # and through annotation's own judging of a posted form, for one pick
        picks = [0, 2, 5]
        human = submission_judge("romqa-select", item, cands, {"pick": picks}, elapsed_ms=1, timer_s=0)
        assert agent_answer_score(item, [cands[i] for i in picks]).score == pytest.approx(human.score)


def test_ghigliottina_choose_is_an_exact_pick_and_open_games_go_through_the_judge(demo_items):
    game = next(g for g in demo_items["ghigliottina"] if g.data.get("choices"))
    wrong = next(c for c in game.data["choices"] if c != game.answer)
    human = submission_judge(
        "ghigliottina-choose",
        game,
        game.data["choices"],
        {"choice": game.data["choices"].index(wrong)},
        elapsed_ms=1,
        timer_s=0,
    )
    assert agent_answer_score(game, wrong, task="ghigliottina-choose").correct is human.correct is False
    assert agent_answer_score(game, game.answer.upper(), task="ghigliottina-choose").correct
    # typed answers: the judge, as for a person's typed answer (plurals, accents ...)
    typed = game.answer + "!"
    person = submission_judge("ghigliottina-open", game, None, {"text": typed}, elapsed_ms=1, timer_s=60)
    agent = agent_answer_score(game, typed, task="ghigliottina-open")
    assert (agent.verdict, agent.correct, agent.score) == (person.verdict, person.correct, person.score)
