"""Text normalisation shared by the answer-line parser and the judge.

Both sides of a comparison (the line's alternatives and what a player typed) go through
:func:`normalize` so that every rule is symmetric: whatever is done to "Henry VIII" is also done to
"henry the eighth", and the two meet at ``("henry", "8")``. The rules are the quizbowl ones that a
moderator applies without thinking: case, accents, punctuation, articles, plurals, spelled-out and
Roman numbers, ordinals and a short list of standard abbreviations; any script is romanised
(anyascii: Москва -> moskva), apostrophes inside a word dropped (Qur'an -> quran, Hawaiʻi ->
hawaii), irregular plurals made singular (lemminflect: geese -> goose) and decades in words written
as digits (the sixties -> 60s).

Nothing here caches on the player's whole text: the judge is benchmarked as if every given answer
were new. Single words are cached (the stemmer and its dictionary look-ups), as a running game's
answers share most of their words; the line side is cached one level up, by the answer-line parser.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from anyascii import anyascii
from lemminflect import getAllLemmas

# How much of a player's text is read at all. Anything longer is not an answer, and capping it keeps
# the worst case of every regex and every alignment bounded.
MAX_GIVEN_CHARS = 500

# Words that carry no identity of their own: never required, and never enough for a partial credit.
STOPWORDS = frozenset(
    "of and in on at to for by with from de du des la le les el los las von van der den di da "
    "del della dei degli delle il lo gli y e et und al".split()
)

# Leading articles dropped from the start of any text (English and Italian, as the brief asks).
LEADING_ARTICLES = frozenset("the a an il lo la i gli le l un uno una".split())

# Letters that NFKD does not decompose, and symbols worth a word.
_GREEK = {
    "α": "alpha",
    "β": "beta",
    "γ": "gamma",
    "δ": "delta",
    "ε": "epsilon",
    "ζ": "zeta",
    "η": "eta",
    "θ": "theta",
    "ι": "iota",
    "κ": "kappa",
    "λ": "lambda",
    "μ": "mu",
    "ν": "nu",
    "ξ": "xi",
    "ο": "omicron",
    "π": "pi",
    "ρ": "rho",
    "σ": "sigma",
    "ς": "sigma",
    "τ": "tau",
    "υ": "upsilon",
    "φ": "phi",
    "χ": "chi",
    "ψ": "psi",
    "ω": "omega",
}
_CHAR_MAP: dict[int, str] = {ord(k): f" {v} " for k, v in _GREEK.items()}
_CHAR_MAP.update({ord(k.upper()): f" {v} " for k, v in _GREEK.items() if k != "ς"})
_CHAR_MAP.update(
    {
        ord(k): v
        for k, v in {
            "ß": "ss",
            "æ": "ae",
            "Æ": "ae",
            "œ": "oe",
            "Œ": "oe",
            "ø": "o",
            "Ø": "o",
            "đ": "d",
            "Đ": "d",
            "ł": "l",
            "Ł": "l",
            "ı": "i",
            "þ": "th",
            "Þ": "th",
            "ð": "d",
            "Ð": "d",
            "’": "'",
            "‘": "'",
            "ʼ": "'",
            "ʻ": "'",  # the Hawaiian okina (Hawaiʻi)
            "ʿ": "'",  # ayin and hamza in transliterated Arabic (Kaʿba, Qurʾān)
            "ʾ": "'",
            "`": "'",
            "´": "'",
            "′": "'",
            "–": "-",
            "—": "-",
            "‐": "-",
            "‑": "-",
            "&": " and ",
            "+": " plus ",
        }.items()
    }
)

# U.S.S.R., D.C., J. R. R. -> ussr, dc, jrr (two or more initials; a single "F." stays a letter).
_DOTTED = re.compile(r"(?<![a-z0-9])[a-z](?:\.\s?[a-z])+\.?(?![a-z0-9])")
_POSSESSIVE = re.compile(r"(?<=[a-z0-9])'s\b")
_DECADE_APOSTROPHE = re.compile(r"(?<=\d0)'s\b")
_ELISION = re.compile(r"\b([a-z]+)'(?=[a-z])")
# Elided articles and prepositions (French l', d', qu'; Italian dell', nell', all'): a word break.
# Any other apostrophe inside a word marks a glottal stop or a lost letter (Qur'an, Hawai'i,
# rock'n'roll) and is dropped, so "Qur'an" meets "Quran".
_ELIDED = frozenset("l d j m n s t c qu un gl dell nell dall sull all quell coll quest sant bell".split())
_CELTIC = re.compile(r"\b([od])'(?=[a-z])")  # O'Keeffe, D'Artagnan: one name, not an elision
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_DECIMAL_COMMA = re.compile(r"(?<=\d),(?=\d)")
_SLASH = re.compile(r"(?<!\d)/|/(?!\d)")
_GREEK_WORD = re.compile(r"[\u0370-\u03ff\u1f00-\u1fff]{2,}")
_TOKEN = re.compile(r"\d+(?:\.\d+)+|[^\W_]+")
_ORDINAL_DIGITS = re.compile(r"^(\d+)(?:st|nd|rd|th)$")
_ROMAN = re.compile(r"^(?=[ivx]+$)(x{0,3})(ix|iv|v?i{0,3})$")
_ROMAN_VALUES = {"i": 1, "v": 5, "x": 10}

_UNITS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
_TENS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fourty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_ORDINAL_WORDS = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
    "eleventh": 11,
    "twelfth": 12,
    "thirteenth": 13,
    "fourteenth": 14,
    "fifteenth": 15,
    "sixteenth": 16,
    "seventeenth": 17,
    "eighteenth": 18,
    "nineteenth": 19,
    "twentieth": 20,
    "thirtieth": 30,
    "fortieth": 40,
    "fiftieth": 50,
    "sixtieth": 60,
    "seventieth": 70,
    "eightieth": 80,
    "ninetieth": 90,
    "hundredth": 100,
    "thousandth": 1000,
}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
_NUMBER_WORDS = frozenset(_UNITS) | frozenset(_TENS) | frozenset(_ORDINAL_WORDS) | frozenset(_SCALES)

# Words the plural stemmer must leave alone (they end in s but are not plurals, or stem badly).
_NO_STEM = frozenset("has was is this thus us yes gas bus plus versus its series species news".split())

# Abbreviations and aliases: each left side is rewritten to the right side, after the other rules
# ran on both (so the table is written in plain words and compiled through the same pipeline).
_ALIASES_SOURCE = {
    "ussr": "soviet union",
    "union of soviet socialist republics": "soviet union",
    "wwii": "world war 2",
    "ww2": "world war 2",
    "ww 2": "world war 2",
    "second world war": "world war 2",
    "wwi": "world war 1",
    "ww1": "world war 1",
    "ww 1": "world war 1",
    "first world war": "world war 1",
    "great war": "world war 1",
    "deoxyribonucleic acid": "dna",
    "ribonucleic acid": "rna",
    "adenosine triphosphate": "atp",
    "us": "united states",
    "usa": "united states",
    "united states of america": "united states",
    "uk": "united kingdom",
    "united kingdom of great britain and northern ireland": "united kingdom",
    "nyc": "new york city",
    "district of columbia": "dc",
    "eu": "european union",
    "uae": "united arab emirates",
    "prc": "people republic of china",
    "st": "saint",
    "ste": "sainte",
    "mt": "mount",
    "mts": "mountains",
    "ft": "fort",
    "dr": "doctor",
    "mr": "mister",
    "jr": "junior",
    "sr": "senior",
    "prof": "professor",
    "vs": "versus",
    "jfk": "john f kennedy",
    "fdr": "franklin delano roosevelt",
    "lbj": "lyndon b johnson",
    "mlk": "martin luther king",
    "fed": "federal reserve",  # Merriam-Webster: "Fed", short for the Federal Reserve (System)
    "koran": "quran",  # the older English spelling (Oxford English Dictionary lists both)
}


# The ASCII characters _CHAR_MAP rewrites: only text with one of them (or non-ASCII) is translated,
# as translating other ASCII text changes nothing and costs a dictionary look-up per character.
assert {chr(k) for k in _CHAR_MAP if k < 128} == {"&", "+", "`"}, "update _fold's test"


def _fold(text: str) -> str:
    """Characters only: special letters, accents (NFKD minus combining marks), case, punctuation
    that changes word boundaries. Returns text ready for tokenising."""
    if not text.isascii():
        # A Greek word is transliterated (Ἀθῆναι -> Athinai); a lone letter is named (α -> alpha).
        text = _GREEK_WORD.sub(lambda m: anyascii(m.group(0)), text)
    if "&" in text or "+" in text or "`" in text or not text.isascii():
        text = text.translate(_CHAR_MAP)
    if not text.isascii():
        text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
        if not text.isascii():
            # Cyrillic, CJK, Arabic...: the standard romanisation, so that an ASCII answer can meet
            # a line written in any script (Москва -> Moskva).
            text = anyascii(text)
    text = text.casefold()
    if "." in text:
        text = _DOTTED.sub(lambda m: m.group(0).replace(".", "").replace(" ", "") + " ", text)
    if "'" in text:
        text = _DECADE_APOSTROPHE.sub("s", text)  # "the 1960's", "1800's": a plural, not a possessive
        text = _POSSESSIVE.sub("", text)
        text = _CELTIC.sub(r"\1", text)
        text = _ELISION.sub(lambda m: m.group(1) + (" " if m.group(1) in _ELIDED else ""), text)
        # what is left is a stray or accent apostrophe (caffe' for caffè): drop it
    if "," in text:
        text = _THOUSANDS.sub("", text)
        text = _DECIMAL_COMMA.sub(".", text)
    if "/" in text:
        # A slash in running text offers alternatives ("Monet/Manet"); in a fraction it does not.
        text = _SLASH.sub(" or ", text)
    return text


def _numbers(tokens: list[str]) -> list[str]:
    """Spelled-out numbers and ordinals to digits: "thirty-six" -> 36, "eighth" -> 8,
    "nineteen eighty-four" -> 1984, "21st" -> 21. Runs of number words are read as one number."""
    out: list[str] = []
    i, n = 0, len(tokens)
    while i < n:
        tok = tokens[i]
        m = _ORDINAL_DIGITS.match(tok)
        if m:
            out.append(str(int(m.group(1))))
            i += 1
            continue
        if tok not in _NUMBER_WORDS:
            out.append(tok)
            i += 1
            continue
        total, current, started, ended = 0, 0, False, False
        while i < n and not ended:
            w = tokens[i]
            if w in _SCALES:
                scale = _SCALES[w]
                current = current or 1  # "a hundred", "thousand"
                if scale == 100:
                    current *= 100
                else:
                    total += current * scale
                    current = 0
            elif w in _UNITS or w in _TENS or w in _ORDINAL_WORDS:
                v = _UNITS.get(w, 0) or _TENS.get(w, 0) or _ORDINAL_WORDS.get(w, 0)
                ended = w in _ORDINAL_WORDS
                if ended and v >= 100:  # hundredth, thousandth
                    current = (current or 1) * v
                elif not started or current == 0:
                    current = v
                elif v < 10 and current % 10 == 0 and current % 100 != 0:
                    current += v  # twenty one
                elif v < 100 and current % 100 == 0:
                    current += v  # one hundred twenty
                elif 10 <= current < 100 and 10 <= v < 100:
                    current = current * 100 + v  # nineteen eighty(-four): a year
                else:
                    break  # "one two": two numbers, the second starts afresh
            elif w == "and" and started and current >= 100 and i + 1 < n and tokens[i + 1] in _NUMBER_WORDS:
                pass  # one hundred and one
            else:
                break
            started = True
            i += 1
        out.append(str(total + current))
    return out


def _roman(tok: str) -> str | None:
    """Value of a small Roman numeral made of i, v, x (1..39), as regnal numbers and wars use."""
    if not _ROMAN.match(tok):
        return None
    total, prev = 0, 0
    for ch in reversed(tok):
        v = _ROMAN_VALUES[ch]
        total = total - v if v < prev else total + v
        prev = max(prev, v)
    return str(total)


# Decades in words: "the sixties" is written "60s", as a player types it.
_DECADE_WORDS = {w[:-1] + "ies": f"{v}s" for w, v in _TENS.items() if w != "fourty"}


def _centuries(tokens: list[str]) -> list[str]:
    """ "nineteen seventies" -> "1970s": a century number before a decade word joins it."""
    out: list[str] = []
    for tok in tokens:
        if tok in _DECADE_WORDS and out and out[-1] in ("18", "19", "20"):
            out[-1] += _DECADE_WORDS[tok]
        else:
            out.append(tok)
    return out


@lru_cache(maxsize=65536)
def _irregular_singular(tok: str) -> str | None:
    """The singular of an irregular plural (geese, criteria, cacti, phenomena) from lemminflect's
    dictionary; None for regular plurals and for words it does not know (names)."""
    if tok in _MISSING_IRREGULAR:
        return _MISSING_IRREGULAR[tok]
    lemmas = getAllLemmas(tok, "NOUN").get("NOUN")
    if not lemmas:
        return None
    if tok in lemmas:
        # lemminflect lists a Latin neuter plural as a lemma of its own beside its singular
        # (bacteria: bacterium, bacteria; media: medium, media). Only the -um/-a pair of that
        # declension is taken: its other doublets are different words (opera/opus, stamina/stamen).
        return next((lemma for lemma in lemmas if lemma.endswith("um") and lemma[:-2] + "a" == tok), None)
    return lemmas[0]


# Irregular plurals lemminflect's dictionary lacks (checked: getAllLemmas("oxen") is empty); the
# singulars are Merriam-Webster's.
_MISSING_IRREGULAR = {"oxen": "ox", "brethren": "brother"}


@lru_cache(maxsize=65536)
def _ves_ices_singular(tok: str) -> str | None:
    """The singular of "-ves" and "-ices" plurals (calves, knives, indices, vertices) where the
    dictionary has one ending in f/fe/x: the light stemmer would make "calve" and "indice"."""
    for lemma in getAllLemmas(tok, "NOUN").get("NOUN", ()):
        if lemma != tok and lemma.endswith(("f", "fe", "x")):
            return lemma
    return None


@lru_cache(maxsize=65536)
def _s_plural_singular(tok: str) -> str | None:
    """The singular of a plural the light stemmer cannot see: "-es" after a word ending in s
    (viruses, lenses, rhinoceroses: it would make "viruse") and "-s" after one ending in u (emus,
    menus: "-us" is left alone for cactus), where lemminflect's dictionary has that singular. The
    Greek "-is"/"-es" pairs are not of this form, so Metamorphoses (Ovid) stays apart from The
    Metamorphosis (Kafka); the singular is then stemmed like any word, so both sides meet."""
    for lemma in getAllLemmas(tok, "NOUN").get("NOUN", ()):
        if (tok == lemma + "es" and lemma.endswith("s")) or (tok == lemma + "s" and lemma.endswith("u")):
            return lemma
    return None


@lru_cache(maxsize=65536)
def _stem(tok: str) -> str:
    """Plural and possessive endings off, so that "Rockies" meets "Rocky" and "faults" meets "fault".
    Deliberately light: a wrong stem on both sides is harmless, a heavy stemmer merges real words.
    Irregular plurals (geese, phenomena, children) go to their dictionary singular. Cached per
    word, as the dictionary look-ups below already are: a pure function of one word, and players'
    words repeat (a game's answers share most of theirs)."""
    if len(tok) < 3 or not tok.isalpha() or tok in _NO_STEM:
        return tok
    if tok in _DECADE_WORDS:
        return _DECADE_WORDS[tok]
    if not tok.endswith("s"):  # not -ses: Metamorphoses (Ovid) is not The Metamorphosis (Kafka)
        singular = _irregular_singular(tok)
        if singular is not None:
            return singular
    if len(tok) < 4:
        return tok
    if tok.endswith(("ves", "ices")):
        singular = _ves_ices_singular(tok)
        if singular is not None:
            return singular
    if tok.endswith(("ses", "us")):
        singular = _s_plural_singular(tok)
        if singular is not None:
            return _stem(singular)
    if tok.endswith("ies") and len(tok) > 4:
        return tok[:-3] + "y"
    if tok.endswith(("sses", "xes", "ches", "shes", "zes")):
        return tok[:-2]
    if tok.endswith("s") and not tok.endswith(("ss", "us", "is")):
        return tok[:-1]
    return tok


def _hundreds(tokens: list[str]) -> list[str]:
    """ "19th century" -> "1800s", as players and lines write it either way (the 1800s are the
    nineteenth century to a moderator, the year 1900 aside). Only the 11th to the 20th century of
    the common era: "2000s" is a decade, and a century BC counts down."""
    out: list[str] = []
    for i, tok in enumerate(tokens):
        after = tokens[i + 1] if i + 1 < len(tokens) else ""
        if tok == "century" and out and out[-1].isdigit() and 11 <= int(out[-1]) <= 20 and after not in _BC:
            out[-1] = f"{int(out[-1]) - 1}00s"
        else:
            out.append(tok)
    return out


_BC = frozenset(("bc", "bce"))

# Words that only say "what follows is a number" (No., Nr., Number, as in opus and catalogue numbers).
_NUMBER_SIGNS = frozenset(("no", "nr", "number", "num"))


_DIGIT = re.compile(r"[0-9]")


def _base_tokens(text: str) -> list[str]:
    """Everything but the alias table: fold, tokenise, drop articles, numbers, Roman numerals, stem."""
    folded = _fold(text)  # ASCII throughout: anyascii has romanised the rest
    tokens = _TOKEN.findall(folded)
    if len(tokens) > 1 and tokens[0] in LEADING_ARTICLES:
        tokens = tokens[1:]
    if len(tokens) > 1 and "the" in tokens:
        tokens = [t for t in tokens if t != "the"] or tokens
    if not _NUMBER_WORDS.isdisjoint(tokens) or (
        _DIGIT.search(folded) and any(t[0].isdigit() for t in tokens)
    ):
        tokens = _numbers(tokens)
        if len(tokens) > 1 and any(t in _DECADE_WORDS for t in tokens):
            tokens = _centuries(tokens)
    if "century" in tokens:
        tokens = _hundreds(tokens)
    out: list[str] = []
    last = len(tokens) - 1
    for i, tok in enumerate(tokens):
        if tok in _NUMBER_SIGNS and i < last and (tokens[i + 1][:1].isdigit() or _roman(tokens[i + 1])):
            continue  # "Symphony No. 9" is "Symphony 9", so also "Ninth Symphony"
        if i > 0 and len(tok) <= 7:
            if tok == "v" and i < last and tokens[i + 1] != "of":
                out.append("versus")  # Roe v. Wade, but Henry V and Henry V of England
                continue
            r = _roman(tok) if tok[0] in "ivx" else None  # _ROMAN reads i, v, x only
            if r is not None:
                out.append(r)
                continue
        out.append(_stem(tok))
    return out


def _compile_aliases() -> tuple[re.Pattern[str], dict[str, str]]:
    table: dict[str, str] = {}
    for k, v in _ALIASES_SOURCE.items():
        key = " ".join(_base_tokens(k))
        table[key] = " ".join(_base_tokens(v))
    alternation = "|".join(re.escape(k) for k in sorted(table, key=len, reverse=True))
    return re.compile(rf"(?<!\S)(?:{alternation})(?!\S)"), table


_ALIAS_RE, _ALIASES = _compile_aliases()
_ALIAS_FIRST_WORDS = frozenset(k.split()[0] for k in _ALIASES)


def normalize(text: str) -> tuple[str, ...]:
    """Normalised tokens of any text (player's answer, alternative, directive item).

    Same input, same output: the judge relies on applying exactly this to both sides.
    """
    if not text:
        return ()
    tokens = _base_tokens(text)
    if not _ALIAS_FIRST_WORDS.isdisjoint(tokens):
        tokens = _ALIAS_RE.sub(lambda m: _ALIASES[m.group(0)], " ".join(tokens)).split()
    return tuple(tokens)


@lru_cache(maxsize=8192)
def normalize_cached(text: str) -> tuple[str, ...]:
    """:func:`normalize` for line-side text, which repeats (answer lines, question words)."""
    return normalize(text)


def simple_words(text: str) -> list[str]:
    """One folded string per whitespace-separated word, keeping positions: used to find a clue
    phrase inside the question text, where word counts must match the reader's ``word_index``."""
    return ["".join(_TOKEN.findall(_fold(w))) for w in text.split()]
