"""Reading a model's free text as an answer: a letter among options, a short answer, a list of candidates.

Models wrap answers in many ways ("B", "B) mano", "Risposta: **mano**", a JSON list inside prose). The
parsers return what they could read and None (or the unmatched parts) otherwise; the kinds keep the raw
text beside it, so a researcher can check every parse.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Sequence

from quizsite.judge.normalize import normalize

LETTERS = string.ascii_uppercase
_PREFIX = re.compile(r"^\s*(?:final\s+)?(?:answer|risposta|domanda|question|guess)\s*[:\-]\s*", re.IGNORECASE)
_WRAP = " \t\"'`*_“”‘’«»"


def lettered(options: Sequence[str]) -> str:
    """The options as "A. text" lines, the MCQA layout (ITA-Bench's)."""
    return "\n".join(f"{LETTERS[i]}. {o}" for i, o in enumerate(options))


def _clean_line(text: str) -> str:
    lines = [ln for ln in (text or "").strip().splitlines() if ln.strip()]
    line = lines[0] if lines else ""
    while True:
        stripped = _PREFIX.sub("", line.strip().strip(_WRAP))
        if stripped == line:
            return line.strip().strip(_WRAP)
        line = stripped


def parse_choice(text: str, options: Sequence[str]) -> int | None:
    """The index of the option the text names: by its letter ("B", "(b)", "B. mano", "Answer: B") or, when
    no letter stands alone, by the one option whose text appears in it."""
    letters = LETTERS[: len(options)]
    line = _clean_line(text)
    m = re.match(rf"^\(?([{letters}{letters.lower()}])\)?(?:[.):\s]|$)", line)
    if m and (m.group(1).isupper() or len(line) <= 3):
        return letters.index(m.group(1).upper())
    m = re.search(rf"(?:answer|risposta)(?:\s*(?:is|è|:))*\s*\(?([{letters}])\b", text or "", re.IGNORECASE)
    if m:
        return letters.index(m.group(1).upper())
    words = normalize(text or "")
    hits = [i for i, o in enumerate(options) if (t := normalize(o)) and _contains(words, t)]
    return hits[0] if len(hits) == 1 else None


def _contains(words: tuple[str, ...], sub: tuple[str, ...]) -> bool:
    n = len(sub)
    return any(words[i : i + n] == sub for i in range(len(words) - n + 1))


def parse_short(text: str, max_chars: int = 200) -> str:
    """A short answer: the first line without "Answer:" labels, quotes, markdown or a closing full stop."""
    line = _clean_line(text).rstrip(".!;,").strip(_WRAP)
    return line[:max_chars]


def parse_list(text: str, candidates: Sequence[str]) -> tuple[list[str], list[str]]:
    """The candidates the text lists (in candidate order) and the listed items that match none.

    A JSON list anywhere in the text is read first; otherwise items split on commas, semicolons and lines
    (bullets and numbering dropped). Matching ignores case, accents and punctuation.
    """
    items: list[str] | None = None
    for m in re.finditer(r"\[[^\[\]]*\]", text or "", re.DOTALL):
        try:
            value = json.loads(m.group(0))
        except ValueError:
            continue
        if isinstance(value, list):
            items = [str(v) for v in value]
            break
    if items is None:
        body = _PREFIX.sub("", (text or "").strip())
        items = [
            re.sub(r"^\s*(?:[-*•]|\d+[.)])\s*", "", p).strip().strip(_WRAP) for p in re.split(r"[,;\n]", body)
        ]
        items = [i for i in items if i and i.lower() not in ("none", "nessuno", "[]")]
    index = {" ".join(normalize(c)): k for k, c in enumerate(candidates)}
    chosen: set[int] = set()
    unmatched: list[str] = []
    for item in items:
        k = index.get(" ".join(normalize(item)))
        if k is None:
            unmatched.append(item)
        else:
            chosen.add(k)
    return [candidates[k] for k in sorted(chosen)], unmatched
