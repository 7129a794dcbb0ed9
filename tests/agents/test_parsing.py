"""Reading letters, short answers and lists out of a model's free text."""

from __future__ import annotations

import pytest

from quizsite.agents.kinds.parsing import lettered, parse_choice, parse_list, parse_short

OPTIONS = ["piede", "mano", "testa", "colpo"]


@pytest.mark.parametrize(
    ("text", "index"),
    [
        ("B", 1),
        (" b", 1),
        ("(C)", 2),
        ("D. colpo", 3),
        ("Risposta: A", 0),
        ("**B**", 1),
        ("The answer is C because...", 2),
        ("La risposta è: D", 3),
        ("mano", 1),
        ("Direi testa.", 2),
        ("", None),
        ("non lo so", None),
        ("mano o testa", None),
        ("E", None),
    ],
)
def test_parse_choice(text, index):
    assert parse_choice(text, OPTIONS) == index


def test_a_lowercase_word_is_not_a_letter():
    assert parse_choice("a mano", OPTIONS) == 1  # "a" is Italian "by", not option A
    assert lettered(["x", "y"]) == "A. x\nB. y"


@pytest.mark.parametrize(
    ("text", "short"),
    [
        ("Moby-Dick", "Moby-Dick"),
        ("Answer: **Moby-Dick**.", "Moby-Dick"),
        ('"forno"\nperché...', "forno"),
        ("Risposta: «mano»", "mano"),
        ("  \n\nQuestion: Why is the sky blue?", "Why is the sky blue?"),
        ("", ""),
    ],
)
def test_parse_short(text, short):
    assert parse_short(text) == short


def test_parse_list():
    cands = ["Belgium", "Czech Republic", "Spain", "Côte d'Ivoire"]
    assert parse_list('Sure: ["czech republic", "Belgium", "Narnia"]', cands) == (
        ["Belgium", "Czech Republic"],
        ["Narnia"],
    )
    assert parse_list("- Belgium\n- Cote d'Ivoire\n", cands) == (["Belgium", "Côte d'Ivoire"], [])
    assert parse_list("Spain, Belgium; Spain", cands) == (["Belgium", "Spain"], [])
    assert parse_list("[]", cands) == ([], [])
    assert parse_list("None", cands) == ([], [])
