"""Size limits every importer enforces, in one place.

A file that breaks one is refused with its line rather than stored: an oversized tossup would be read to
players word by word for minutes, an oversized answer line makes every judgement slow, and deep or huge
structures end up in JSON columns that every page and export reads back. The limits are well above the
published data sets (QANTA/CAIMIRA tossups: at most 162 words, 1,044 characters; answer lines: 153).
"""

from __future__ import annotations

MAX_TOSSUP_WORDS = 2_000  # words per tossup (or clue prefix)
MAX_TOSSUP_CHARS = 20_000  # characters per tossup
# Answer lines, solutions, choices and candidates. Generous for HTML answer lines, whose markup and
# [accept ...; prompt on ...] directives make them several times longer than the answer itself.
MAX_ANSWER_CHARS = 1_000
MAX_TEXT_CHARS = 20_000  # any other text: passages, questions, guesses, names
MAX_ID_CHARS = 200  # external ids (the column's width)
MAX_JSON_DEPTH = 20  # nesting of one record (object in object in list ...)
MAX_CLUES = 200  # clues per tossup (caimira n_clues / total_clues)
MAX_MS = 2**31 - 1  # times in milliseconds (the columns are 32-bit integers)
