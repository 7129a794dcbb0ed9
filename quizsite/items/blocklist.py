"""Words that are never a Ghigliottina distractor: vulgar or offensive ones (crowd workers and players see
every choice, and a crowd platform's terms may forbid such words).

The default source is the `glin-profanity` package (MIT, maintained; its word lists ship in the wheel, so
this works offline): its Italian list, LDNOOBW's Italian list (CC BY 4.0) with a few additions, and its
English list, since wordfreq's Italian vocabulary carries English loanwords (porno, sex, fuck). Only single
words count: the lists' phrases ("porca miseria") can never be a one-word choice.

The lists give whole words, not stems. A candidate is blocked when, lowercased, it is a listed word or,
for an Italian entry, one of its inflections: a noun's or adjective's plural (`plurals`: cazzo/cazzi,
puttana/puttane, coglione/coglioni, -co/-chi, -ca/-che) or a verb's past participle (`participles`:
fottere/fottuto, scopare/scopata). There is no prefix or substring match (monta is listed, montagna is
not vulgar; nor are segale, ballerina or classe) and no change of gender (fica is listed, fico is a fig;
tette and tetto, topa and topo). A plural ten times as frequent as its listed word, and common (Zipf 3 or
more: HOMOGRAPH_ZIPF, HOMOGRAPH_MIN_ZIPF), is another word spelt the same and stays a candidate: the
plural of monta (a mating) is monte, far more often a mountain. English entries match only as they are.

LDNOOBW also lists words that are innocent in most uses (duro, pesce, regina, venire, carità): they and
their forms are left out too (about 100 of the 15,000 candidates are blocked, some 40 of them innocent:
a small cost). The `blocklist` import option (`--blocklist`), else the GHIGLIOTTINA_BLOCKLIST setting or
environment variable, names the sources: a comma-separated list of `glin-profanity` (the default), paths of
text files of Italian words (white-space separated, `#` comments), or `none` alone (no filter). Words are
read in order; a word written `-word` takes back the word and every form of it (as above) that the words
before it blocked, whichever word listed them: `-cazzo` takes back cazzo and cazzi, `-cazzi` cazzi alone,
`-scopare` scopare and scopato/a/i/e (scopata too, though listed on its own: list it again after the
`-word` to keep it). A word listed after its `-word` is blocked again.
"""

from __future__ import annotations

import os
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from quizsite.items.textfiles import decode_utf8

DEFAULT = "glin-profanity"
NONE = "none"
PACKAGE_LANGUAGES = {"italian": True, "english": False}  # language -> whether Italian inflections apply
# A plural this many Zipf units (1.0: ten times) more frequent than its listed word, and at least
# HOMOGRAPH_MIN_ZIPF, is another word spelt the same (monta, 3.7; monte, 4.8), not a form of it.
HOMOGRAPH_ZIPF = 1.0
HOMOGRAPH_MIN_ZIPF = 3.0

_PLURALS = (
    ("io", ("i",)),
    ("co", ("chi", "ci")),
    ("go", ("ghi", "gi")),
    ("ca", ("che",)),
    ("ga", ("ghe",)),
    ("cia", ("ce", "cie")),
    ("gia", ("ge", "gie")),
    ("o", ("i",)),
    ("a", ("e",)),
    ("e", ("i",)),
)
_PARTICIPLES = {"are": "at", "arsi": "at", "ere": "ut", "ersi": "ut", "ire": "it", "irsi": "it"}


def fold(word: str) -> str:
    """The form words are compared in: stripped, lowercase, NFC (accents kept: durò is not duro)."""
    return unicodedata.normalize("NFC", word.strip().lower())


def plurals(word: str) -> set[str]:
    """A listed Italian noun's or adjective's plural(s): cazzo/cazzi, troia/troie, coglione/coglioni,
    finocchio/finocchi, fica/fiche, bagascia/bagasce; none for an infinitive (battere is no noun: batteri
    are bacteria)."""
    if participles(word):
        return set()
    for end, endings in _PLURALS:
        if word.endswith(end) and len(word) > len(end) + 1:
            return {word[: -len(end)] + e for e in endings} - {word}
    return set()


def participles(word: str) -> set[str]:
    """A listed Italian verb's past participle in its four forms (scopare: scopato, scopata, scopati,
    scopate; fottersi: fottuto ...); nothing for a word that is not an infinitive."""
    for end, stem_end in _PARTICIPLES.items():
        if word.endswith(end) and len(word) > len(end) + 1:
            return {word[: -len(end)] + stem_end + g for g in "oaie"}
    return set()


@lru_cache(maxsize=1)
def _package_words() -> tuple[str, tuple[tuple[str, bool], ...]]:
    """(label, [(word, Italian?)]) from glin-profanity's dictionaries."""
    import glin_profanity
    from glin_profanity.data.dictionary import DictionaryLoader

    loader = DictionaryLoader()
    words: list[tuple[str, bool]] = []
    for language, italian in PACKAGE_LANGUAGES.items():
        listed = loader.get_words(language)
        if not listed:  # the loader prints a warning and returns nothing when its file is missing
            raise ValueError(f"glin-profanity {glin_profanity.__version__} has no {language} word list")
        words.extend((w, italian) for w in listed)
    return f"glin-profanity {glin_profanity.__version__} (italian, english)", tuple(words)


def _file_words(path: Path) -> list[str]:
    """The words of a blocklist file; bad bytes are an ImportError_ (a ValueError) naming this file and line."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"blocklist {path}: {exc.strerror or exc}") from None
    text = decode_utf8(path, data)
    return [w for line in text.splitlines() for w in line.split("#", 1)[0].split()]


def forms(word: str, italian: bool) -> set[str]:
    """What listing `word` blocks, and what `-word` takes back: the word (folded) and, for an Italian
    word, its plurals, unless a plural is a far more frequent word of its own (HOMOGRAPH_ZIPF), and its
    past participles."""
    from wordfreq import zipf_frequency

    word = fold(word)
    found = {word}
    if italian:
        ceiling = max(zipf_frequency(word, "it") + HOMOGRAPH_ZIPF, HOMOGRAPH_MIN_ZIPF)
        found.update(f for f in plurals(word) if zipf_frequency(f, "it") < ceiling)
        found.update(participles(word))
    return found


def _single(word: str) -> bool:
    """Only single words can be a one-word choice: the lists' phrases and stray marks are skipped."""
    return bool(word) and word.isalpha()


@dataclass(frozen=True)
class Blocklist:
    """The words (and their forms) that are never a distractor. `label` names the sources for the report
    and the items; `listed` is the number of single words the sources gave, less those taken back."""

    label: str
    blocked: frozenset[str] = field(default_factory=frozenset)
    listed: int = 0

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and fold(word) in self.blocked

    def __bool__(self) -> bool:
        return bool(self.blocked)


class _Builder:
    """Words are read in order: a word adds its forms, `-word` then takes back the word and its forms,
    whoever listed them (subtracting after the expansion is what makes `-cazzo` take back cazzi too, and
    `-cazzi` take back that plural alone); a word listed later is blocked again."""

    def __init__(self) -> None:
        self.listed: dict[str, bool] = {}
        self.blocked: set[str] = set()

    def add(self, word: str, italian: bool) -> None:
        word = fold(word)
        if _single(word):
            self.listed[word] = self.listed.get(word, False) or italian  # in both lists: the Italian forms too
            self.blocked |= forms(word, italian)

    def remove(self, word: str) -> None:
        word = fold(word)
        if _single(word):
            gone = forms(word, True)  # a file's words are Italian
            self.blocked -= gone
            self.listed = {w: it for w, it in self.listed.items() if w not in gone}

    def build(self, label: str) -> Blocklist:
        return Blocklist(label, frozenset(self.blocked), len(self.listed))


def configured() -> str:
    """The sources named by the GHIGLIOTTINA_BLOCKLIST setting (settings/base.py reads it from the
    environment), else DEFAULT. Without Django settings (plain library use) the environment variable is
    read directly, so the module works outside the site too."""
    from django.conf import settings

    value = settings.GHIGLIOTTINA_BLOCKLIST if settings.configured else os.environ.get("GHIGLIOTTINA_BLOCKLIST", "")
    return value or DEFAULT


def blocklist_open(spec: str | None = None) -> Blocklist:
    """The blocklist that `spec` names (see the module doc); None or "" -> `configured()`. Files are read
    on each call (the package's lists once). Raises ValueError for a missing file or an unknown name, and its
subclass ImportError_ (file:line) for a file that is not UTF-8."""
    spec = (spec or configured()).strip()
    parts = [p.strip() for p in spec.split(",") if p.strip()]
    if not parts:
        raise ValueError(f"blocklist {spec!r} names no source")
    if parts == [NONE]:
        return Blocklist(NONE)
    builder = _Builder()
    labels: list[str] = []
    for part in parts:
        if part == DEFAULT:
            label, words = _package_words()
            for word, italian in words:
                builder.add(word, italian)
        elif part == NONE:
            raise ValueError(f"blocklist {spec!r}: {NONE!r} only stands alone")
        else:
            path = Path(part)
            if not path.is_file():
                raise ValueError(f"blocklist {part!r}: not {DEFAULT!r}, {NONE!r} or a file of words")
            label = path.name
            for word in _file_words(path):
                if word.startswith("-"):
                    builder.remove(word[1:])
                else:  # a file's words are Italian: their inflections are blocked too
                    builder.add(word, True)
        labels.append(label)
    return builder.build(" + ".join(labels))
