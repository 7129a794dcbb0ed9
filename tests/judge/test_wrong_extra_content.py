"""Judge 1.2: extra content that makes a right answer wrong (issue 12, "wrong extra content").

Every ``WRONG`` example was written for this file and failed on judge 1.1 (checked against main's
judge when written); none is taken from tests/judge/rulings_fresh.jsonl, which was unseen until judge 1.3. The
``STILL_RIGHT`` rows guard the answers a moderator accepts that the new rules must not catch.
"""

from __future__ import annotations

import pytest

from quizsite.judge import RULES, judge

U = "<b><u>{}</u></b>".format
AIDA_Q = "In this opera by Giuseppe Verdi, Radames is buried alive. For 10 points, name this opera."
MACBETH_Q = "In this William Shakespeare play, a Scottish thane kills Duncan. For 10 points, name it."
UTRECHT_Q = "This treaty of 1713 ended the War of the Spanish Succession. For 10 points, name it."

# (line, given, question text, expected rule)
WRONG = [
    (U("Lutheranism"), "anti-Lutheranism", None, "wrong_compound"),
    (U("Marxism"), "neo-Marxism", None, "wrong_compound"),
    (U("Bohemia"), "Austria-Bohemia", None, "wrong_compound"),
    (U("Denmark"), "Denmark-Norway", None, "wrong_compound"),
    (U("foxes"), "The Fantastic Mr Fox", None, "title_of_work"),
    (U("bears"), "The Three Bears", None, "title_of_work"),
    (U("Aida"), "Aida by Wagner", AIDA_Q, "wrong_creator"),
    (U("Macbeth"), "Macbeth by Jonson", MACBETH_Q, "wrong_creator"),
    (U("Treaty of Utrecht"), "Treaty of Utrecht of 1815", UTRECHT_Q, "wrong_year"),
]

STILL_RIGHT = [
    (U("Aida"), "Aida by Verdi", AIDA_Q),
    (U("Macbeth"), "Macbeth by Shakespeare", MACBETH_Q),
    (U("Carmen"), "Carmen by Bizet", None),  # no creator named anywhere: nothing contradicts
    (U("Treaty of Utrecht"), "Treaty of Utrecht of 1713", UTRECHT_Q),
    (U("Treaty of Utrecht"), "Treaty of Utrecht of 1714", None),  # no question: no year to check
    (U("wolves"), "grey wolves", None),
    (U("rabbits"), "European Rabbits", None),  # capitals, but no title's small word
    (U("Rimsky-Korsakov"), "Rimsky-Korsakov", None),
    ("Marie " + U("Curie"), "Sklodowska-Curie", None),  # a double surname is the same person
    (U("Curie"), "Marie Sklodowska-Curie", None),  # the given name says a person is meant
    (U("1970s"), "Nineteen-seventies", None),
    (U("X-ray") + "s", "x-rays", None),
    (U("Pre-Raphaelite") + " Brotherhood", "pre-Raphaelites", None),
]


@pytest.mark.parametrize(("line", "given", "question", "rule"), WRONG, ids=[r[1] for r in WRONG])
def test_wrong_extra_content_is_rejected(line: str, given: str, question: str | None, rule: str) -> None:
    ruling = judge(line, given, question)
    assert (ruling.verdict, ruling.rule) == ("reject", rule), ruling
    assert rule in RULES


@pytest.mark.parametrize(("line", "given", "question"), STILL_RIGHT, ids=[r[1] for r in STILL_RIGHT])
def test_harmless_extra_content_is_still_accepted(line: str, given: str, question: str | None) -> None:
    ruling = judge(line, given, question)
    assert ruling.verdict == "accept", ruling
    assert ruling.rule in RULES


def test_the_same_answer_without_the_question_is_not_second_guessed() -> None:
    # Without world knowledge the judge cannot know Aida is Verdi's: only the question can say so.
    assert judge(U("Aida"), "Aida by Wagner").verdict == "accept"
    assert judge(U("Aida"), "Aida by Wagner", AIDA_Q).verdict == "reject"


# Partial titles (judge 1.2): a long title's short form is the title; failed on judge 1.1.
SHORT_TITLES = [
    (U("The Adventures of Huckleberry Finn"), "Huckleberry Finn", "accept"),
    ("{The History of Tom Jones, a Foundling}", "Tom Jones", "accept"),
    ("{The History of Tom Jones, a Foundling}", "The History of Tom Jones", "accept"),
    ("<i>" + U("The Tragedy of Hamlet, Prince of Denmark") + "</i>", "Hamlet", "accept"),
    # guards: a subject or a "A ..." title's tail is not the title
    (U("A Tale of Two Cities"), "Two Cities", "reject"),
    (U("The History of Rome"), "Rome", "reject"),
    ("{The History of Tom Jones, a Foundling}", "Tom Sawyer", "reject"),
]


@pytest.mark.parametrize(("line", "given", "expected"), SHORT_TITLES, ids=[r[1] for r in SHORT_TITLES])
def test_short_form_of_a_long_title(line: str, given: str, expected: str) -> None:
    ruling = judge(line, given)
    assert ruling.verdict == expected, ruling
    assert ruling.rule in RULES
