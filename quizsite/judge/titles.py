"""Short forms of a long title that a moderator accepts as the whole title (issue 12, partial titles).

"The Life and Opinions of Tristram Shandy, Gentleman" is asked for and answered as "Tristram
Shandy"; "The History of Tom Jones, a Foundling" as "Tom Jones" or "The History of Tom Jones". Two
short forms count, both read from the title as written: the main title before its subtitle (a
comma or colon), and the name after a formula head ("The Adventures of", "The Tragedy of"). Only
"The ..." heads: "A Tale of Two Cities" is not answered by "Two Cities".
"""

from __future__ import annotations

import re
from functools import lru_cache

from .normalize import normalize

# Formula heads of English titles of the 17th-19th centuries (the novels' and plays' own title
# pages: "The Life and Opinions of", "The History of", "The Tragedy of", "The Adventures of"...).
_HEAD = re.compile(
    r"^the\s+(?:life\s+and\s+(?:strange\s+)?(?:opinions|adventures)|lives?|adventures|history|"
    r"tragedy|tragical\s+history|comedy|tale|story|legend|romance|ballad|lay|memoirs|travels)"
    r"\s+of\s+(?:the\s+)?(?=[A-Z])",
    re.I,
)
_PERSON_HEAD = re.compile(r"^the\s+(?:tragedy|tragical|life|lives|adventures|memoirs)\b", re.I)
_SUBTITLE = re.compile(r"\s*[,:;]\s*")
_PART = re.compile(r"^(?:part|book|volume|vol\.?|episode|chapter)\b", re.I)


@lru_cache(maxsize=8192)
def short_titles(text: str) -> frozenset[str]:
    """Normalised keys of the short forms of ``text`` (empty when it is no long title)."""
    out: set[str] = set()
    parts = _SUBTITLE.split(text.strip(), maxsplit=1)
    main = parts[0]
    if len(parts) > 1 and _PART.match(parts[1]):
        return frozenset()  # "Henry IV, Part 1": the part tells one work of a series from another
    if main != text.strip() and len(main.split()) >= 2:
        out.add(" ".join(normalize(main)))
    m = _HEAD.match(main)
    if m:
        name = main[m.end() :]
        # one word only after a head that names a character ("The Tragedy of Hamlet"), not a
        # subject ("The History of Rome" is not answered by "Rome")
        if len(name.split()) >= 2 or _PERSON_HEAD.match(main):
            out.add(" ".join(normalize(name)))
    out.discard("")
    return frozenset(out)
