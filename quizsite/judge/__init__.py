"""The answer judge: does a given answer match a quizbowl answer line?

Pure Python, no Django: the play consumer, the importers and the agent runners all call
:func:`judge`, and so can a test or a notebook. Every ruling is stored with :data:`JUDGE_VERSION` so
that a change of rules never silently rewrites what past rulings meant.

Order of decision (first that applies wins), following ACF/NAQT practice:

0. the answer is written as initials of an acceptable alternative (NAFTA, UN, JFK) -> accept;
1. the answer is exactly (after normalisation) an acceptable alternative -> accept;
2. it is exactly a "do not accept" entry -> reject (even where it is also the required part of an
   alternative: "monarchy" on "constitutional <u>monarchy</u> [do not accept monarchy]"); exactly a
   "prompt on" entry -> prompt;
3. hedges ("maybe X", "either X or Y") -> reject; lists ("X or Y", "X and Y") -> accept only if
   every item is itself acceptable;
4. it contains every required word of an alternative (misspellings within tolerance, extra words
   allowed) -> accept, unless a reject or prompt entry it also contains is more specific, an
   extra given name, initials or a word after the surname shows it names someone else ("Leopold
   Mozart", "Washington Irving"), a number differs from the line's ("Episode V"), a word says the
   opposite of the line's ("the Younger"), "by X" credits someone the line (or the question)
   does not name, a hyphen joins it to a prefix or another name ("anti-Catholicism",
   "Austria-Hungary"), it is a title containing the line's common noun ("The Velveteen Rabbit"),
   it adds a year the question contradicts (see qualifiers), or it puts a regnal name in another
   realm ("Alexander III of Russia" for "Alexander III of Macedon"); since 1.4 also where it puts
   another word in the place of the line's unmarked one ("Theo van Gogh" for "Vincent {van
   Gogh}", "Schrödinger's cat" for "{Schrödinger} equation"), inserts a word inside the required
   ones of a thing that is not a person ("The Super Mario Galaxy Movie"), puts "New" before a
   place ("New Carthage") or builds a longer title around the line's ("The Return of the Pink
   Panther"); a prompt entry with common nouns after it ("Newton's laws of motion") is prompted;
5. it contains a whole reject / prompt entry -> reject / prompt;
6. partial answers: on an unmarked line, a person's surname -> accept; otherwise prompt, as NAQT
   does for incomplete answers; on a marked line, prompt only where the line says "prompt on
   partial answer", or where the answer is the line's name without its number (a ruler's
   "Elizabeth" for Elizabeth I, a series in the plural: "Punic Wars" for Second Punic War),
   which a moderator prompts with "which one?". A listed full name without its middle name
   ("Samuel Clemens" for Samuel Langhorne Clemens) is accepted (1.4). (An unmarked line never requires its generic
   head, title or suffix: "Waterloo" for "Battle of Waterloo" and "John Paul II" for "Pope John
   Paul II" are whole answers in 4.)
7. where the line says "accept word forms", a derived form of a one-word answer -> accept; the
   -ing form of the verb a common process noun derives from ("distilling" for distillation) is
   accepted without it (1.4); otherwise reject.

After all this, an answer that is not accepted but writes initials for a run of an alternative's
words ("UN Security Council", "ICAO spelling alphabet") is judged again with them spelled out.

Every ruling names the rule that decided it (``Ruling.rule``, one of :data:`RULES`), stored with
live and annotation rulings and shown on the ruling report page.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from .answerline import (
    DESCRIPTORS,
    GENERIC_HEADS,
    GIVEN_NAMES_FOLDED,
    WEAK_WORDS,
    AnswerLine,
    Entry,
    parse_answerline,
    qualifier_only,
)
from .matching import (
    Cover,
    best_of_similarities,
    best_similarity,
    compatible_names,
    contradicts,
    cover,
    derived_form,
    token_match,
    verb_lemmas,
    within,
)
from .normalize import MAX_GIVEN_CHARS, STOPWORDS, normalize
from .qualifiers import (
    creator_contradicted,
    prefix_apart,
    title_around,
    title_containing,
    wrong_compound,
    year_contradicted,
)
from .titles import short_titles

__all__ = ["JUDGE_VERSION", "RULES", "Ruling", "judge", "judge_strict", "parse_answerline"]

JUDGE_VERSION = "1.4"

log = logging.getLogger(__name__)

# Words that make an answer a hedge rather than an answer.
HEDGES = frozenset("maybe perhaps possibly probably either neither unsure dunno idk forse".split())
# Epithets a player may add after a ruler's name ("Gregory the Great" for Pope Gregory I); the
# normaliser has dropped the "the" before them.
EPITHETS = frozenset(
    "great terrible magnificent wise bold pious fair good conqueror confessor lionheart".split()
)
# Words that join several answers into a list (English, and Italian "o"/"oppure").
CONJUNCTIONS = frozenset(("or", "nor", "and", "o", "oppure"))
_IGNORABLE = STOPWORDS | DESCRIPTORS | GENERIC_HEADS | {"the"}


@dataclass(frozen=True, slots=True)
class Ruling:
    """What the judge decided, with enough to show and audit it."""

    verdict: str  # "accept" | "prompt" | "reject"
    prompt: str = ""  # the directed prompt to read to the player, or ""
    score: float = 0.0  # 0..1 similarity behind the verdict
    matched: str = ""  # the alternative (or prompt / reject entry) that decided, as written
    rule: str = ""  # which rule decided (see RULES): shown beside the ruling in reports


# What each ``Ruling.rule`` means, for a report page or a log line.
RULES = {
    "empty": "no answer given",
    "exact": "exactly an acceptable alternative",
    "exact_reject": "exactly a do-not-accept entry",
    "exact_prompt": "exactly a prompt-on entry",
    "initialism": "the initials of an acceptable alternative (NAFTA, JFK)",
    "hedge": "a hedge (maybe, either) is not an answer",
    "list": "a list is accepted only if every item is",
    "required_words": "every required word given (spelling, word form and extra words allowed)",
    "reject_entry": "contains a do-not-accept entry",
    "prompt_entry": "contains a prompt-on entry",
    "more_specific_reject": "a do-not-accept entry fits the answer at least as well",
    "more_specific_prompt": "a prompt-on entry fits the answer better",
    "wrong_name": "an extra given name or initials name someone else",
    "wrong_number": "a number that differs from the line's (Episode V for Episode IV)",
    "wrong_creator": "'by X' where the line or the question names another creator (Tosca by Verdi)",
    "wrong_compound": "joined to a prefix (with a hyphen or apart) or by a hyphen to another name "
    "(anti-Catholicism, Counter Reformation, Austria-Hungary)",
    "title_of_work": "a title that contains the answer's word (The Velveteen Rabbit for rabbits)",
    "wrong_year": "a year the question contradicts (Peace of Westphalia of 1815)",
    "word_form": "a derived form of the answer, where the line accepts word forms",
    "wrong_realm": "a regnal name in another realm (Alexander III of Russia for ... of Macedon)",
    "contradiction": "a word that says the opposite of the line's (the Younger for the Elder)",
    "short_title": "a long title's main title or name (Tristram Shandy, The History of Tom Jones)",
    "foreign_article": "a title without its German article (Zauberflöte for Die Zauberflöte)",
    "decade_century": "a decade without its century (the nineties for 1890s): the line's century",
    "surname": "a person's surname alone",
    "missing_number": "all but the line's number (Elizabeth for Elizabeth I): which one? prompt",
    "partial": "part of the required answer: prompt",
    "other_word": "another word in place of the line's unmarked one (Theo van Gogh, Schrödinger's cat)",
    "inserted_word": "a word inside the required words that names another thing (Super Mario Galaxy Movie)",
    "title_around": "a longer title around the line's (The Disintegration of the Persistence of Memory)",
    "new_place": "'New' before a place names another place (New Carthage for Carthage)",
    "middle_name": "a listed full name without its middle name (Robert Zimmerman)",
    "initialism_part": "initials for a run of an alternative's words (ICAO spelling alphabet)",
    "gerund": "the -ing form of the verb a process noun derives from (fermenting for fermentation)",
    "no_match": "no acceptable alternative matched",
    # set by callers, not by judge(): the live game's limits
    "timeout": "no answer before the timer ran out",
    "prompt_limit": "a further prompt would pass the limit per buzz, so the prompt becomes a reject",
}


_GERMAN_ARTICLES = frozenset(("die", "das"))
# Words that number one work of a series ("Part 1", "Book II", "Episode IV"), as normalised.
_PART_WORDS = frozenset(("part", "book", "volume", "vol", "episode", "chapter"))
_BARE_DECADE = re.compile(r"^[0-9]0s$")
_DECADE = re.compile(r"^(1[0-9]|20)([0-9]0s)$")
_EMPTY = Ruling("reject", "", 0.0, "", "empty")
_GIVEN_BRACKETS = re.compile(r"\([^()]*\)")
_ARTICLE = re.compile(r"^(?:the|a|an)\s+(?=\S)", re.I)
# Initials as players write them: "C.P.E.", "J. S.", "JS" (capitals; "it" or "not" are words).
_INITIALS = re.compile(r"\b(?:[A-Za-z]\.\s?){1,3}(?![a-z])|\b[A-Z]{2,3}\b")


def judge(
    answerline: str, given: str, question_text: str | None = None, word_index: int | None = None
) -> Ruling:
    """Judge one answer. Never raises: a live game must not crash on a strange line or answer.

    ``question_text`` and ``word_index`` (words revealed at the buzz) let ``before/after "…" is read``
    directives apply; without them those directives count as unconditional.
    """
    try:
        return judge_strict(answerline, given, question_text, word_index)
    except Exception:  # pragma: no cover - a bug, logged; the property tests call judge_strict
        log.exception("judge failed on line %r, answer %r", answerline, given)
        return _EMPTY


def judge_strict(
    answerline: str, given: str, question_text: str | None = None, word_index: int | None = None
) -> Ruling:
    """:func:`judge` without the safety net, so that tests see any exception."""
    if not isinstance(answerline, str):
        answerline = "" if answerline is None else str(answerline)
    if not isinstance(given, str):
        given = "" if given is None else str(given)
    if word_index is not None and not isinstance(word_index, int):
        word_index = None
    given = given[:MAX_GIVEN_CHARS]
    if "(" in given:
        # "Soviet Union (Russia)", "a sand timer (hourglass/egg timer)": AI agents explain in
        # brackets; the answer is what stands outside them, when anything does.
        given = _GIVEN_BRACKETS.sub(" ", given) if _GIVEN_BRACKETS.sub("", given).strip() else given
    tokens = normalize(given)
    if not tokens:
        return _EMPTY
    if "." not in given and (given.islower() or given.istitle()):
        # no dot and no two capitals in a row ("Mozart", "the magic flute"): _INITIALS finds nothing
        initials: frozenset[str] = frozenset()
    else:
        initials = frozenset(t for m in _INITIALS.findall(given) for t in normalize(m))
    line = parse_answerline(answerline)
    if line.initialisms:  # else no answer is the initials of an alternative
        acronym = _ARTICLE.sub("", given.strip())  # "the CIA", "the U.N.": the article is no letter of it
        if len(acronym) >= 3 and acronym[-1] == "s" and acronym[-2].isupper():
            acronym = acronym[:-1]  # a plural: "POWs", "UFOs"
        if len(acronym) <= 12 and _squeezed(acronym) in line.initialisms and _acronym(acronym):
            letters = _squeezed(acronym)
            for e in _active(line.accepts, question_text, word_index):
                if letters in e.initialisms:
                    return Ruling("accept", "", 1.0, e.text, "initialism")
    ruling = _decide(line, tokens, question_text, word_index, initials, split=True, raw=given)
    if ruling.verdict != "accept" and " " in given.strip() and _CAPS.search(given):
        spelled = _spell_out(given, _active(line.accepts, question_text, word_index))
        if spelled is not None:
            again = _decide(line, spelled, question_text, word_index, initials, split=True, raw=given)
            if again.verdict == "accept":
                return Ruling("accept", "", again.score, again.matched, "initialism_part")
    return ruling


# A word written in capitals, as initials are ("ICAO spelling alphabet", "the UN Security Council").
_CAPS = re.compile(r"\b[A-Z]{2,6}\b")


def _spell_out(given: str, accepts: tuple[Entry, ...]) -> tuple[str, ...] | None:
    """The answer's words with its initials written out as the run of an alternative's words they
    stand for ("ICAO spelling alphabet" for "International Civil Aviation Organization Spelling
    Alphabet"), or None. Initials of a whole alternative are handled before (rule initialism);
    here they stand for a part, as moderators take "UN Security Council"."""
    text, changed = given, False
    for m in reversed(list(_CAPS.finditer(given))):
        letters = m.group(0).lower()
        for e in accepts:
            content = [t for t in e.full if t not in STOPWORDS]
            n = len(letters)
            run = next(
                (
                    content[i : i + n]
                    for i in range(len(content) - n + 1)
                    if "".join(t[0] for t in content[i : i + n]) == letters
                ),
                None,
            )
            if run is not None and letters not in e.words:
                text = text[: m.start()] + " ".join(run) + text[m.end() :]
                changed = True
                break
    return normalize(text) if changed else None


def _squeezed(given: str) -> str:
    return given.replace(".", "").replace(" ", "").replace("&", "").lower()


def _acronym(given: str) -> bool:
    """Is the answer written as an acronym: capitals ("UN", "NAFTA"), dotted ("U.N."), or any case
    from four letters on ("nato")?"""
    letters = "".join(ch for ch in given if ch.isalpha())
    if len(letters) < 2 or any(not (ch.isalpha() or ch in ". &") for ch in given.strip()):
        return False
    if "&" in given:  # "P&G", "M&S": initials either side of the ampersand, as companies write them
        return letters.isupper() and " " not in given.strip()
    if letters.isupper() or "." in given or (len(letters) >= 4 and " " not in given.strip()):
        return True
    # "DoD", "BoE": capitals with the small words' letters in lower case between them
    return letters[0].isupper() and letters[-1].isupper() and len(letters) <= 6 and " " not in given.strip()


def _active(entries: tuple[Entry, ...], qt: str | None, wi: int | None) -> tuple[Entry, ...]:
    if all(e.condition is None for e in entries):
        return entries
    return tuple(e for e in entries if e.active(qt, wi))


def _ruling(verdict: str, entry: Entry | None, score: float, rule: str) -> Ruling:
    if entry is None:
        return Ruling(verdict, "", round(score, 4), "", rule)
    prompt = entry.prompt_text if verdict == "prompt" else ""
    return Ruling(verdict, prompt, round(score, 4), entry.text, rule)


def _split_list(tokens: tuple[str, ...]) -> list[tuple[str, ...]]:
    parts: list[tuple[str, ...]] = []
    cur: list[str] = []
    for t in tokens:
        if t in CONJUNCTIONS:
            if cur:
                parts.append(tuple(cur))
            cur = []
        else:
            cur.append(t)
    if cur:
        parts.append(tuple(cur))
    return parts


def _full_cover(
    entry: Entry, tokens: tuple[str, ...], tset: frozenset[str], either: bool
) -> tuple[bool, Cover]:
    """The cover of ``entry``, and whether the answer contains all of its required words. The
    cover comes back either way: an incomplete one is the entry's partial answer, which would
    otherwise be worked out a second time."""
    c = cover(entry.core, tokens, tset, entry.prefixes)
    if c.complete:
        return True, c
    if either and c.count:
        segments = entry.segments if len(entry.segments) > 1 else tuple((t,) for t in entry.core)
        for seg in segments:
            seg_words = [t for t in seg if t not in STOPWORDS] or list(seg)
            if all(m for t, m in zip(entry.core, c.matched, strict=True) if t in seg_words):
                return True, c
    return False, c


def _decide(
    line: AnswerLine,
    tokens: tuple[str, ...],
    qt: str | None,
    wi: int | None,
    initials: frozenset[str] = frozenset(),
    *,
    split: bool,
    raw: str = "",
) -> Ruling:
    if line.unconditional:
        accepts, prompts, rejects = line.accepts, line.prompts, line.rejects
    else:
        accepts = _active(line.accepts, qt, wi)
        prompts = _active(line.prompts, qt, wi)
        rejects = _active(line.rejects, qt, wi)
    key = " ".join(tokens)

    # 1-2: exact matches decide outright
    for e in accepts:
        if key == e.full_key:
            return _ruling("accept", e, 1.0, "exact")
    for e in rejects:
        # before the required part of an accept: "monarchy" on "constitutional <u>monarchy</u>
        # [do not accept "monarchy"]" is the rejected answer, not the required word alone
        if key == e.full_key or key == e.required_key:
            return _ruling("reject", e, 1.0, "exact_reject")
    for e in accepts:
        if key == e.required_key:
            return _ruling("accept", e, 1.0, "exact")
    for e in prompts:
        if key == e.full_key or key == e.required_key:
            return _ruling("prompt", e, 1.0, "exact_prompt")

    tset = frozenset(tokens)
    if line.unconditional:
        line_words = line.accept_words
    else:
        line_words = frozenset().union(*(e.words for e in accepts)) if accepts else frozenset()

    # 3: hedges and lists
    if not tset.isdisjoint(HEDGES) and tset.isdisjoint(line_words & HEDGES):
        return _ruling("reject", None, 0.0, "hedge")
    conj = tset & CONJUNCTIONS
    if split and conj and conj.isdisjoint(line_words):
        parts = _split_list(tokens)
        if len(parts) > 1:
            rulings = [_decide(line, p, qt, wi, initials, split=False) for p in parts]
            if all(r.verdict == "accept" for r in rulings):
                return Ruling("accept", "", min(r.score for r in rulings), rulings[0].matched, "list")
            return Ruling("reject", "", max(r.score for r in rulings), "", "list")
        tokens = parts[0] if parts else tokens
        tset = frozenset(tokens)

    # 4-5: every required word present
    best_accept: tuple[int, float, Entry, Cover] | None = None
    partials: list[tuple[Cover, Entry]] = []
    for e in accepts:
        full, c = _full_cover(e, tokens, tset, line.accept_either)
        if full:
            rank = (c.count, c.score)
            if best_accept is None or rank > best_accept[:2]:
                best_accept = (c.count, c.score, e, c)
        else:
            partials.append((c, e))
    best_reject = _best_full(rejects, tokens, tset)
    best_prompt = _best_full(prompts, tokens, tset)
    if line.unconditional:
        prompt_words = line.prompt_words
    else:
        prompt_words = frozenset().union(*(e.words for e in prompts)) if prompts else frozenset()
    if best_prompt is not None:
        rest = tuple(t for j, t in enumerate(tokens) if j not in best_prompt[3].used)
        if (
            not within(rest, prompt_words | line_words, _IGNORABLE)
            and not _full_name_of(tokens, best_prompt[3].used, best_prompt[2], line_words)
            and not _common_words(tokens, best_prompt[3].used, prompt_words | line_words, raw)
        ):
            best_prompt = None  # "Henry VII" is not a vaguer "Henry VIII": it says something else
    if best_accept is not None and _wrong_name(tokens, best_accept[3].used, line, line_words, initials):
        return _ruling("reject", None, best_accept[1], "wrong_name")  # "Leopold Mozart": wrong person
    if best_accept is not None and _wrong_number(tokens, best_accept[3].used, best_accept[2], accepts):
        return _ruling("reject", None, best_accept[1], "wrong_number")
    if best_accept is not None and _wrong_realm(tokens, best_accept[2]):
        return _ruling("reject", None, best_accept[1], "wrong_realm")
    if best_accept is not None:
        other = _other_word(tokens, best_accept[3].used, best_accept[2], line, line_words, initials, raw)
        if other:
            return _ruling("reject", None, best_accept[1], other)
    if best_accept is not None and contradicts(tokens, line_words):
        return _ruling("reject", None, best_accept[1], "contradiction")
    if best_accept is not None and _wrong_creator(tokens, best_accept[3].used, best_accept[2], qt):
        return _ruling("reject", None, best_accept[1], "wrong_creator")
    if best_accept is not None and raw:
        _, score, e, c = best_accept
        # a person's double surname is the same person ("Marie Skłodowska-Curie" for Curie): a
        # given name on either side says a person is meant
        person = e.person_like or bool(line.first_names) or not tset.isdisjoint(GIVEN_NAMES_FOLDED)
        if wrong_compound(raw, line_words, person) or prefix_apart(tokens, c.used, line_words):
            return _ruling("reject", None, score, "wrong_compound")
        if title_containing(raw, e.text, e.core):
            return _ruling("reject", None, score, "title_of_work")
        if title_around(raw, e.text):
            return _ruling("reject", None, score, "title_around")
        if qt and year_contradicted(
            [t for j, t in enumerate(tokens) if j not in c.used], any(t[:1].isdigit() for t in e.full), qt
        ):
            return _ruling("reject", None, score, "wrong_year")
    if best_accept is not None:
        count, score, e, _ = best_accept
        if best_reject is not None and best_reject[0] >= count:
            return _ruling("reject", best_reject[2], best_reject[1], "more_specific_reject")
        if best_prompt is not None and best_prompt[0] > count:
            return _ruling("prompt", best_prompt[2], best_prompt[1], "more_specific_prompt")
        return _ruling("accept", e, score, "required_words")
    if best_reject is not None:
        return _ruling("reject", best_reject[2], best_reject[1], "reject_entry")
    if best_prompt is not None:
        return _ruling("prompt", best_prompt[2], best_prompt[1], "prompt_entry")

    # a long title's short form ("Tristram Shandy", "The History of Tom Jones")
    for e in accepts:
        if e.explicit and key in short_titles(e.text):
            return _ruling("accept", e, 1.0, "short_title")

    # a title's German article left out ("Walküre" for "Die Walküre"): the other languages' articles
    # are stopwords already; "die" and "das" are not, as "die" is an English word
    for c, e in partials:
        if (
            len(e.core) >= 2
            and e.core[0] in _GERMAN_ARTICLES
            and not c.matched[0]
            and all(c.matched[1:])
            and within(tokens, e.words, _IGNORABLE)
        ):
            return _ruling("accept", e, c.score, "foreign_article")

    # 6: partial answers (none at all where the line says "do not accept or prompt on partial")
    if len(partials) > 1 and not line.no_partial:
        partials.sort(key=lambda ce: ce[0].count / max(1, len(ce[1].core)), reverse=True)
    for c, e in partials if not line.no_partial else ():
        if not c.count or not within(tokens, e.words, _IGNORABLE):
            continue
        if e.person_like and _middle_left_out(e, c):  # "Samuel Clemens" for Samuel Langhorne Clemens
            return _ruling("accept", e, c.score, "middle_name")
        if e.person_like and not c.matched[0] and c.matched[-1] and _is_suffix(c.matched):
            return _ruling("accept", e, c.score, "surname")  # the surname alone ("Franklin", "O'Keeffe")
        matched_words = [t for t, m in zip(e.core, c.matched, strict=True) if m]
        if len(matched_words) == 1 and (matched_words[0] in WEAK_WORDS or matched_words[0][0].isdigit()):
            continue  # "City" or "1" alone is not a partial answer ("Old Man", "Second Law" are)
        if line.prompt_partial or not e.explicit:
            return _ruling("prompt", e, c.score, "partial")
        if _missing_number(e, c, raw):
            return _ruling("prompt", e, c.score, "missing_number")

    # "accept word forms": a derived form of a one-word answer ("migration" for "migrate")
    if line.word_forms:
        content = [t for t in tokens if t not in _IGNORABLE]
        for e in accepts:
            if len(e.core) == 1 and len(content) == 1 and _word_forms(e.core[0], content[0]):
                return _ruling("accept", e, best_similarity(e.core, tokens), "word_form")

    # a process noun's gerund ("fermenting" for "fermentation"): the verb's -ing form names the
    # same process, as "accept word forms" would allow, for common nouns only (not "Reforming")
    content = [t for t in tokens if t not in _IGNORABLE]
    if len(content) == 1 and content[0].endswith("ing") and not line.word_forms:
        for e in accepts:
            if len(e.core) == 1 and e.core[0].endswith(_PROCESS_ENDINGS) and e.core[0] in e.text:
                if _word_forms(e.core[0], content[0]):
                    return _ruling("accept", e, best_similarity(e.core, tokens), "gerund")

    # a decade without its century where the line's is not the 20th ("the nineties" for 1890s):
    # the question has set the century, as rulings_moderator.jsonl's moderators rule it; a
    # decade with another century ("1980s" for 1880s) is still wrong
    if len(tokens) == 1 and _BARE_DECADE.match(tokens[0]):
        for e in accepts:
            for t in e.core:
                m = _DECADE.match(t)
                if m is not None and m.group(1) != "19" and m.group(2) == tokens[0]:
                    return _ruling("accept", e, 0.9, "decade_century")

    # 7
    return _ruling("reject", None, best_of_similarities([e.content for e in accepts], tokens), "no_match")


def _wrong_creator(tokens: tuple[str, ...], used: set[int], entry: Entry, qt: str | None = None) -> bool:
    """Does the answer credit the work to someone the line does not ("Tosca by Verdi" where the
    line reads "Tosca (by Giacomo Puccini)"), or, where the line names no creator, to someone
    other than the question's ("this opera by Giacomo Puccini")? Decided only where the line or
    the question names the creator: see qualifiers for why a bare line decides nothing."""
    if "by" not in tokens:
        return False
    credited = [t for t in tokens[tokens.index("by") + 1 :] if t not in _IGNORABLE]
    if "by" not in entry.full:
        return creator_contradicted(credited, qt)
    named = entry.full[entry.full.index("by") + 1 :]
    return bool(named and credited) and not any(token_match(w, t) for t in credited for w in named)


def _full_name_of(tokens: tuple[str, ...], used: set[int], entry: Entry, line_words: frozenset[str]) -> bool:
    """Is the answer the full name of the person a prompt entry names by surname alone, someone
    other than the answer ("Alfred Russel Wallace" where a Darwin line prompts on Wallace)? Given
    names before that surname name the same person; where the surname is also the answer's
    ("Theodore Roosevelt" on an FDR line prompting on Roosevelt) they may name another, so no."""
    if not used or not entry.core or not line_words.isdisjoint(entry.core):
        return False
    first = min(used)
    rest = [j for j in range(len(tokens)) if j not in used]
    return bool(rest) and all(j < first for j in rest) and tokens[rest[0]] in GIVEN_NAMES_FOLDED


def _common_words(tokens: tuple[str, ...], used: set[int], words: frozenset[str], raw: str) -> bool:
    """Are the answer's words outside a prompt entry common nouns that only say more of the same
    thing ("Newton's laws of motion", "a Sputnik satellite" on a line prompting on Newton's laws,
    Sputnik)? Written in lower case beside a capitalised name, with no number or given name among
    them ("Henry VII" is not a vaguer "Henry VIII", "Roosevelt Island" not a vaguer Roosevelt),
    and none inside the entry's words ("Fermat's little theorem" is another theorem). An answer
    in lower case throughout says nothing of which words are names: no."""
    if not raw or raw.islower() or not used:
        return False
    first, last = min(used), max(used)
    if any(j not in used and tokens[j] not in _IGNORABLE for j in range(first, last)):
        return False
    rest = [t for j, t in enumerate(tokens) if j not in used]
    lower = set(raw.split())
    extra = [t for t in rest if t not in words and t not in _IGNORABLE]
    return bool(extra) and all(
        t.isalpha()
        and t not in GIVEN_NAMES_FOLDED
        and any(w.casefold().startswith(t) and w.islower() for w in lower)
        for t in extra
    )


def _missing_number(entry: Entry, c: Cover, raw: str) -> bool:
    """Is the answer the line's name without its number, where a moderator asks "which one?", on
    a marked line too: a ruler's name without the regnal number ("Elizabeth" for Elizabeth I), a
    series named in the plural ("Punic Wars" for Second Punic War), or a work without its part
    ("Henry IV" for "Henry IV, Part 1")? Other names without their
    number are other things ("Saturn" for Saturn VI, "World War" for World War II): rejected. A
    different number is never here (wrong_number, or no_match as it is not within the line)."""
    missing = [t for t, m in zip(entry.core, c.matched, strict=True) if not m]
    if (
        missing
        and any(t in _PART_WORDS for t in missing)
        and all(t in _PART_WORDS or t[:1].isdigit() for t in missing)
    ):
        return any(t[:1].isdigit() for t in missing)  # "Henry IV" for "Henry IV, Part 1": which part?
    if not missing or not all(t[:1].isdigit() for t in missing):
        return False
    matched = [t for t, m in zip(entry.core, c.matched, strict=True) if m]
    if not matched:
        return False
    if entry.core[-1][:1].isdigit() and matched[-1] in GIVEN_NAMES_FOLDED:
        return True  # a regnal number after a given name
    last = matched[-1]
    words = raw.casefold().split()
    return f"{last}s" in words and f"{last}s" not in entry.text.casefold().split()


def _word_forms(expected: str, got: str) -> bool:
    """Derived forms of one word, also through a verb's lemma (lemminflect): "impeached" is a
    form of "impeach", from which "impeachment" derives."""
    if derived_form(expected, got):
        return True
    return any(derived_form(expected, lemma) for lemma in verb_lemmas(got)) or any(
        derived_form(lemma, got) for lemma in verb_lemmas(expected)
    )


def _wrong_realm(tokens: tuple[str, ...], entry: Entry) -> bool:
    """Does the answer put the line's regnal name in another realm ("Alexander III of Russia" for
    "Alexander III of Macedon")? The realm may be left out (see answerline._core), not changed."""
    if "of" not in tokens or "of" not in entry.full:
        return False
    i, j = entry.full.index("of"), tokens.index("of")
    if i == 0 or j == 0 or not entry.full[i - 1][:1].isdigit() or not tokens[j - 1][:1].isdigit():
        return False
    realm = [t for t in entry.full[i + 1 :] if t not in _IGNORABLE]
    given = [t for t in tokens[j + 1 :] if t not in _IGNORABLE]
    # the realm's adjective or longer name is the same realm (Macedonia, Macedonian for Macedon)
    return bool(realm and given) and not any(
        token_match(w, t) or (min(len(w), len(t)) >= 5 and (w.startswith(t) or t.startswith(w)))
        for w in realm
        for t in given
    )


def _wrong_number(
    tokens: tuple[str, ...], used: set[int], entry: Entry, accepts: tuple[Entry, ...] = ()
) -> bool:
    """Does the answer add a number where the line has a different one ("Star Wars Episode V" for
    "Star Wars: Episode IV", "Apollo 13" beside "Apollo 11")? Where the matched entry has none,
    the numbers of the line's other entries for the same thing count ("First Boer War" on "Boer
    Wars [accept Second Boer War]")."""
    numbers = [t for t in entry.full if t[:1].isdigit()]
    longest = 99
    if not numbers:
        numbers = [
            t
            for e in accepts
            if e is not entry and not e.words.isdisjoint(entry.core)
            for t in e.full
            if t[:1].isdigit()
        ]
        longest = 2  # ordinals and regnal numbers only: a year may date the line's own entry
    if not numbers:
        return False
    return any(
        t[:1].isdigit() and t not in numbers and len(t) <= longest
        for j, t in enumerate(tokens)
        if j not in used
    )


def _is_suffix(matched: list[bool]) -> bool:
    """Are the matched words a tail of the name (its surname), nothing before them?"""
    first = matched.index(True)
    return all(matched[first:])


def _wrong_name(
    tokens: tuple[str, ...],
    used: set[int],
    line: AnswerLine,
    line_words: frozenset[str],
    initials: frozenset[str],
) -> bool:
    """Does the answer name someone else: an extra given name (or initials) that fits none of the
    line's first names ("Leopold Mozart", "Erasmus Darwin", "C. P. E. Bach" for J. S. Bach), or a
    word after the surname ("Washington Irving", "Bach family")?

    Applies only where the line itself spells out a first name, so that a line without one decides
    nothing here, and "Abe Lincoln" or "Karl Friedrich Gauss" still pass.
    """
    if not line.first_names:
        return False
    last_used = max(used, default=-1)
    for j in range(last_used + 1, len(tokens)):
        g = tokens[j]
        if g in ("by", "of"):
            break  # the author, or a place ("Henry VIII of England")
        if g not in line_words and g not in _IGNORABLE and g not in EPITHETS and g.isalpha():
            return True  # a word after the surname names another person ("Washington Irving")
    line_initials = {w[0] for w in line_words}
    for j, g in enumerate(tokens):
        if g == "by" and j not in used:
            break  # what follows names the author or composer ("Peter Pan by J. M. Barrie")
        if j in used or g in line_words or g in _IGNORABLE:
            continue
        if g in GIVEN_NAMES_FOLDED:
            if not any(compatible_names(g, w) for w in line.first_names) and not _middle_name(
                tokens, j, used, line.first_names
            ):
                return True
        elif g in initials and not all(ch in line_initials for ch in g):
            return True  # initials of someone else
    return False


def _middle_name(tokens: tuple[str, ...], j: int, used: set[int], first_names: frozenset[str]) -> bool:
    """Is the given name at ``j`` a middle name: after the line's own given name, before the
    surname ("Charles Robert Darwin" for Charles Darwin)? A full name with the middle name added
    is the same person; one in place of the line's given name is not ("Erasmus Darwin")."""
    if j == 0 or j > max(used, default=-1):
        return False
    return any(i in used and any(compatible_names(tokens[i], w) for w in first_names) for i in range(j))


def _best_full(
    entries: tuple[Entry, ...], tokens: tuple[str, ...], tset: frozenset[str]
) -> tuple[int, float, Entry, Cover] | None:
    best: tuple[int, float, Entry, Cover] | None = None
    for e in entries:
        c = cover(e.core, tokens, tset, e.prefixes)
        if c.complete and (best is None or (c.count, c.score) > best[:2]):
            best = (c.count, c.score, e, c)
    return best


# Forms of address before a name that say nothing of who is meant ("Madame Curie"), English and
# French, as DESCRIPTORS in answerline for titles of office.
_HONORIFICS = frozenset("madame madam mme monsieur mr mister lord lady dame mademoiselle".split())
# Nouns for a named statement of science, which lines and players use for one another ("Pascal's
# law" / "Pascal's principle", "Boyle's law" / "Boyle's rule"): a hand list, as no library here
# holds synonyms; the words are those of Wikipedia's "List of scientific laws named after people"
# (law, principle, rule, equation, formula, relation, theorem, hypothesis, postulate).
_STATEMENTS = frozenset("law principle rule equation formula relation theorem hypothesis postulate".split())
_POSSESSIVE_S = re.compile(r"\w['’]s\b")
# Endings of nouns that name a process or act made from a verb (fermentation, impeachment).
_PROCESS_ENDINGS = ("ation", "ition", "ion", "ment")


def _slot_match(expected: str, got: str) -> bool:
    """Does ``got`` stand for the line's word ``expected`` (a spelling, a nickname, an initial)?"""
    if token_match(expected, got):
        return True
    if len(expected) == 1 or len(got) == 1:
        return expected[:1] == got[:1]
    return expected.isalpha() and got.isalpha() and compatible_names(expected, got)


def _other_word(
    tokens: tuple[str, ...],
    used: set[int],
    entry: Entry,
    line: AnswerLine,
    line_words: frozenset[str],
    initials: frozenset[str],
    raw: str = "",
) -> str:
    """The rule name where the answer says something other than the line around its required words,
    else "". A moderator takes the required part alone, but not with another word put in the
    place of the line's own: "Theo van Gogh" on "Vincent {van Gogh}" (his brother),
    "Schrödinger's cat" on "{Schrödinger} equation", "Cleopatra Selene" on "{Cleopatra} VII",
    "Augustine of Canterbury" on "{Augustine} of Hippo" (other_word); a word inside the required
    ones that the line does not have ("The Super Mario Galaxy Movie" on "The Mario Movie";
    inserted_word: not in a person's name, whose middle names may be any word); "New" before the whole answer
    (New Carthage, New England: another place; new_place)."""
    if not used:
        return ""
    first, last = min(used), max(used)
    rephrased = "of" in tokens[first:last]  # "special theory of relativity": the same thing reworded
    # a person's middle names may be any word ("Edgar Allan Poe", "Mary Wollstonecraft Shelley")
    # ("The Mario Movie" is a title, though Mario is a given name: a name has no article)
    person = entry.person_like or (bool(line.first_names) and _ARTICLE.match(entry.text) is None)
    for j in range(first + 1, last) if not (rephrased or person) else ():
        t = tokens[j]
        if (
            j not in used
            and len(t) > 1
            and t.isalpha()
            and t not in line_words
            and t not in _IGNORABLE
            and t not in GIVEN_NAMES_FOLDED
            and t not in initials
            and not any(len(w) >= 3 and t.startswith(w) for w in line_words)  # "Brothers" for "Bros."
        ):
            return "inserted_word"
    if first > 0 and tokens[first - 1] == "new" and "new" not in line_words:
        return "new_place"
    core = entry.core
    if not core or core[0] not in entry.full or core[-1] not in entry.full:
        return ""
    lo = entry.full.index(core[0])
    hi = len(entry.full) - 1 - entry.full[::-1].index(core[-1])
    # a word joined by a hyphen before the name is a double surname ("Sklodowska-Curie" for Marie
    # Curie): wrong_compound judges those
    before = tokens[: first - 1] if "-" in raw else tokens[:first]
    sides = ((entry.full[:lo], before), (entry.full[hi + 1 :], tokens[last + 1 :]))
    defer_given = bool(line.first_names)  # _wrong_name has judged given names against the line's
    line_initials = {w[0] for w in line_words}
    possessive = _POSSESSIVE_S.search(raw) is not None
    for side, (line_side, given_side) in enumerate(sides):
        if given_side and given_side[0] in ("of", "by"):
            if given_side[0] not in line_side:
                continue  # a place or a creator the line does not give: other rules judge those
            line_side = line_side[line_side.index(given_side[0]) + 1 :]
            given_side = given_side[1:]
        elif side == 1 and not possessive and not any(w[:1].isdigit() for w in line_side):
            # another noun after the name may be the same thing's other name ("Fibonacci numbers",
            # "Apollo program"); "Schrödinger's cat" names a thing of his, and a name's number
            # ("Cleopatra VII") is not replaced by a word that means the same
            continue
        missing = [w for w in line_side if w not in _IGNORABLE and not any(_slot_match(w, t) for t in tokens)]
        if not missing:
            continue
        others = [
            t
            for t in given_side
            if t.isalpha()
            and t not in _IGNORABLE
            and t not in line_words
            and t not in EPITHETS
            and t not in _HONORIFICS
            and not qualifier_only(t)  # "the famous van Gogh": an adjective says nothing else
            and not (defer_given and t in GIVEN_NAMES_FOLDED)
            and not (t in initials and all(ch in line_initials for ch in t))  # "W. B. Yeats"
        ]
        if set(missing) <= _STATEMENTS and set(others) <= _STATEMENTS:
            continue  # "Pascal's law" for "Pascal's principle": one statement, named either way
        if others and not any(_slot_match(w, t) for w in missing for t in others):
            return "other_word"
    return ""


def _middle_left_out(entry: Entry, c: Cover) -> bool:
    """Is the answer a person's listed full name without its middle names ("Robert Zimmerman" for
    "Robert Allen Zimmerman")? The given name and the surname say who is meant."""
    m = c.matched
    return len(m) >= 3 and m[0] and m[-1] and not all(m[1:-1])
