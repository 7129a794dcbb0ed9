"""Extra content that turns a right answer into a wrong one (issue 12, "wrong extra content").

The required words alone do not make an answer right when what the player adds says it is
something else: a hyphenated partner or prefix ("Austria-Hungary", "anti-Catholicism"), a title
that merely contains the answer's word ("The Velveteen Rabbit" for rabbits), or a creator or year
that the question itself contradicts ("Tosca by Verdi" where the question says "this opera by
Giacomo Puccini"). Without world knowledge the judge decides only from what the line and the
question say: "Tosca by Verdi" on a bare "<u>Tosca</u>" line with no question text stays accepted
(the moderator's knowledge is not the judge's; rejecting every unverifiable "by X" would reject
the right composer as often as the wrong one).
"""

from __future__ import annotations

import re
from functools import lru_cache

from .matching import token_match
from .normalize import normalize, normalize_cached

# Prefixes that make a different (often the opposite) thing of the word they join: "anti-Catholicism"
# is not Catholicism. Source: the meaning-changing English prefixes listed in the Oxford English
# Grammar's table of prefixes (negation, attitude, degree, time, "new"/"false" forms), as written
# with a hyphen before a proper noun.
CHANGING_PREFIXES = frozenset(
    "anti non pro counter neo post pre proto pseudo crypto quasi semi ex un mis sub super ultra "
    "trans pan para arch".split()
)
_HYPHENATED = re.compile(r"([A-Za-zÀ-ÿ'’]+)\s?[-‐‑–]\s?([A-Za-zÀ-ÿ'’]+)")
# Works a question names with their creator: "this opera by Giacomo Puccini", "this William
# Shakespeare play"; the nouns are the kinds of work quizbowl questions ask for.
_WORK = (
    r"(?:play|novel|novella|opera|operetta|poem|symphony|painting|tragedy|comedy|story|book|"
    r"film|sonata|concerto|ballet|essay|work|oratorio|song|sculpture|epic|treatise|memoir)s?"
)
_NAME = r"(?:[A-Z][\w'’.-]*\s?){1,4}"
_CREATOR = re.compile(rf"\b{_WORK}\s+by\s+({_NAME})|\bthis\s+({_NAME})\s*{_WORK}\b")
_YEAR = re.compile(r"\b(1\d{3}|20\d{2})\b")
_TITLE_WORDS = frozenset(("the", "a", "an", "to", "of", "and"))


def wrong_compound(given: str, line_words: frozenset[str], person: bool) -> bool:
    """Is one of the answer's words joined by a hyphen to something the line does not have, which
    makes it another thing: a meaning-changing prefix ("anti-Catholicism", "neo-Marxism") or, on a
    line that names no person, a second proper noun ("Austria-Hungary", "Denmark-Norway")?

    A person's double surname ("Skłodowska-Curie") is the same person, so a line with a given name
    only looks at prefixes."""
    if "-" not in given and "‐" not in given and "‑" not in given and "–" not in given:
        return False
    for left, right in _HYPHENATED.findall(given):
        lt, rt = normalize(left), normalize(right)
        if len(lt) != 1 or len(rt) != 1:
            continue
        a, b = lt[0], rt[0]
        in_a = any(token_match(w, a) for w in line_words)
        in_b = any(token_match(w, b) for w in line_words)
        if in_a == in_b:
            continue  # both on the line ("Rimsky-Korsakov"), or neither ("Nineteen-seventies")
        other, other_raw = (b, right) if in_a else (a, left)
        if other in CHANGING_PREFIXES and in_b:
            return True
        if not person and left[:1].isupper() and right[:1].isupper() and other_raw[:1].isupper():
            return True
    return False


# The prefixes of CHANGING_PREFIXES that are also written apart ("Counter Reformation", "non
# Euclidean geometry"); the others are English words of their own when apart ("Super Bowl",
# "Peter Pan", "the Washington Post") and are left to the hyphenated form.
SEPARATE_PREFIXES = frozenset("anti non counter neo proto pseudo crypto quasi semi".split())


def prefix_apart(tokens: tuple[str, ...], used: set[int], line_words: frozenset[str]) -> bool:
    """Does a meaning-changing prefix written as a word of its own stand right before a required
    word ("Counter Reformation" for the Reformation, "neo classicism")? Where the line has that
    word itself, it is part of the answer."""
    return any(
        j - 1 >= 0
        and j - 1 not in used
        and tokens[j - 1] in SEPARATE_PREFIXES
        and tokens[j - 1] not in line_words
        for j in used
    )


def title_containing(given: str, entry_text: str, core: tuple[str, ...]) -> bool:
    """Is the answer a title that contains the line's common noun ("The Velveteen Rabbit" for
    rabbits, "To Kill a Mockingbird" for mockingbirds) rather than the thing itself?

    Read from the answer's capitals: the noun capitalised inside the answer, beside another
    capitalised word and a title's small word (the, a, to), where the line writes it in lower case.
    "European rabbits" or "Grey Wolves" stay answers."""
    if not entry_text or entry_text != entry_text.lower():
        return False
    words = given.split()
    if (
        len(words) < 3
        or words[0].lower() not in _TITLE_WORDS
        and not any(w.lower() in _TITLE_WORDS for w in words[1:])
    ):
        return False
    core_set = frozenset(core)
    noun_capital = other_capital = False
    for w in words[1:]:
        if not w[:1].isupper():
            continue
        if core_set.intersection(normalize(w)):
            noun_capital = True
        elif w.lower() not in _TITLE_WORDS:
            other_capital = True
    return noun_capital and other_capital


@lru_cache(maxsize=4096)
def question_creators(question_text: str) -> tuple[tuple[str, ...], ...]:
    """The creators a question names for its work ("this opera by Giacomo Puccini" -> (giacomo,
    puccini)), as normalised words; cached, as a question is judged once per buzz."""
    out = []
    for by, this in _CREATOR.findall(question_text):
        words = normalize_cached((by or this).strip())
        if words:
            out.append(words)
    return tuple(out)


@lru_cache(maxsize=4096)
def question_years(question_text: str) -> frozenset[str]:
    return frozenset(_YEAR.findall(question_text))


def creator_contradicted(credited: list[str], question_text: str | None) -> bool:
    """Does the question name the work's creator, and the answer's "by X" fit none of them?"""
    if not question_text or not credited:
        return False
    creators = question_creators(question_text)
    if not creators:
        return False
    return not any(token_match(w, t) for names in creators for w in names for t in credited)


def year_contradicted(extra: list[str], line_has_number: bool, question_text: str | None) -> bool:
    """Does the answer add a year ("Peace of Westphalia of 1815") where the line gives none and the
    question gives years, none of them this one?"""
    if line_has_number or not question_text:
        return False
    years = [t for t in extra if len(t) == 4 and t.isdigit()]
    if not years:
        return False
    stated = question_years(question_text)
    return bool(stated) and any(y not in stated for y in years)


def title_around(given: str, entry_text: str) -> bool:
    """Is the answer a longer title built around the line's own ("The Disintegration of the
    Persistence of Memory" for "The Persistence of Memory")? The line's title, its article kept,
    after "of" and a word of another title: a work named for the line's, not the line's. Only
    for titles that begin with an article, so that a title's own long form still passes ("The
    Tragedy of Hamlet" for "Hamlet")."""
    low = " ".join(entry_text.split()).casefold()
    if not low.startswith(("the ", "a ", "an ")):
        return False
    g = " ".join(given.split()).casefold()
    i = g.find(" of " + low)
    if i <= 0:
        return False
    head = [w for w in g[:i].split() if w not in ("the", "a", "an")]
    return bool(head)
