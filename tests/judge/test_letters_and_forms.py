"""Judge 1.2: transliteration, irregular plurals, ampersand initials, decades and German articles
(issue 12, "letters and signs", "word forms", "other languages").

Every ``FIXED`` example was written for this file and failed on judge 1.1 (checked against main's
judge when written); none is taken from tests/judge/rulings_fresh.jsonl, which was unseen until judge 1.3 (rulings_fresh2.jsonl holds out its holdout half now).
"""

from __future__ import annotations

import pytest

from quizsite.judge import RULES, judge

U = "<b><u>{}</u></b>".format

FIXED = [
    # Russian romanised by another system (German -ij/-ow, French tch-)
    (U("Rimsky-Korsakov"), "Rimskij-Korsakow", "accept"),
    (U("Mussorgsky"), "Musorgskij", "accept"),
    (U("Chekhov"), "Tchekhov", "accept"),
    # -ves / -ices plurals and the plural lemminflect lacks
    (U("calves"), "calf", "accept"),
    (U("halves"), "half", "accept"),
    (U("leaves"), "leaf", "accept"),
    (U("indices"), "index", "accept"),
    (U("oxen"), "oxes", "accept"),
    # initials either side of an ampersand
    (U("Marks & Spencer"), "M&S", "accept"),
    (U("Simon & Schuster"), "S&S", "accept"),
    (U("Barnes & Noble"), "B&N", "accept"),
    # a bare decade takes the line's century
    (U("1880s"), "the eighties", "accept"),
    (U("1780s"), "the 80s", "accept"),
    (U("1820s"), "the twenties", "accept"),
    # a German title without its article
    ("Die Walküre [or The Valkyrie]", "Walkure", "accept"),
]

GUARDS = [
    (U("1880s"), "the 1980s", "reject"),  # a century written out, and wrong
    (U("1880s"), "the nineties", "reject"),
    (U("Marks & Spencer"), "M&M", "reject"),
    (U("Chekhov"), "Chekov", "accept"),
    (U("Borodin"), "Borodino", "reject"),  # a battle, not the composer
    (U("leaves"), "leave", "reject"),
    ("Die Walküre [or The Valkyrie]", "Walhalla", "reject"),
    (U("people"), "person", "reject"),
]


@pytest.mark.parametrize(
    ("line", "given", "expected"),
    [pytest.param(*r, id=f"fixed: {r[1]}") for r in FIXED]
    + [pytest.param(*r, id=f"guard: {r[1]}") for r in GUARDS],
)
def test_ruling(line: str, given: str, expected: str) -> None:
    ruling = judge(line, given)
    assert ruling.verdict == expected, ruling
    assert ruling.rule in RULES
