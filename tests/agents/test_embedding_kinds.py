"""Embedding agents on the demo sets (the bundled all-MiniLM-L6-v2, offline)."""

from __future__ import annotations

from math import comb

import numpy as np
import pytest

from quizsite.agents.kinds import REGISTRY, Question, question_for
from quizsite.agents.scoring import agent_answer_score
from quizsite.items.vectors import text_similarity
from quizsite.judge.normalize import normalize


def accuracy(outs, truths) -> float:  # type: ignore[no-untyped-def]
    return sum(o.guess == t for o, t in zip(outs, truths, strict=True)) / len(truths)


def test_archaeology_choose_is_far_above_chance(demo_items):
    items = demo_items["archaeology"]
    qs = [question_for(i) for i in items]
    outs = REGISTRY["embed-archaeology-choose"]().answer_many(qs)
    truths = [i.data["true_question"] for i in items]
    acc = accuracy(outs, truths)
    first = sum(q.options[0] == t for q, t in zip(qs, truths, strict=True)) / len(items)
    # measured 0.97 (35 of 36); chance is 1/3, and "always the first option" scores `first`
    assert acc >= 0.8 and acc > first + 0.3
    assert all(
        agent_answer_score(i, o.guess, task="archaeology-choose").correct
        == (o.guess == i.data["true_question"])
        for o, i in zip(outs, items, strict=True)
    )
    again = REGISTRY["embed-archaeology-choose"]().answer_many(qs)
    assert [(o.guess, o.raw) for o in again] == [(o.guess, o.raw) for o in outs]


def test_archaeology_write_never_returns_the_items_own_questions(demo_items):
    items = demo_items["archaeology"]
    agent = REGISTRY["embed-archaeology-write"]()
    agent.prepare(items)
    outs = agent.answer_many([question_for(i) for i in items])
    all_questions = {
        normalize(q) for i in items for q in [i.data["true_question"], *i.data["other_questions"]]
    }
    for item, out in zip(items, outs, strict=True):
        own = {normalize(q) for q in [item.data["true_question"], *item.data["other_questions"]]}
        assert normalize(out.guess) not in own
        assert normalize(out.guess) in all_questions  # a question someone asked of another passage
        assert out.raw["pool_size"] <= len(all_questions) - len(own)
    scores = [
        agent_answer_score(i, o.guess, task="archaeology-write") for o, i in zip(outs, items, strict=True)
    ]
    sims = text_similarity([(o.guess, i.data["true_question"]) for o, i in zip(outs, items, strict=True)])
    assert [s.score for s in scores] == pytest.approx(sims)  # annotation's similarity, the same numbers
    assert [s.correct for s in scores] == [x >= 0.8 for x in sims]
    with pytest.raises(ValueError, match="empty pool"):
        REGISTRY["embed-archaeology-write"]().answer(question_for(items[0]))


def test_ghigliottina_choose_answers_among_the_choices(demo_items):
    games = [g for g in demo_items["ghigliottina"] if g.data.get("choices")]
    qs = [question_for(g) for g in games]
    outs = REGISTRY["embed-ghigliottina-choose"]().answer_many(qs)
    acc = accuracy(outs, [g.answer for g in games])
    print(f"embed-ghigliottina-choose: {acc:.3f} on {len(games)} games (chance 0.25)")
    # Measured 15/46 = 0.33: not distinguishable from chance (one-sided binomial p ~ 0.13). The demo's
    # distractors were picked for being near the clues in word-vector space, which is exactly the signal
    # this agent uses, so no accuracy bound is asserted; only that each answer is one of the choices.
    assert all(o.guess in q.options for o, q in zip(outs, qs, strict=True))
    assert len({o.raw["choice_index"] for o in outs}) > 1
    with pytest.raises(ValueError, match="open game"):
        REGISTRY["embed-ghigliottina-choose"]().answer(
            Question(games[0].pk, "ghigliottina", "x", clues=("a",))
        )


def random_pick_f1(n: int, gold: int, k: int) -> float:
    """Expected set F1 of k candidates drawn at random among n, gold of them right."""
    if k == 0:
        return float(gold == 0)
    return sum(
        comb(gold, h) * comb(n - gold, k - h) / comb(n, k) * 2 * h / (k + gold)
        for h in range(min(gold, k) + 1)
    )


def test_romqa_select_tunes_on_train_clusters_and_reports_held_out(demo_items):
    items = demo_items["romqa"]
    agent = REGISTRY["embed-romqa-select"]({"seed": 0})
    agent.prepare(items)
    outs = agent.answer_many([question_for(i) for i in items])
    held = [(o, i) for o, i in zip(outs, items, strict=True) if o.raw["split"] == "held-out"]
    train_clusters = {
        i.data["cluster_id"] for o, i in zip(outs, items, strict=True) if o.raw["split"] == "train"
    }
    assert held and not train_clusters & {i.data["cluster_id"] for _, i in held}  # clusters never straddle
    assert {o.raw["threshold"] for o in outs} == {agent.threshold} and outs[0].raw["seed"] == 0
    f1 = np.mean([agent_answer_score(i, o.guess).score for o, i in held])
    n_gold = [(len(i.data["candidates"]), sum(c["is_answer"] for c in i.data["candidates"])) for _, i in held]
    one_random = np.mean([random_pick_f1(n, g, 1) for n, g in n_gold])
    select_all = np.mean([2 * g / (n + g) for n, g in n_gold])
    print(
        f"embed-romqa-select held-out F1 {f1:.3f} ({len(held)} items); one random pick {one_random:.3f}; all {select_all:.3f}"
    )
    # On the demo clusters the tuned threshold keeps most candidates, so held-out F1 sits near "tick every
    # candidate" (many demo questions have most candidates right); it does beat a single random pick.
    assert f1 > one_random
    again = REGISTRY["embed-romqa-select"]({"seed": 0})
    again.prepare(items)
    assert again.threshold == agent.threshold and again.train_ids == agent.train_ids


def test_romqa_similarity_ranks_answers_above_chance(demo_items):
    """Threshold-free (nothing tuned): how often an answer outranks a non-answer of the same question."""
    items = demo_items["romqa"]
    outs = REGISTRY["embed-romqa-select"]({"threshold": 0.0, "mode": "absolute"}).answer_many(
        [question_for(i) for i in items]
    )
    aucs = []
    for out, item in zip(outs, items, strict=True):
        s = np.array(out.raw["scores"])
        y = np.array([c["is_answer"] for c in item.data["candidates"]])
        aucs.append(np.mean([(p > n) + 0.5 * (p == n) for p in s[y] for n in s[~y]]))
    print(f"embed-romqa-select ranking AUC {np.mean(aucs):.3f} over {len(items)} questions")
    assert np.mean(aucs) > 0.55  # measured 0.61
