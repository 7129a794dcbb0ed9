"""An agent of the agents app sits in a play room as a bot: the room's catalogue lists the tossup agents
that can buzz, and the bot answers the tossup being read without having learnt from it."""

from __future__ import annotations

import pytest

from quizsite.agents.kinds import tossup_prefix_question
from quizsite.agents.models import AgentConfig
from quizsite.items.models import Item
from quizsite.judge import judge
from quizsite.play.bot_catalog import bot_resolve, bots_available, bots_setting_clean

pytestmark = pytest.mark.django_db


def _accuracy(bot, items: list[Item]) -> float:
    right = 0
    for item in items:
        out = bot.kind.answer(tossup_prefix_question(item.data["words"]))
        right += judge(item.answer, out.guess).verdict == "accept"
    return right / len(items)


def test_built_in_guessers_are_bots_on_a_fresh_install(demo):
    names = bots_available()
    assert "qb-guesser-tfidf" in names and "qb-guesser-embed" in names
    assert not any(n.startswith("retriever") for n in names)  # a ranked list cannot buzz
    assert bots_setting_clean(["qb-guesser-tfidf"]) == ["qb-guesser-tfidf"]


def test_a_guesser_bot_plays_as_its_version_and_never_learns_from_the_tossup_read(halves):
    bot = bot_resolve(name="qb-guesser-tfidf")
    version = AgentConfig.objects.get(name="qb-guesser-tfidf").versions.order_by("-number").first()
    assert bot.agent == version.agent
    late = list(Item.objects.filter(item_set__slug="halves-late").order_by("id"))
    demo = list(Item.objects.filter(item_set__slug="demo-tossups").order_by("id"))
    # A late half can be answered from its early half (another question with the same answer line) ...
    assert _accuracy(bot, late) > 0.3
    # ... while the full demo tossup is read with itself and both of its halves held out, so nothing in the
    # bank has its answer: a bot that learnt from the tossup being read would get these right.
    assert _accuracy(bot, demo) < 0.05


def test_words_that_start_no_tossup_of_the_bank_get_no_answer(demo):
    bot = bot_resolve(name="qb-guesser-tfidf")
    out = bot.kind.answer(tossup_prefix_question(["Zyzzyva", "quux", "frobnicate"]))
    assert out.guess == "" and out.confidence == 0.0
