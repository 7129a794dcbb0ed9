"""Fuzzy matching of normalised tokens, with tolerance that grows with word length.

Why token level and not a whole-string ratio: a whole-string ratio lets a long shared context carry
a wrong key word ("Battle of Hastings" vs "Battle of Waterloo" share most characters) and punishes
harmless extra words ("the painter Claude Monet"). Matching each required word on its own keeps
the decision on the words that identify the answer.

Why these tolerances: short words that differ by one letter are usually different words (Monet and
Manet, Iran and Iraq, mitosis and meiosis, carbonyl and carboxyl), so up to four letters nothing is
forgiven, at five only a swapped pair, and up to eight a swapped pair or one letter more or less
(never a changed letter but a vowel in an unstressed last syllable, Swedan for Sweden; never at
the first position: Prussia is not Russia). Longer words are
rarely one edit from another real word, so one to three edits are forgiven (Tchaikovski, Beethovan)
except where the edit lands on a known meaningful prefix or ending (hypo-/hyper-, -ate/-ite, a final
vowel: hyperbola/hyperbole). Spellings that sound alike (Perikles, Strawinsky) meet through a crude
sound key, and a long word one edit past its tolerance still matches where jellyfish's metaphone
keys agree (Moussorgski). Forms of one verb (dancing, danced for dance) meet through lemminflect's
lemmas.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import jellyfish
from lemminflect import getAllLemmas
from rapidfuzz.distance import OSA, Levenshtein

from .names import NICKNAMES
from .normalize import normalize

# A nickname for the given name it stands for, as the normaliser spells both ("tom" -> "thoma"):
# "Teddy Roosevelt" is the line's "Theodore Roosevelt", accepted or rejected with it.
_NICKNAME_OF = {normalize(k)[-1]: normalize(v)[-1] for k, v in NICKNAMES.items() if k != "fdr"}

_PREFIX_PAIRS = (
    ("hypo", "hyper"),
    ("inter", "intra"),
    ("endo", "exo"),
    ("homo", "hetero"),
    ("micro", "macro"),
    ("pre", "post"),
    ("sub", "super"),
    ("ortho", "para"),
    ("ortho", "meta"),
    ("para", "meta"),
    ("uni", "multi"),
    ("mono", "poly"),
    ("ana", "cata"),
    ("anti", "ante"),
    ("hydro", "hygro"),
    ("im", "ex"),
    ("in", "ex"),
    ("en", "ex"),
    ("di", "tri"),
    ("mono", "di"),
)
_SUFFIXES = (
    "ate",
    "ite",
    "ide",
    "ine",
    "ane",
    "ene",
    "yne",
    "ol",
    "al",
    "one",
    "ose",
    "ase",
    "yl",
    "ic",
    "ous",
    "ium",
    "ion",
    "itis",
    "osis",
    "ism",
    "ist",
    "ity",
)
_VOWELS = frozenset("aeiou")


def _transposed(a: str, b: str) -> bool:
    """Same letters with one adjacent pair swapped ("Mozrat"), the first letter left in place
    (cation and action are different words)."""
    if len(a) != len(b):
        return False
    diff = [i for i in range(len(a)) if a[i] != b[i]]
    return (
        len(diff) == 2
        and diff[0] > 0
        and diff[1] == diff[0] + 1
        and a[diff[0]] == b[diff[1]]
        and a[diff[1]] == b[diff[0]]
    )


def _one_indel(a: str, b: str) -> bool:
    """One letter more or less inside the word (entrophy, Decartes, Waterlo), never the first
    (Russia is not Prussia) and at the end only a doubled letter (Korea is not Korean) or an "h"
    after a vowel: a final -ah is -a in the romanisation of Arabic and Hebrew ta marbuta and he
    (Makkah / Makka, Hanukkah / Hanukka; Wikipedia, "Romanization of Arabic"), silent in English."""
    if abs(len(a) - len(b)) != 1 or a[0] != b[0]:
        return False
    longer, shorter = (a, b) if len(a) > len(b) else (b, a)
    last = len(longer) - 1
    for i in range(1, len(longer)):
        if longer[:i] + longer[i + 1 :] == shorter:
            if i < last or longer[last] == longer[last - 1]:
                return True
            if longer[last] == "h" and longer[last - 1] in _VOWELS:
                return True
    return False


def _vowel_slip(a: str, b: str) -> bool:
    """One vowel written for another inside an eight-letter word (Euripedes for Euripides, whose
    stem is eight letters), never the first or last letter (Slovenia and Slavonia differ in two)."""
    if len(a) != len(b):
        return False
    diff = [i for i in range(len(a)) if a[i] != b[i]]
    return len(diff) == 1 and 0 < diff[0] < len(a) - 1 and a[diff[0]] in _VOWELS and b[diff[0]] in _VOWELS


def _silent_e(a: str, b: str) -> bool:
    """A silent final "e" added or left out after two consonants (Wild for Wilde, Clarke for
    Clark, Browne for Brown): it changes no sound there. After one consonant it lengthens the
    vowel (shin / shine, plan / plane) and makes another word, so that stays apart."""
    longer, shorter = (a, b) if len(a) > len(b) else (b, a)
    if len(shorter) < 4 or longer != shorter + "e" or not shorter.isalpha():
        return False
    # not after a doubled consonant: "-bbe" is a stemmed "-bbes" (Hobbes), and Hobbs is another name
    last, before = shorter[-1], shorter[-2]
    return last not in _VOWELS and before not in _VOWELS and last not in "yw" and last != before


def _final_syllable_vowel(a: str, b: str) -> bool:
    """One vowel for another in a final unstressed syllable closed by a consonant (Swedan for
    Sweden, Austin for Austen, Dickins for Dickens): in English that vowel is reduced to a schwa
    and all vowels sound alike there. Earlier vowels carry the stress and tell words apart
    (Slovenia / Slavonia, Merton / Morton), so they stay as they are."""
    n = len(a)
    if len(b) != n or a[:-2] != b[:-2] or a[-1] != b[-1] or a[-1] in _VOWELS:
        return False
    return a[-2] in _VOWELS and b[-2] in _VOWELS and a[-3] not in _VOWELS


def _confusable(a: str, b: str) -> bool:
    """Near-identical long words that still name different things."""
    for p, q in _PREFIX_PAIRS:
        a_p, a_q, b_p, b_q = a.startswith(p), a.startswith(q), b.startswith(p), b.startswith(q)
        if (a_p and b_q and not a_q and not b_p) or (a_q and b_p and not a_p and not b_q):
            return True
    if len(a) <= 10 and a[:-1] == b[:-1] and a[-1] in _VOWELS and b[-1] in _VOWELS:
        return True  # hyperbola/hyperbole, Giovanna/Giovanni
    for s in _SUFFIXES:
        if a.endswith(s):
            stem = a[: -len(s)]
            if len(stem) >= 3 and b.startswith(stem):
                tail = b[len(stem) :]
                if tail != s and tail in _SUFFIXES:
                    return True
    return False


_PH = (
    ("ae", "e"),
    ("oe", "o"),
    ("ue", "u"),
    ("ph", "f"),
    ("ck", "k"),
    ("qu", "kw"),
    ("q", "k"),
    ("y", "i"),
    ("z", "s"),
    ("w", "v"),
)
_SOFT_C = re.compile(r"c(?!h)")
# Romanisations of Russian that differ by system (ALA-LC, German, French, English popular):
# Chekhov / Tchekhov / Tschechow, Rakhmaninov / Rachmaninoff, Rimskij / Rimsky; after _PH, so
# "w" is already "v" and "y" "i". Source: the Wikipedia table "Romanization of Russian" (х: kh,
# ch; ч: ch, tch, tsch; -ий: -y, -ij; -ов final: -ov, -off, -ow; -ев final: -ev, -eff, -ew:
# Prokofiev / Prokofieff).
_SLAVIC = re.compile(r"tsch|tch|kh|ij$|off$|eff$")
_SLAVIC_KEY = {"tsch": "ch", "tch": "ch", "kh": "ch", "ij": "i", "off": "ov", "eff": "ev"}
_DOUBLE = re.compile(r"(.)\1+")
# Russian ё after a consonant is romanised "yo" or "e" (Fyodor / Fedor, Vishnyovy / Vishnevy; the
# Wikipedia table "Romanization of Russian", ё: yo, e, io); not after k (Kyoto, Tokyo are Japanese).
_YO = re.compile(r"(?<=[bcdfghjlmnprstvwz])yo")


def phonetic(word: str) -> str:
    """A crude sound key: spellings that read alike (Perikles/Pericles, Tchaikovski/-y, Strawinsky,
    Fibonnaci) meet; vowels are kept, so Monet and Manet still differ."""
    if "yo" in word:
        word = _YO.sub("e", word)  # Russian ё: Pyotr / Petr, Gorbachyov / Gorbachev
    for a, b in _PH:
        word = word.replace(a, b)
    if word.endswith("ii"):
        word = word[:-1]  # Russian -ый / -ий: -y, -yi, -iy (Vishnevyi, Vishnevy)
    word = _SOFT_C.sub("k", word)
    if "kh" in word or "tch" in word or word.endswith(("ij", "off", "eff")):
        word = _SLAVIC.sub(lambda m: _SLAVIC_KEY[m.group(0)], word)
    return _DOUBLE.sub(r"\1", word) if len(word) > 5 else word  # note and notte stay apart


# The expected word comes from an answer line, and lines repeat; the given word is not cached.
_line_phonetic = lru_cache(maxsize=16384)(phonetic)


def compatible_names(a: str, b: str) -> bool:
    """Could two given names be the same person's (Karl/Carl, Abe/Abraham, Jon/John)?"""
    if a == b or phonetic(a) == phonetic(b) or NICKNAMES.get(a) == b or NICKNAMES.get(b) == a:
        return True
    if len(a) >= 2 and len(b) >= 2 and (a.startswith(b) or b.startswith(a)):
        return True
    return min(len(a), len(b)) >= 3 and Levenshtein.distance(a, b, score_cutoff=1) <= 1


@lru_cache(maxsize=65536)
def verb_lemmas(word: str) -> frozenset[str]:
    """Dictionary lemmas of a verb form (dancing, danced -> dance; stuttering -> stutter), from
    lemminflect; empty for words that are not verb forms."""
    return frozenset(getAllLemmas(word, "VERB").get("VERB", ()))


def same_verb(expected: str, got: str) -> bool:
    """Are two words forms of one verb ("dancing" for "dance", "swimming" for "swim")? Only for
    words of four letters or more that share their first three (led is not lead)."""
    if len(expected) < 4 or len(got) < 4 or expected[:3] != got[:3] or not (expected + got).isalpha():
        return False
    a, b = verb_lemmas(expected) or {expected}, verb_lemmas(got) or {got}
    return not a.isdisjoint(b)


_DECADE = re.compile(r"^(1[0-9]|20)([0-9]0s)$")


@lru_cache(maxsize=16384)
def _line_metaphone(word: str) -> str:
    return jellyfish.metaphone(word)


def token_match(expected: str, got: str) -> bool:
    """Is ``got`` an acceptable spelling of the expected word?"""
    if expected == got or _NICKNAME_OF.get(got) == expected:
        return True
    if got[:1].isdigit():
        # "60s" (or "the sixties") for "1960s": a moderator hears the twentieth century
        m = _DECADE.match(expected)
        if m is None:  # the line says "the seventies", the player "1970s"
            m = _DECADE.match(got)
            return m is not None and m.group(1) == "19" and expected == m.group(2)
        return m.group(1) == "19" and got == m.group(2)
    n = len(expected)
    if n <= 3:
        return False  # short words must be exact: the rules below take four letters or more
    if expected[:3] == got[:3] and len(got) >= 4 and same_verb(expected, got):
        return True  # (same_verb is False for shorter words: the test saves a call)
    if (got[-1:] == "e" or expected[-1] == "e") and abs(n - len(got)) == 1 and _silent_e(expected, got):
        return True  # n >= 5 follows: the shorter word has four letters or more
    if n <= 4 or abs(n - len(got)) > 3 or not expected.isalpha() or not got.isalpha():
        return False  # short words, numbers and codes must be exact
    if Levenshtein.distance(expected, got, score_cutoff=n // 2) > n // 2:
        return False  # far apart: no rule below can bring them together
    if n <= 8:
        if _transposed(expected, got) or (n > 5 and _one_indel(expected, got)):
            return True
        if n == 8 and _vowel_slip(expected, got):
            return not _confusable(expected, got)
        if n >= 6 and _final_syllable_vowel(expected, got):
            return not _confusable(expected, got)
    else:
        k = 1 if n <= 10 else 2 if n <= 15 else 3
        d = OSA.distance(expected, got, score_cutoff=k + 1)
        if d <= k:
            return not _confusable(expected, got)
        if d == k + 1 and expected[0] == got[0] and _line_metaphone(expected) == jellyfish.metaphone(got):
            # one edit more than the length allows, but it sounds the same (Rakhmaninov, fotosynthesis)
            return not _confusable(expected, got)
    return _line_phonetic(expected) == phonetic(got)


def similarity(a: str, b: str) -> float:
    """Raw 0..1 similarity of two words, reported in ``Ruling.score``; not used to decide."""
    return Levenshtein.normalized_similarity(a, b)


# Pairs of words that tell two members of one family or series apart; an answer with one where the
# line has the other names the other one ("Pliny the Younger", "Bruegel the Younger", "Lesser Antilles").
_OPPOSITES = {
    a: b
    for x, y in (
        ("elder", "younger"),
        ("senior", "junior"),
        ("major", "minor"),
        ("greater", "lesser"),
        ("upper", "lower"),
    )
    for a, b in ((x, y), (y, x))
}


def contradicts(given: tuple[str, ...], line_words: frozenset[str]) -> bool:
    """Does the answer hold the opposite of a word of the entry, and not the word itself?"""
    for g in given:
        other = _OPPOSITES.get(g)
        if other is not None and other in line_words and g not in line_words:
            return True
    return False


_DERIVATIONS = ("ion", "ation", "ition", "ment", "ing", "ed", "er", "al", "ance", "ence", "ism", "ist", "ity")


@lru_cache(maxsize=16384)
def derived_form(expected: str, got: str) -> bool:
    """Is ``got`` a derived form of ``expected`` (migrate -> migration, govern -> government,
    dance -> dancing), or the reverse? Used only where a line says "accept word forms"."""
    if min(len(expected), len(got)) < 4 or expected == got:
        return expected == got
    short, long_ = (expected, got) if len(expected) <= len(got) else (got, expected)
    stem = short[:-1] if short[-1] in "aeiouy" else short
    if len(stem) < 4 or not long_.startswith(stem):
        return False
    return long_[len(stem) :] in _DERIVATIONS or any(
        long_[len(stem) :].endswith(d) and len(long_) - len(stem) <= len(d) + 2 for d in _DERIVATIONS
    )


@dataclass(slots=True)
class Cover:
    """How much of one entry's required words a given answer contains."""

    matched: list[bool]
    sims: list[float]
    used: set[int]

    @property
    def count(self) -> int:
        return sum(self.matched)

    @property
    def complete(self) -> bool:
        return all(self.matched)

    @property
    def score(self) -> float:
        got = [s for s, m in zip(self.sims, self.matched, strict=True) if m]
        return sum(got) / len(self.sims) if self.sims else 0.0


def cover(
    required: tuple[str, ...],
    given: tuple[str, ...],
    given_set: frozenset[str],
    prefixes: frozenset[str] = frozenset(),
) -> Cover:
    """Align each required word with a distinct word of the answer (any order).

    Exact words first, then fuzzy ones, then words written together or apart ("Spider-Man" vs
    "Spiderman", "J R R" vs "JRR"), so that a fuzzy match cannot steal a word an exact one needs.
    """
    n = len(required)
    matched = [False] * n
    sims = [0.0] * n
    used: set[int] = set()
    pending = []
    for i, r in enumerate(required):
        if r in given_set:
            for j, g in enumerate(given):
                if g == r and j not in used:
                    used.add(j)
                    matched[i] = True
                    sims[i] = 1.0
                    break
            else:
                pending.append(i)
        else:
            pending.append(i)
    if not pending:
        return Cover(matched, sims, used)
    for i in pending:
        r = required[i]
        for j, g in enumerate(given):
            if j not in used and (token_match(r, g) or (r in prefixes and g.startswith(r))):
                used.add(j)
                matched[i] = True
                sims[i] = similarity(r, g)
                break
    if all(matched):
        return Cover(matched, sims, used)
    # written together / apart (a one-word side has nothing to join: the loops below would not run)
    m = len(given)
    for i in range(n) if m > 1 else ():
        if matched[i]:
            continue
        r = required[i]
        for j in range(m):
            if j in used:
                continue
            joined = given[j]
            for k in range(j + 1, min(j + 5, m)):
                if k in used:
                    break
                joined += given[k]
                if len(joined) > len(r) + 3:
                    break
                if token_match(r, joined):
                    used.update(range(j, k + 1))
                    matched[i] = True
                    sims[i] = similarity(r, joined)
                    break
            if matched[i]:
                break
    for j in range(m) if n > 1 else ():
        if j in used:
            continue
        g = given[j]
        for i in range(n):
            if matched[i]:
                continue
            joined = required[i]
            for k in range(i + 1, min(i + 5, n)):
                if matched[k]:
                    break
                joined += required[k]
                if len(joined) > len(g) + 3:
                    break
                if token_match(joined, g):
                    for x in range(i, k + 1):
                        matched[x] = True
                        sims[x] = similarity(joined, g)
                    used.add(j)
                    break
            if j in used:
                break
    return Cover(matched, sims, used)


def best_similarity(required: tuple[str, ...], given: tuple[str, ...]) -> float:
    """Mean over required words of the best raw similarity to any given word: the score of a reject."""
    if not required or not given:
        return 0.0
    sim = Levenshtein.normalized_similarity  # similarity(), without a Python call per pair
    return sum([max([sim(r, g) for g in given]) for r in required]) / len(required)


def best_of_similarities(requireds: list[tuple[str, ...]], given: tuple[str, ...]) -> float:
    """The highest :func:`best_similarity` of several entries' required words, 0.0 for none (the
    score of a no_match). The same value, worked out once per distinct word: alternatives of one
    line share most of their words."""
    if not given:
        return 0.0
    sim = Levenshtein.normalized_similarity
    best: dict[str, float] = {}
    top = 0.0
    for required in requireds:
        if not required:
            continue
        for r in required:
            if r not in best:
                best[r] = sim(r, given[0]) if len(given) == 1 else max([sim(r, g) for g in given])
        value = sum([best[r] for r in required]) / len(required)
        if value > top:
            top = value
    return top


def within(given: tuple[str, ...], words: frozenset[str], ignore: frozenset[str]) -> bool:
    """Is every word of the answer (``ignore`` aside) one of ``words``, allowing misspellings?

    A partial answer earns a prompt (or the surname rule) only when it says nothing the
    alternative does not: "Washington" may be short for "Washington, D.C.", "George Washington" is
    not. Initials of the alternative's words count as its words ("J. W. von Goethe").
    """
    initials = None
    for g in given:
        if g in words or g in ignore:
            continue
        if len(g) <= 3 and g.isalpha():
            if initials is None:
                initials = {w[0] for w in words}
            if all(ch in initials for ch in g):
                continue
        if not any(token_match(w, g) for w in words):
            return False
    return True
