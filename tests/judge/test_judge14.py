"""Judge 1.4: rulings a moderator makes that judge 1.3 got wrong, one group per rule.

Examples written for this file (none taken from a labelled corpus), each checked to fail on judge
1.3 (main at 47e85d1) unless marked as a guard: a guard passes on both and keeps a new rule from
reaching too far.
"""

from __future__ import annotations

import pytest

from quizsite.judge import judge

from .checks import assert_ruling

# Another word in the place of the line's unmarked one (other_word): a given name the line does
# not have, a possessive naming another thing of the person, a name for a ruler's number, another
# place after "of".
OTHER_WORD = [
    ("Charlotte {Brontë}", "Branwell Brontë", "reject"),
    ("{Fermat}'s principle", "Fermat's spiral", "reject"),
    ("{Ptolemy} I Soter", "Ptolemy Philadelphus", "reject"),
    ("{Gregory} of Nyssa", "Gregory of Tours", "reject"),
    ("{Marshall} Plan", "Marshall Program", "accept"),  # guard: another noun, not a possessive
    ("Coco {Chanel}", "Mademoiselle Chanel", "accept"),  # guard: a form of address
    ("{Gregory} of Nyssa", "Gregory", "accept"),  # guard: the required part alone
    ("{Avogadro}'s law", "Avogadro's principle", "accept"),  # guard: one statement, named either way
    ("Henri {Matisse}", "the famous Matisse", "accept"),  # guard: an adjective says nothing else
]

# A word inside the required ones that the line does not have (inserted_word).
INSERTED_WORD = [
    ("<b><u>Great Wall</u></b> of China", "Great Green Wall", "reject"),
    ("<b><u>The Hannah Montana Movie</u></b>", "The Hannah Montana Concert Movie", "reject"),  # a title
    ("<b><u>general relativity</u></b>", "general theory of relativity", "accept"),  # guard: reworded
    ("<b><u>Edgar Poe</u></b>", "Edgar Allan Poe", "accept"),  # guard: a person's middle name
]

# "New" before the whole answer names another place (new_place).
NEW_PLACE = [
    ("<b><u>Amsterdam</u></b>", "New Amsterdam", "reject"),
    ("<b><u>Caledonia</u></b>", "New Caledonia", "reject"),
    ("the <b><u>New Deal</u></b>", "New Deal", "accept"),  # guard
]

# A listed full name without its middle name (middle_name); a given name added between the line's
# given name and surname is the same person ("Henry": not Thomas Edison's, but a middle name), one in
# place of the line's given name is not.
MIDDLE_NAME = [
    ("Mark Twain [or Samuel Langhorne Clemens]", "Samuel Clemens", "accept"),
    ("George Eliot [or Mary Ann Evans]", "Mary Evans", "accept"),
    ("<b><u>Thomas Edison</u></b> [prompt on Edison]", "Thomas Henry Edison", "accept"),
    ("<b><u>Thomas Edison</u></b> [prompt on Edison]", "Alva Edison", "reject"),  # guard
]

# Initials standing for a run of an alternative's words (initialism_part).
INITIALISM_PART = [
    ("<b><u>United Nations Security Council</u></b>", "UN Security Council", "accept"),
    ("American Civil Liberties Union of Texas", "ACLU of Texas", "accept"),
    ("<b><u>United Nations Security Council</u></b>", "UN General Assembly", "reject"),  # guard
]

# The -ing form of the verb a common process noun derives from (gerund).
GERUND = [
    ("<b><u>distillation</u></b>", "distilling", "accept"),
    ("<b><u>excavation</u></b>", "excavating", "accept"),
    ("the <b><u>Reformation</u></b>", "reforming", "reject"),  # guard: a proper name
    ("<b><u>pollination</u></b>", "pollen", "reject"),  # guard
]

# A prompt entry with common nouns added after it is still that prompt.
PROMPT_MORE = [
    ("<b><u>Voyager 1</u></b> [prompt on Voyager]", "the Voyager probe", "prompt"),
    (
        "<b><u>Kepler's third law</u></b> [prompt on Kepler's laws]",
        "Kepler's laws of planetary motion",
        "prompt",
    ),
    ("<b><u>Voyager 1</u></b> [prompt on Voyager]", "Voyager 2", "reject"),  # guard: a number
]

# A final -ah is -a (Arabic and Hebrew romanisation); Russian ё is yo or e, -ый -y, -yi or -iy.
ROMANISATION = [
    ("<b><u>Hanukkah</u></b>", "Hanukka", "accept"),
    ("<b><u>Jeddah</u></b>", "Jedda", "accept"),
    ("Mikhail <b><u>Gorbachev</u></b>", "Gorbachyov", "accept"),
    ("<b><u>Fyodor Dostoevsky</u></b>", "Fedor Dostoevsky", "accept"),
    ("<b><u>Kyoto</u></b>", "Keto", "reject"),  # guard: not after k
    ("<b><u>Korean</u></b>", "Korea", "reject"),  # guard: another final letter
]

# "accept descriptions of X" accepts X; its adjectives only qualify it.
DESCRIPTIONS = [
    (
        "<b><u>Great Leap Forward</u></b> [accept descriptions of sudden collectivization of farms in 1958 China]",
        "collectivization of farms in 1958 China",
        "accept",
    ),
    (
        "<b><u>Great Leap Forward</u></b> [accept descriptions of sudden collectivization of farms in 1958 China]",
        "farms",
        "prompt",
    ),  # guard: too little of it
]

# A longer title built around the line's own, after "of" (title_around).
TITLE_AROUND = [
    ("<b><u>The Pink Panther</u></b>", "The Return of the Pink Panther", "reject"),
    ("<b><u>The Invisible Man</u></b>", "The Return of the Invisible Man", "reject"),
    ("<b><u>Hamlet</u></b>", "The Tragedy of Hamlet", "accept"),  # guard: no article of its own
]

ALL = (
    OTHER_WORD
    + INSERTED_WORD
    + NEW_PLACE
    + MIDDLE_NAME
    + INITIALISM_PART
    + GERUND
    + PROMPT_MORE
    + ROMANISATION
    + DESCRIPTIONS
    + TITLE_AROUND
)


@pytest.mark.parametrize(("line", "given", "expected"), ALL)
def test_ruling(line: str, given: str, expected: str) -> None:
    assert_ruling(line, given, expected)


def test_new_rules_are_named() -> None:
    assert judge("{Gregory} of Nyssa", "Gregory of Tours").rule == "other_word"
    assert judge("<b><u>Great Wall</u></b> of China", "Great Green Wall").rule == "inserted_word"
    assert judge("<b><u>Amsterdam</u></b>", "New Amsterdam").rule == "new_place"
    assert judge("Mark Twain [or Samuel Langhorne Clemens]", "Samuel Clemens").rule == "middle_name"
    assert (
        judge("<b><u>United Nations Security Council</u></b>", "UN Security Council").rule
        == "initialism_part"
    )
    assert judge("<b><u>excavation</u></b>", "excavating").rule == "gerund"
    assert judge("<b><u>The Pink Panther</u></b>", "The Return of the Pink Panther").rule == "title_around"
