"""Rulings a moderator makes that judge 1.0 got wrong (issue 12), one group per class of error.

Each example was written for this file and failed on judge 1.0 (checked against main's judge when
it was written); the labels follow ACF/NAQT practice, as in cases.jsonl. The labelled corpora
(rulings_qanta.jsonl, rulings_moderator.jsonl) are scored by benchmarks/judge.py, not here: their
holdout rows must stay unseen by the rules.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from quizsite.judge import RULES, judge

HERE = Path(__file__).parent

DIRECTIVES = [
    ("<b><u>Mercury</u></b> [prompt on quicksilver]", "quick silver", "prompt"),
    ("<b><u>storm</u></b> [accept equivalents like tempest or squall]", "tempest", "accept"),
    ("<b><u>storm</u></b> [accept equivalents such as <u>tempest</u>]", "tempest", "accept"),
    ("<b><u>storm</u></b> (accept equivalents like “tempest”)", "tempest", "accept"),
    ("<b><u>running</u></b> [accept descriptions like jogging or sprinting]", "jogging", "accept"),
    ("<b><u>running</u></b> [accept descriptions such as “jogging”]", "jogging", "accept"),
    ("<b><u>Nile</u></b> [prompt on river before mention]", "river", "prompt"),
    ("<b><u>Nile</u></b> [prompt on river until mentioned]", "river", "prompt"),
    (
        'Treaty of <b><u>Versailles</u></b> [prompt on "Paris Peace Conference" after mention]',
        "Paris Peace Conference",
        "prompt",
    ),
    ("<b><u>Cologne</u></b> [accept equivalents]", "Köln", "accept"),
    ("<b><u>Guernica</u></b> [accept equivalents]", "Gernika", "accept"),
    ("<b><u>migrate</u></b> [accept word forms]", "migration", "accept"),
    ("<b><u>govern</u></b> [accept equivalents]", "government", "accept"),
    ('constitutional <b><u>monarchy</u></b> [do not accept "a monarchy"]', "the monarchy", "reject"),
    ('constitutional <b><u>monarchy</u></b> [do not accept "monarchy" alone]', "Monarchy", "reject"),
    ('<b><u>Kennedy</u></b> assassination [do not accept "Kennedy"]', "Kennedy", "reject"),
]

WORD_FORMS = [
    ("<b><u>geese</u></b>", "goose", "accept"),
    ("<b><u>goose</u></b>", "geese", "accept"),
    ("<b><u>criteria</u></b>", "criterion", "accept"),
    ("<b><u>phenomenon</u></b>", "phenomena", "accept"),
    ("<b><u>cactus</u></b>", "cacti", "accept"),
    ("<b><u>children</u></b>", "child", "accept"),
    ("<b><u>women</u></b>", "woman", "accept"),
    ("<b><u>dance</u></b>", "dancing", "accept"),
    ("<b><u>dance</u></b>", "danced", "accept"),
    ("<b><u>swim</u></b>", "swimming", "accept"),
    ("stuttering", "stutter", "accept"),
    ("<b><u>Strange Case of Dr Jekyll and Mr Hyde</u></b>", "Strange Case of Jekyll and Hyde", "accept"),
]

SPELLING = [
    ("Modest <b><u>Mussorgsky</u></b>", "Moussorgski", "accept"),  # French transliteration, sounds alike
    ("<b><u>Euripides</u></b>", "Euripedes", "accept"),  # one vowel slip in a long name
]

LETTERS_AND_SIGNS = [
    ("<b><u>Москва</u></b> [or Moscow]", "Moskva", "accept"),
    ("<b><u>Ἀθῆναι</u></b> [or Athens]", "Athinai", "accept"),
    ("<b><u>Nizhny Novgorod</u></b>", "Нижний Новгород", "accept"),
    ("<b><u>Qur'ān</u></b>", "Koran", "accept"),
    ("<b><u>1960s</u></b>", "the sixties", "accept"),
    ("<b><u>1960s</u></b>", "60s", "accept"),
    ("<b><u>1960s</u></b>", "'60s", "accept"),
    ("<b><u>1970s</u></b>", "Nineteen-seventies", "accept"),
    ("the <b><u>Seventies</u></b>", "1970s", "accept"),
]

ABBREVIATIONS = [
    ("<b><u>United Nations</u></b>", "UN", "accept"),
    ("<b><u>World Health Organization</u></b>", "WHO", "accept"),
    ("<b><u>Massachusetts Institute of Technology</u></b>", "MIT", "accept"),
    ("<b><u>John Fitzgerald Kennedy</u></b>", "JFK", "accept"),
    ("<b><u>Martin Luther King Jr.</u></b>", "MLK", "accept"),
    ("<b><u>Kennedy</u></b> Space Center", "KSC", "accept"),
]

WRONG_EXTRA = [
    ("Pieter <b><u>Bruegel</u></b> the Elder", "Bruegel the Younger", "reject"),
    ("<b><u>Antilles</u></b> [or Greater Antilles]", "Lesser Antilles", "reject"),
    ("<b><u>Star Wars</u></b>: Episode IV – A New Hope", "Star Wars Episode V", "reject"),
    ("<b><u>Tosca</u></b> (by Giacomo Puccini)", "Tosca by Verdi", "reject"),
]

PARTIAL_NAMES = [
    ("<b>Peter Pan</b>", "Peter Pan by J. M. Barrie", "accept"),  # the author is not another Peter
    ("George <b><u>Washington</u></b>", "Washington Irving", "reject"),  # the surname as a given name
    ("Johann Sebastian <b><u>Bach</u></b>", "Bach family", "reject"),
]

OTHER_LANGUAGES = [
    ("<b><u>The Magic Mountain</u></b> [accept equivalents]", "Der Zauberberg", "accept"),
    ("<b><u>Munich</u></b> [accept equivalents]", "München", "accept"),
    ("<b><u>Florence</u></b> [accept equivalents]", "Firenze", "accept"),
]

# What must not change: the new rules stay within what a moderator accepts.
GUARDS = [
    ("<b><u>Rachmaninoff</u></b>", "Rachmaninow", "accept"),
    ("<b><u>Westphalia</u></b>", "Westfalia", "accept"),
    ("<b><u>1960s</u></b> [accept 60s]", "the 60s", "accept"),
    ("Pope <b><u>Gregory</u></b> I", "Gregory the Great", "accept"),
    ("<b><u>Henry VIII</u></b>", "King Henry VIII of England", "accept"),
    (
        'constitutional <b><u>monarchy</u></b> [do not accept "monarchy" alone]',
        "constitutional monarchy",
        "accept",
    ),
    ("<b><u>Slovenia</u></b>", "Slavonia", "reject"),
    ("<b><u>Pliny the Elder</u></b>", "Pliny the Younger", "reject"),
    ("<b><u>Richard III</u></b>", "Richard II", "reject"),
    # judge 1.2: a bare decade takes the line's century (issue 12: "the nineties" by the century the
    # line implies; rulings_moderator.jsonl rules "the nineties" for 1890s accept), so this guard,
    # "reject" in 1.1, now expects accept; another century written out is still wrong:
    ("<b><u>1860s</u></b>", "60s", "accept"),
    ("<b><u>1860s</u></b>", "1960s", "reject"),
    ("<b><u>1960s</u></b>", "1960", "reject"),
    ("<b><u>dance</u></b>", "dancer", "reject"),
    ("<b><u>migrate</u></b>", "migration", "reject"),  # no word-forms directive
    ("<b><u>migrate</u></b> [accept word forms]", "mitigation", "reject"),
    ("Pieter <b><u>Bruegel</u></b> the Elder", "Pieter Bruegel the Elder", "accept"),
    ("{The Metamorphosis} [or Die {Verwandlung}]", "Metamorphoses", "reject"),
    ("<b><u>Florence</u></b> [accept equivalents]", "Venice", "reject"),
    ("<b><u>The Magic Flute</u></b>", "Die Zauberflöte", "reject"),  # no equivalents directive
    ("<b><u>Tosca</u></b> (by Giacomo Puccini)", "Tosca by Puccini", "accept"),
    ("<b><u>storm</u></b> [accept equivalents like tempest or squall]", "drought", "reject"),
    ("<b><u>North Atlantic Treaty Organization</u></b>", "NAFTA", "reject"),
    ("<b><u>World Health Organization</u></b>", "who", "reject"),  # a word, not the initials
]

CLASSES = {
    "directives": DIRECTIVES,
    "word forms": WORD_FORMS,
    "spelling": SPELLING,
    "letters and signs": LETTERS_AND_SIGNS,
    "abbreviations": ABBREVIATIONS,
    "wrong extra content": WRONG_EXTRA,
    "partial names": PARTIAL_NAMES,
    "other languages": OTHER_LANGUAGES,
    "guards": GUARDS,
}


@pytest.mark.parametrize(
    ("line", "given", "expected"),
    [pytest.param(*row, id=f"{name}: {row[1]}") for name, rows in CLASSES.items() for row in rows],
)
def test_moderator_ruling(line: str, given: str, expected: str) -> None:
    ruling = judge(line, given)
    assert ruling.verdict == expected, f"{given!r} on {line!r}: {ruling}"
    assert ruling.rule in RULES  # every ruling names the rule that decided it


def test_prompt_after_mention_is_conditional_on_the_item_itself() -> None:
    line = '<b><u>Versailles</u></b> [prompt on "Paris" after mention]'
    question = "This treaty was signed near Paris in 1919 . For 10 points name it"
    assert judge(line, "Paris", question, 2).verdict == "reject"  # "Paris" not yet read
    assert judge(line, "Paris", question, 8).verdict == "prompt"


def test_corpora_are_split_by_answer_line() -> None:
    for name in ("rulings_qanta.jsonl", "rulings_moderator.jsonl"):
        rows = [json.loads(line) for line in (HERE / name).read_text(encoding="utf-8").splitlines() if line]
        assert len(rows) >= 100
        split_of: dict[str, str] = {}
        for r in rows:
            assert r["expected"] in ("accept", "prompt", "reject") and r["reason"]
            assert split_of.setdefault(r["answerline"], r["split"]) == r["split"], r["answerline"]
        assert set(split_of.values()) == {"tune", "holdout"}


def test_fresh2_is_split_by_a_hash_of_the_answer_line() -> None:
    # rulings_fresh2.jsonl: tune on its tune half only; its holdout half is what benchmarks/judge.py quotes
    rows = [json.loads(x) for x in (HERE / "rulings_fresh2.jsonl").read_text(encoding="utf-8").splitlines() if x]
    assert len(rows) >= 500
    for r in rows:
        even = int(hashlib.sha256(r["answerline"].encode()).hexdigest(), 16) % 2 == 0
        assert r["split"] == ("tune" if even else "holdout"), r["answerline"]
        assert r["expected"] in ("accept", "prompt", "reject") and r["reason"]


def test_fresh_set_is_one_split() -> None:
    # rulings_fresh.jsonl was unseen until judge 1.2; judge 1.3 was tuned on it (benchmarks/judge.py)
    rows = [
        json.loads(x) for x in (HERE / "rulings_fresh.jsonl").read_text(encoding="utf-8").splitlines() if x
    ]
    assert len(rows) >= 120
    for r in rows:
        assert r["split"] == "fresh" and r["expected"] in ("accept", "prompt", "reject") and r["reason"]
        assert isinstance(r["from_issue"], bool)
