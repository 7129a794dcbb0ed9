"""Parse an answer line, in any of its three forms, into a structured :class:`AnswerLine`.

The forms (see shared/design/DATA.md):

* HTML: the required part is ``<b><u>…</u></b>``; bold alone counts as required when the line has
  no underline at all. Markdown-style ``__x__``/``_x_`` (underline) and ``**x**`` (bold), as the
  QANTA packets write them, are read the same way.
* Protobowl: required words in ``{braces}``.
* Plain text: alternatives split by ``/``, `` or `` and ``,``; no required markup.

Directives live in ``[...]`` or ``(...)``: ``accept``/``or``, ``prompt on`` (optionally directed
``by asking "…"``), ``do not accept``/``reject``, ``accept either``, ``prompt on partial answer``,
each optionally limited by ``before/after "…" is read``. Brackets that hold no directive (``Ali Baba
(and the 40 Thieves)``) are optional context, never required.

Parsing is the expensive part of judging and answer lines repeat (every buzz on a tossup judges
against the same line), so :func:`parse_answerline` is cached, and every alternative is stored
already normalised.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache

from lemminflect import getAllLemmas

from .names import EXONYMS, GIVEN_NAMES, TITLES
from .normalize import STOPWORDS, normalize, normalize_cached, simple_words

# Lines longer than this are not answer lines; capping keeps parsing bounded on hostile input.
MAX_LINE_CHARS = 5000

BOLD, UNDER, OPTIONAL = 1, 2, 4

# Words that name the kind of thing rather than the thing: a player may leave them out of an
# unmarked line ("Waterloo" for "Battle of Waterloo", "Fuji" for "Mount Fuji").
GENERIC_HEADS = frozenset(
    "battle siege treaty mount mountain lake river sea ocean island isle city machine experiment "
    "palace cathedral castle bay gulf desert canal strait peninsula cape volcano state province group "
    "dynasty empire caliphate sultanate shogunate".split()
)
# Titles and descriptions a player may put around a name, or leave out of an unmarked one, without
# saying anything else: "Chairman Mao", "King Henry", "the painter Monet", "John Paul II".
DESCRIPTORS = frozenset(
    "king queen emperor empress tsar czar sultan shah pharaoh pope saint sir prince princess "
    "duke general admiral president chairman chancellor prime minister senator governor doctor "
    "professor mister mrs ms painter composer author writer poet novelist playwright philosopher "
    "scientist physicist chemist biologist mathematician artist sculptor architect explorer".split()
)
# Generic heads that stand before the name without "of" ("Mount Fuji", "Lake Victoria").
_PREFIX_HEADS = frozenset("mount lake cape isle fort".split())
# Titles an unmarked line may lose from its front ("John Paul II" for "Pope John Paul II").
_FRONT_TITLES = frozenset(
    "pope saint sir king queen emperor empress tsar czar sultan shah pharaoh president".split()
)
_SUFFIX_WORDS = frozenset(("junior", "senior"))


def _core(required: tuple[str, ...]) -> tuple[str, ...]:
    """The words an answer must contain for an unmarked entry: all its content words except a
    generic head ("Battle of Waterloo", "Amazon River", "Mount Fuji"), a leading title and a
    trailing Jr./Sr. Position matters: "sea" is the head of "Sea of Japan", not of "sea level"."""
    idx = [i for i, t in enumerate(required) if t not in STOPWORDS]
    if len(idx) < 2:
        return tuple(required[i] for i in idx) or required
    # "Alexander III of Macedon", "Philip II of Spain": the place after a regnal number only tells
    # which kingdom; the name and number are the whole answer
    cut = next((i for i, t in enumerate(required[:-2]) if t[:1].isdigit() and required[i + 1] == "of"), None)
    if cut is not None and cut > 0:
        idx = [i for i in idx if i <= cut]
    first, last = idx[0], idx[-1]
    keep = []
    for i in idx:
        t = required[i]
        nxt = required[i + 1] if i + 1 < len(required) else ""
        prev = required[i - 1] if i > 0 else ""
        # "Amazon River", "Ming dynasty"; not "The Old Man and the Sea", "A Tale of Two Cities"
        at_end = i == last and prev not in STOPWORDS and not prev[:1].isdigit() and "of" not in required
        if t in GENERIC_HEADS and (at_end or (i == first and (t in _PREFIX_HEADS or nxt == "of"))):
            continue
        # a front title is dropped before a name ("Pope John Paul II"), not before "of": "Queen of
        # Carthage" and "Prince of Wales" name a person by a place, and the place is another answer
        if (i == first and t in _FRONT_TITLES and nxt != "of") or (i == last and t in _SUFFIX_WORDS):
            continue
        keep.append(t)
    return tuple(keep) or tuple(required[i] for i in idx)


# Words too common to deserve a prompt on their own when they are all a partial answer matched.
WEAK_WORDS = GENERIC_HEADS | frozenset(
    "valley hill road beach falls harbor harbour port forest park street square bridge tower wall "
    "station hall house museum garden pack movie film show game book prize award cup bowl "
    "mission program project festival "
    "new north south east west northern southern eastern western great little big old saint san "
    "santa united royal holy king queen war law effect theory theorem principle equation number day "
    "time man woman people party movement revolution act church school university college empire "
    "kingdom republic dynasty period age era style art music language system union".split()
)
# Given names as the normaliser leaves them ("thomas" -> "thoma"), to compare with entry words.
GIVEN_NAMES_FOLDED = frozenset(t for n in GIVEN_NAMES for t in normalize(n)[-1:])
_NAME_PARTICLES = frozenset("von van de da di du del der den la le bin ibn al y ben mac".split())


@dataclass(frozen=True)
class Condition:
    """``before``/``after`` a clue phrase is read. Judged only when the question text and the
    buzz position are known; otherwise the directive applies as if unconditional."""

    kind: str  # "before" | "after"
    phrase: str
    words: tuple[str, ...]

    def holds(self, question_text: str | None, word_index: int | None) -> bool:
        if not question_text or word_index is None or not self.words:
            return True
        qwords = _question_words(question_text)
        n = len(self.words)
        end = None
        for i in range(len(qwords) - n + 1):
            if qwords[i : i + n] == self.words:
                end = i + n  # the phrase counts as read once its last word is revealed
                break
        if end is None:
            return True
        read = word_index >= end
        return not read if self.kind == "before" else read


@lru_cache(maxsize=256)
def _question_words(question_text: str) -> tuple[str, ...]:
    return _phrase_words(question_text)


def _phrase_words(text: str) -> tuple[str, ...]:
    """Folded words, or the raw word where folding leaves nothing (the power mark ``(*)``)."""
    return tuple(f or w for f, w in zip(simple_words(text), text.split(), strict=False))


@dataclass(frozen=True)
class Entry:
    """One acceptable (or promptable, or rejected) answer, normalised once at parse time."""

    text: str  # as written, markup removed: what ``Ruling.matched`` shows
    full: tuple[str, ...]  # every word, optional context included
    required: tuple[str, ...]  # the required words, in order (stopwords kept, for exact keys)
    content: tuple[str, ...]  # required words, stopwords dropped
    core: tuple[str, ...]  # what an answer must contain: see _core for unmarked entries
    segments: tuple[tuple[str, ...], ...]  # separately marked required runs ("accept either")
    prefixes: frozenset[str]  # required words marked only in part: any word they begin will do
    explicit: bool  # markup or brackets say which part is required
    person_like: bool  # unmarked "First Last": the surname alone will do
    prompt_text: str = ""
    condition: Condition | None = None
    full_key: str = field(init=False)
    required_key: str = field(init=False)
    words: frozenset[str] = field(init=False)
    initialisms: frozenset[str] = field(init=False)  # "nafta", "un", "jfk": see _initialisms

    def __post_init__(self) -> None:
        object.__setattr__(self, "full_key", " ".join(self.full))
        object.__setattr__(self, "required_key", " ".join(self.required))
        object.__setattr__(self, "words", frozenset(self.full))
        object.__setattr__(self, "initialisms", _initialisms(self.required, self.full))

    def active(self, question_text: str | None, word_index: int | None) -> bool:
        return self.condition is None or self.condition.holds(question_text, word_index)


def _initialisms(required: tuple[str, ...], full: tuple[str, ...]) -> frozenset[str]:
    """What an answer written as initials may stand for: the underlined initials themselves
    ("<u>N</u>orth <u>A</u>merican ..." -> "nafta"), or the first letters of the content words of
    the required part or of the whole entry (United Nations -> "un", John F. Kennedy -> "jfk")."""
    out = set()
    if len(required) >= 2 and all(len(t) == 1 and t.isalpha() for t in required):
        out.add("".join(required))
    for words in (required, full):
        content = [t for t in words if t not in STOPWORDS and t not in _SUFFIX_WORDS]
        if len(content) >= 2 and all(t[0].isalpha() for t in content):
            out.add("".join(t[0] for t in content))
    # with the small words too, as many are written: "LA" (Los Angeles), "DoD" (Department of
    # Defense), "POW" (prisoner of war), "BoE" (Bank of England)
    if (
        2 <= len(required) <= 6
        and not STOPWORDS.isdisjoint(required)
        and all(t[0].isalpha() for t in required)
    ):
        out.add("".join(t[0] for t in required if t not in _SUFFIX_WORDS))
    return frozenset(out)


# Forms of address inside a required title that a player may leave out ("Strange Case of Jekyll
# and Hyde" for "Strange Case of Dr Jekyll and Mr Hyde"), as the normaliser spells them.
_DROPPABLE_ADDRESS = frozenset(("doctor", "mister", "professor", "mrs", "ms", "miss"))


@dataclass(frozen=True)
class AnswerLine:
    """Everything the judge needs from one line: what to accept, prompt and reject, and the
    line-wide directives."""

    raw: str
    accepts: tuple[Entry, ...]
    prompts: tuple[Entry, ...]
    rejects: tuple[Entry, ...]
    first_names: frozenset[str] = frozenset()  # given names the accepted answers spell out
    prompt_partial: bool = False  # "prompt on partial answer"
    accept_either: bool = False  # "accept either (underlined part / name)"
    no_partial: bool = False  # "do not accept or prompt on partial answers"
    equivalents: bool = False  # "accept equivalents": other-language names count (see names.EXONYMS)
    word_forms: bool = False  # "accept word forms" / "equivalents": derived forms (migration for migrate)
    initialisms: frozenset[str] = frozenset()  # every accept's initialisms, for a quick first test
    # Worked out once per parsed line, as the judge needs them for every answer to it: whether no
    # entry has a before/after condition (then every entry is active and the words below stand),
    # and the words of all accepts and of all prompts.
    unconditional: bool = field(init=False, repr=False, compare=False)
    accept_words: frozenset[str] = field(init=False, repr=False, compare=False)
    prompt_words: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        entries = self.accepts + self.prompts + self.rejects
        object.__setattr__(self, "unconditional", all(e.condition is None for e in entries))
        object.__setattr__(self, "accept_words", frozenset().union(*(e.words for e in self.accepts)))
        object.__setattr__(self, "prompt_words", frozenset().union(*(e.words for e in self.prompts)))


# --------------------------------------------------------------------------------------- markup

_MARKUP = re.compile(r"<\s*(/?)\s*([a-zA-Z][a-zA-Z0-9]*)[^>]*>|<!--.*?-->|\{|\}|\*\*|__|_", re.S)
_BREAK_TAGS = frozenset("br p div li tr td".split())


def _scan_markup(raw: str) -> tuple[str, list[int]]:
    """Flatten markup into plain text plus one flag per character (BOLD, UNDER)."""
    chars: list[str] = []
    flags: list[int] = []
    bold = under = 0
    md_bold = md_under = False
    pos = 0

    def add(text: str) -> None:
        if "&" in text:
            text = html.unescape(text)
        f = (BOLD if bold or md_bold else 0) | (UNDER if under or md_under else 0)
        chars.extend(text)
        flags.extend([f] * len(text))

    for m in _MARKUP.finditer(raw):
        s, e = m.span()
        if s > pos:
            add(raw[pos:s])
        pos = e
        tok = m.group(0)
        if m.group(2):
            name = m.group(2).lower()
            step = -1 if m.group(1) else 1
            if name in ("b", "strong"):
                bold = max(0, bold + step)
            elif name in ("u", "ins"):
                under = max(0, under + step)
            elif name in _BREAK_TAGS:
                add(" ")
        elif tok == "{":
            under += 1
        elif tok == "}":
            under = max(0, under - 1)
        elif tok == "**":
            md_bold = not md_bold
        elif tok in ("__", "_"):
            before = raw[s - 1] if s > 0 else " "
            after = raw[e] if e < len(raw) else " "
            if before.isalnum() and after.isalnum():
                add(tok)  # snake_case: a literal underscore
            else:
                md_under = not md_under
    if pos < len(raw):
        add(raw[pos:])
    return "".join(chars), flags


# ---------------------------------------------------------------------------------- directives

_KEYWORD = re.compile(
    r"""^[\s,:;.\-]*(?:
        (?P<reject>(?:but\s+)?(?:do\s+not|don'?t|never|not)\s+(?:accept|allow|take)
              (?:\s+or\s+(?:anti-?)?prompt(?:\s+on)?)?
          |(?:but\s+)?(?:do\s+not|don'?t|never)\s+prompt(?:\s+on)?(?:\s+or\s+accept)?
          |reject)
       |(?P<prompt>(?:also\s+|but\s+|and\s+)?(?:anti-?prompt|prompt)(?:\s+(?:on|for))?)
       |(?P<accept>(?:also\s+|but\s+|and\s+)?(?:accept|allow)|or|also)
    )(?![\w'])\s*:?\s*""",
    re.I | re.X,
)
_COND = re.compile(
    r"""(?:,\s*)?\b(?P<kind>before|after|until|once|following)\s+
        (?:(?:the\s+)?(?:mention|reading)\s+of\s+)?(?:the\s+(?:words?|phrases?|clues?)\s+)?
        (?:["“'‘](?P<quoted>[^"”’]+?)["”'’](?:\s+(?:is|are|has\s+been|have\s+been)\s+(?:read|mentioned|said|given|revealed))?
          |(?P<bare>[^;,"“”]+?)\s+(?:is|are|has\s+been|have\s+been)\s+(?:read|mentioned|said|given|revealed)\b)""",
    re.I | re.X,
)
_DIRECTED = re.compile(
    r"""[,;]?\s*(?:and\s+)?(?:by\s+asking|asking|ask|with|say(?:ing)?)\s*:?\s*
        (?:["“](?P<dq>[^"”]+)["”]|‘(?P<sq>[^’]+)’|'(?P<aq>[^']+[?.!]\s*)'|(?P<bare>(?<=asking\s)[^"“”;]+?\?))""",
    re.I | re.X,
)
_ASK_FOR = re.compile(r"[,;]?\s*(?:and\s+)?(?:ask(?:ing)?\s+for|request)\s+(?:a\s+|the\s+)?[^;]*$", re.I)
_EITHER = re.compile(
    r"^either(?:\s+(?:one|underlined|underlined\s+(?:part|portion|name|word|half|answer)s?|part|portion|"
    r"name|half|word|answer|of\s+(?:them|the\s+underlined\s+parts?|the\s+names?)|alone)s?)*\s*[.]?\s*$",
    re.I,
)
# "accept equivalents like tempest or squall", "accept descriptions such as jogging": the examples
# are accepted items ("accept descriptions of dust storms": what is described is one); the
# directive itself also marks the line as accepting equivalents.
_EQUIVALENTS_LIKE = re.compile(
    r"^(?:any\s+|reasonable\s+|other\s+|clear\s+)?(?:equivalents?|synonyms?|descriptions?|"
    r"answers?|translations?|word\s+forms?)\s+(?:like|such\s+as|e\.\s?g\.,?|including|as)\s+"
    r"|^(?:any\s+|reasonable\s+|clear\s+)?descriptions?\s+of\s+",
    re.I,
)
_WORD_FORMS = re.compile(r"\b(?:word\s+forms?|forms?|equivalents?)\b", re.I)
# "before/after mention", "until it is mentioned": the phrase is the item itself.
_MENTION = re.compile(
    r"(?:,\s*)?\b(?P<kind>before|after|until|once)\s+(?:it\s+is\s+|they\s+are\s+|its\s+|their\s+)?"
    r"mention(?:ed)?\b",
    re.I,
)
_EQUIVALENTS = re.compile(
    r"^(?:any\s+|reasonable\s+|other\s+|clear\s+)?(?:equivalents?|synonyms?|equivalent\s+answers?|"
    r"word\s+forms?|answers?\s+that\s+mention|translations?|foreign[- ]language|variants?|descriptions?)\b",
    re.I,
)
_PARTIAL = re.compile(
    r"^(?:on\s+)?(?:(?:a|any)\s+)?(?:partial|incomplete|less[- ]specific|more\s+general|broader|vaguer?|"
    r"last[- ]name|surname|first[- ]name)(?:\s+(?:answers?|names?|responses?|only|alone|equivalents?))*\s*$",
    re.I,
)
# Inside a list only the unambiguous keywords switch mode ("accept X, prompt on Y"): an item may
# well begin with "Take" or "Or" as part of a title.
_ITEM_KEYWORD = re.compile(
    r"""^\s*(?:
        (?P<reject>(?:but\s+)?(?:do\s+not|don'?t|never)\s+(?:accept|prompt)(?:\s+or\s+(?:accept|prompt))?(?:\s+on)?
          |reject)
       |(?P<prompt>(?:also\s+|but\s+|and\s+)?(?:anti-?)?prompt\s+(?:on|for))
       |(?P<accept>(?:also\s+|but\s+|and\s+)?accept)
    )(?![\w'])\s*:?\s*""",
    re.I | re.X,
)
_ITEM_SEP = re.compile(r"\s*,\s*(?:or\s+|and\s+)?|\s+or\s+|\s*/\s*")
_ITEM_TAIL = re.compile(r"\s+(?:alone|by\s+itself|only|on\s+(?:its|their)\s+own|etc\.?)\s*$", re.I)
_QUOTE_STRIP = " \t\n\"'“”‘’«».,:;!?*"
_PRONUNCIATION = re.compile(r"""^\s*["“'‘][^"”’]*["”'’]\s*$""")
_NOTE = re.compile(r"^\s*(?:note|moderators?|read|pronounced|pronunciation|the\s+answer)\b", re.I)


@dataclass
class _Builder:
    mark: int
    accepts: list[Entry] = field(default_factory=list)
    prompts: list[Entry] = field(default_factory=list)
    rejects: list[Entry] = field(default_factory=list)
    prompt_partial: bool = False
    accept_either: bool = False
    no_partial: bool = False
    equivalents: bool = False
    word_forms: bool = False

    def add(
        self,
        mode: str,
        text: str,
        flags: list[int],
        prompt_text: str,
        cond: Condition | None,
        mention: str = "",
        described: bool = False,
    ) -> None:
        if mention:  # "before/after mention": the clue phrase is the item itself
            phrase = text.strip(_QUOTE_STRIP)
            cond = Condition(
                "after" if mention in ("after", "once") else "before", phrase, _phrase_words(phrase)
            )
        entry = _entry(text, flags, self.mark, prompt_text=prompt_text, condition=cond)
        if entry is not None and described:
            entry = replace(entry, core=_described_core(entry.core))
        if entry is not None:
            {"accept": self.accepts, "prompt": self.prompts, "reject": self.rejects}[mode].append(entry)


def _described_core(core: tuple[str, ...]) -> tuple[str, ...]:
    """What a described thing requires: its nouns, verbs and numbers, not the adjectives that
    only qualify them ("dust storms on the Great Plains in the 1930s" describes the line's
    "severe dust storms ..."), where three words or more are left to say what is meant. Adjectives
    are the words lemminflect knows only as adjectives or adverbs."""
    kept = tuple(t for t in core if not qualifier_only(t))
    return kept if len(kept) >= 3 and len(kept) < len(core) else core


@lru_cache(maxsize=4096)
def qualifier_only(word: str) -> bool:
    """Is the word one lemminflect knows only as an adjective or adverb (severe, famous)?"""
    pos = getAllLemmas(word)
    return bool(pos) and set(pos) <= {"ADJ", "ADV"}


def _cut(text: str, flags: list[int], s: int, e: int) -> tuple[str, list[int]]:
    return text[:s] + " " + text[e:], flags[:s] + [0] + flags[e:]


def _parse_clause(text: str, flags: list[int], b: _Builder) -> None:
    """One ``;``-separated directive: keyword, items, optional condition and directed prompt."""
    cond = None
    mention = ""
    m = _MENTION.search(text)
    if m:
        mention = m.group("kind").lower()
        text, flags = _cut(text, flags, *m.span())
    m = _COND.search(text) if not mention else None
    if m:
        phrase = (m.group("quoted") or m.group("bare") or "").strip()
        kind = "after" if m.group("kind").lower() in ("after", "once", "following") else "before"
        if "(*)" in phrase or "power" in phrase.lower():
            phrase = "(*)"
        cond = Condition(kind, phrase, _phrase_words(phrase))
        text, flags = _cut(text, flags, *m.span())
    prompt_text = ""
    m = _DIRECTED.search(text)
    if m:
        prompt_text = (m.group("dq") or m.group("sq") or m.group("aq") or m.group("bare") or "").strip()
        text, flags = _cut(text, flags, *m.span())
    m = _ASK_FOR.search(text)
    if m:
        text, flags = _cut(text, flags, *m.span())

    m = _KEYWORD.match(text)
    if not m:
        return
    mode = m.lastgroup or "accept"
    start = m.end()
    rest = text[start:].strip()
    if mode == "accept" and _EITHER.match(rest):
        b.accept_either = True
        return
    if mode == "accept" and rest.lower().startswith("either "):
        start = text.lower().index("either", start) + len("either")
    like = _EQUIVALENTS_LIKE.match(rest) if mode == "accept" else None
    described = like is not None and "descript" in like.group(0).lower()
    if like:
        b.equivalents = True
        start = text.index(rest, start) + like.end()
    elif mode == "accept" and _EQUIVALENTS.match(rest):
        b.equivalents = True
        b.word_forms = b.word_forms or bool(_WORD_FORMS.search(rest))
        return
    if _PARTIAL.match(rest):
        if mode == "prompt":
            b.prompt_partial = True
        elif mode == "reject":
            b.no_partial = True
        return

    # Items: "X, Y, or Z"; an item may itself switch mode ("accept X, prompt on Y").
    pos = start
    pieces: list[tuple[int, int]] = []
    for sep in _ITEM_SEP.finditer(text, start):
        a, z = sep.span()
        comma = text.find(",", a, z)
        if comma >= 0 and flags[comma] & b.mark and z < len(text) and flags[z] & b.mark:
            continue  # a comma inside one marked title ("<u>Impression, soleil levant</u>")
        if sep.start() > pos:
            pieces.append((pos, sep.start()))
        pos = sep.end()
    if pos < len(text):
        pieces.append((pos, len(text)))
    for s, e in pieces:
        item, iflags = text[s:e], flags[s:e]
        km = _ITEM_KEYWORD.match(item)
        if km and km.lastgroup:
            mode = km.lastgroup
            item, iflags = item[km.end() :], iflags[km.end() :]
            if _PARTIAL.match(item.strip()):
                if mode == "prompt":
                    b.prompt_partial = True
                elif mode == "reject":
                    b.no_partial = True
                continue
        tm = _ITEM_TAIL.search(item)
        if tm:
            item, iflags = item[: tm.start()], iflags[: tm.start()]
        if _EQUIVALENTS.match(item.strip()):
            b.equivalents = b.equivalents or mode == "accept"
            b.word_forms = b.word_forms or (mode == "accept" and bool(_WORD_FORMS.search(item)))
            continue
        b.add(mode, item, iflags, prompt_text if mode == "prompt" else "", cond, mention, described)


def _is_directive(content: str) -> bool:
    return bool(_KEYWORD.match(content)) or bool(_COND.match(content.strip()))


# ------------------------------------------------------------------------------------- entries


def _runs(text: str, flags: list[int], bit: int) -> list[tuple[int, int]]:
    """Spans of consecutive characters carrying ``bit`` (blank spans dropped)."""
    out: list[tuple[int, int]] = []
    start = -1
    for i, f in enumerate(flags):
        if f & bit:
            if start < 0:
                start = i
        elif start >= 0:
            out.append((start, i))
            start = -1
    if start >= 0:
        out.append((start, len(flags)))
    return [(a, z) for a, z in out if text[a:z].strip()]


def _person_like(display: str) -> bool:
    """Does an unmarked alternative name a person ("Rosalind Franklin", "Sir Isaac Newton")?

    Only then does the surname alone count, as moderators accept by default for people. The
    evidence: two to four capitalised words, the first a known given name, a title or an initial,
    the last not a word like "Lake" or "War".
    """
    words = display.replace(".", ". ").split()
    if not 2 <= len(words) <= 4:
        return False
    for w in words:
        if w.lower() in _NAME_PARTICLES:
            continue
        core = w.strip(".,'\"")
        if not core or not core[0].isupper() or any(ch.isdigit() for ch in core):
            return False
        if core.lower().endswith(("'s", "’s")):
            return False  # a possessive: "Gray's Anatomy"
        if len(core) > 1 and core.isupper():
            return False  # acronyms: "Apple TV"
    last = normalize_cached(words[-1])
    if not last or last[-1] in WEAK_WORDS:
        return False
    first = simple_words(words[0])[0]  # folded, not stemmed: "Thomas" must stay "thomas"
    return first in GIVEN_NAMES or first in TITLES or (len(first) == 1 and words[0].endswith("."))


def _entry(
    text: str, flags: list[int], mark: int, *, prompt_text: str = "", condition: Condition | None = None
) -> Entry | None:
    """Build one entry from its text and per-character marks; None if nothing is left to match.

    ``mark`` is the line's required mark (UNDER, BOLD or 0): an entry carrying it is explicit about
    its required part; an entry without it requires all of its text but bracketed context.
    """
    # trim quotes and punctuation around the item, keeping flags aligned
    s, e = 0, len(text)
    while s < e and text[s] in _QUOTE_STRIP:
        s += 1
    while e > s and text[e - 1] in _QUOTE_STRIP:
        e -= 1
    text, flags = text[s:e], flags[s:e]
    display = " ".join(text.split())
    full = normalize_cached(display)
    if not full:
        return None
    runs = _runs(text, flags, mark) if mark else []
    marked = bool(runs)
    if not runs:
        # unmarked entry: everything but bracketed optional context is required
        runs = _runs(text, [0 if f & OPTIONAL else 1 for f in flags], 1)
    run_texts = [text[a:z] for a, z in runs]
    required = normalize_cached(" ".join(run_texts)) or full
    segments = tuple(seg for seg in (normalize_cached(r) for r in run_texts) if seg) or (required,)
    # "<u>Haiti</u>an Revolution": the marked run stops inside a word, so any word that starts with
    # it will do ("Haitian", "Haiti").
    prefixes = frozenset(
        seg[-1]
        for (a, z), seg in zip(runs, (normalize_cached(r) for r in run_texts), strict=True)
        if marked and seg and 0 < z < len(text) and text[z].isalnum() and text[z - 1].isalnum()
    )
    explicit = marked or required != full
    content = tuple(t for t in required if t not in STOPWORDS) or required
    core = content if explicit else _core(required)
    if len(core) > 2 and not _DROPPABLE_ADDRESS.isdisjoint(core[1:]):
        core = (core[0], *(t for t in core[1:] if t not in _DROPPABLE_ADDRESS))
    return Entry(
        text=display,
        full=full,
        required=required,
        content=content,
        core=core,
        segments=segments,
        prefixes=prefixes,
        explicit=explicit,
        person_like=not explicit and _person_like(display),
        prompt_text=prompt_text,
        condition=condition,
    )


# ------------------------------------------------------------------------------------ the line

_ALT_SEP = re.compile(r"\s*(?:(?<!\d)/|/(?!\d))\s*|\s+or\s+|\s*;\s*", re.I)
_COMMA = re.compile(r"(?<!\d),|,(?!\d)")
_SUFFIXES = frozenset("jr jr. sr sr. ii iii iv inc inc. ltd ltd. esq esq. phd md".split())


def _groups(text: str) -> list[tuple[int, int]]:
    """Top-level ``[...]`` and ``(...)`` spans (inclusive of the brackets). Unclosed runs to the end."""
    spans: list[tuple[int, int]] = []
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch in "[(":
            if depth == 0:
                start = i
            depth += 1
        elif ch in "])" and depth:
            depth -= 1
            if depth == 0:
                spans.append((start, i + 1))
    if depth:
        spans.append((start, len(text)))
    return spans


def _split(text: str, flags: list[int], pattern: re.Pattern[str], inside: int = 0) -> list[tuple[int, int]]:
    """Spans between separators, ignoring separators inside optional (bracketed) text and, when
    ``inside`` is a mark, separators with that mark on both sides ("<u>Impression, Sunrise</u>")."""
    out: list[tuple[int, int]] = []
    pos = 0
    for m in pattern.finditer(text):
        s, e = m.start(), m.end()
        if any(f & OPTIONAL for f in flags[s:e]):
            continue
        if inside and all(f & inside for f in flags[s:e]) and e < len(text) and flags[e] & inside:
            continue
        out.append((pos, m.start()))
        pos = m.end()
    out.append((pos, len(text)))
    return [(s, e) for s, e in out if text[s:e].strip()]


def _exonym_index() -> dict[tuple[str, ...], tuple[str, ...]]:
    index: dict[tuple[str, ...], tuple[str, ...]] = {}
    for english, natives in EXONYMS.items():
        names = (english, *natives)
        for name in names:
            index[normalize(name)] = tuple(n for n in names if n != name)
    return index


_EXONYMS = _exonym_index()


def _add_exonyms(b: _Builder) -> None:
    """Under "accept equivalents", the other-language names of an accepted place or work."""
    if not b.equivalents:
        return
    known = {e.required for e in b.accepts}
    for e in list(b.accepts):
        for other in _EXONYMS.get(e.required, ()):
            if normalize(other) not in known:
                b.add("accept", other, [0] * len(other), "", None)
                known.add(normalize(other))


def _same_person(b: _Builder) -> None:
    """An unmarked alternative that ends in the surname of the line's person, whose given name
    starts another alternative ("Mohandas Karamchand Gandhi" beside "<u>Mahatma Gandhi</u>"), is
    that person's name too, so its surname alone will do (as for any unmarked name, see
    _person_like), though its first word is missing from the given-names list."""
    surnames = {
        e.full[-1]
        for e in b.accepts
        if len(e.full) >= 2 and simple_words(e.text.split()[0])[0] in GIVEN_NAMES and e.full[-1].isalpha()
    }
    if not surnames:
        return
    for i, e in enumerate(b.accepts):
        if e.explicit or e.person_like or len(e.full) < 2 or e.full[-1] not in surnames:
            continue
        words = e.text.split()
        if 2 <= len(words) <= 4 and all(w[:1].isupper() for w in words if w.lower() not in _NAME_PARTICLES):
            b.accepts[i] = replace(e, person_like=True)


@lru_cache(maxsize=4096)
def parse_answerline(raw: str) -> AnswerLine:
    """Parse once, judge many times: the result is cached per distinct line."""
    raw = (raw or "")[:MAX_LINE_CHARS]
    text, flags = _scan_markup(raw)
    alnum = [f for ch, f in zip(text, flags, strict=False) if ch.isalnum()]
    if any(f & UNDER for f in alnum):
        mark = UNDER
    elif any(f & BOLD for f in alnum) and not all(f & BOLD for f in alnum):
        mark = BOLD
    else:
        mark = 0
    b = _Builder(mark)

    # Brackets: directives go to the builder, other brackets stay as optional context.
    main_chars: list[str] = []
    main_flags: list[int] = []
    pos = 0
    for s, e in _groups(text):
        main_chars.append(text[pos:s])
        main_flags.extend(flags[pos:s])
        inner = text[s + 1 : e - 1] if text[e - 1 : e] in "])" else text[s + 1 : e]
        inner_flags = flags[s + 1 : s + 1 + len(inner)]
        if _is_directive(inner):
            cpos = 0
            for part in re.finditer(r";", inner):
                _parse_clause(inner[cpos : part.start()], inner_flags[cpos : part.start()], b)
                cpos = part.end()
            _parse_clause(inner[cpos:], inner_flags[cpos:], b)
            main_chars.append(" ")
            main_flags.append(0)
        elif _PRONUNCIATION.match(inner) or _NOTE.match(inner):
            main_chars.append(" ")
            main_flags.append(0)
        else:
            main_chars.append(" " + inner + " ")
            main_flags.extend([OPTIONAL] * (len(inner) + 2))
        pos = e
    main_chars.append(text[pos:])
    main_flags.extend(flags[pos:])
    main = "".join(main_chars)

    # Alternatives: " / ", " or ", ";" always; commas unless they make an "A, B, and C" title.
    for s, e in _split(main, main_flags, _ALT_SEP):
        piece, pflags = main[s:e], main_flags[s:e]
        subs = _split(piece, pflags, _COMMA, mark)
        if len(subs) > 1 and any(piece[a:z].strip().lower().startswith(("and ", "& ")) for a, z in subs[1:]):
            subs = [(0, len(piece))]
        merged: list[tuple[int, int]] = []
        for a, z in subs:
            chunk = piece[a:z].strip().lower()
            unmarked = mark and not any(f & mark for f in pflags[a:z])
            if merged and (unmarked or chunk in _SUFFIXES):
                merged[-1] = (merged[-1][0], z)  # "<u>Hamlet</u>, Prince of Denmark", "King, Jr."
            else:
                merged.append((a, z))
        for a, z in merged:
            b.add("accept", piece[a:z], pflags[a:z], "", None)

    _add_exonyms(b)
    _same_person(b)
    first_names = frozenset(
        t
        for e in b.accepts
        for t, nxt in zip(e.full, e.full[1:], strict=False)
        if t in GIVEN_NAMES_FOLDED and nxt not in ("and", "or", "und", "et")
    )
    return AnswerLine(
        raw=raw,
        first_names=first_names,
        accepts=tuple(b.accepts),
        prompts=tuple(b.prompts),
        rejects=tuple(b.rejects),
        prompt_partial=b.prompt_partial,
        accept_either=b.accept_either,
        no_partial=b.no_partial,
        equivalents=b.equivalents,
        word_forms=b.word_forms,
        initialisms=frozenset().union(*(e.initialisms for e in b.accepts)),
    )
