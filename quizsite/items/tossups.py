"""Tossup text: words, clues (sentences) and the power mark, as the reading clock and IRT need them.

A clue is a sentence. Words are whitespace tokens of the question with the `(*)` power mark removed;
`power_index` is the number of words read before the mark, so a buzz with `word_index <= power_index`
is in power.

Image markers of imported text (`[image]`, `(image)`, `<img ...>`, `[Image: a map of ...]`) are not
words: a reader cannot read a picture aloud, and a marker of five tokens would otherwise be revealed as
five words. They are left out of `words` (so word indices, clue ends and the power index count read
words only) and recorded in `images`: the word index before which each image stands, for a placeholder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

POWER_MARK = "(*)"
# A sentence ends at . ! or ? (optionally followed by a closing quote or bracket) before whitespace and
# an upper-case letter, digit, quote or bracket. Abbreviations such as "St. Louis" split wrongly; the demo
# content avoids them and imported text only loses a little clue precision.
_SENTENCE_END = re.compile(r"""[.!?]["'”’)\]]*$""")
_SENTENCE_START = re.compile(r"""^["'“‘(\[]*[A-Z0-9ÀÈÉÌÒÙ]""")
# A marker, with the whitespace before it and the punctuation after it: "shown [Image: ...]." reads
# "shown." (the full stop stays with the word, so the sentence still ends there).
IMAGE_MARKER = re.compile(
    r"\s*(?:\[\s*(?:image|img|picture|figure|photo)\b[^\]]{0,300}\]"
    r"|\(\s*(?:image|img|picture|figure|photo)(?:\s*\d+)?\s*\)"
    r"|<\s*img\b[^>]{0,1000}>)"
    r"""([.,;:!?"'”’)]*)""",
    re.I,
)
_IMAGE_TOKEN = "\x00image\x00"  # imported text never holds NUL (the importers refuse it)


@dataclass(frozen=True)
class TossupText:
    words: list[str]
    clue_ends: list[int]  # exclusive word index at which each clue ends
    power_index: int | None
    images: tuple[int, ...] = ()  # word index before which each image marker stood

    @property
    def n_words(self) -> int:
        return len(self.words)

    def clue_of(self, word_index: int) -> int:
        """0-based clue being read when `word_index` words have been revealed (the last revealed word's clue)."""
        last = max(word_index - 1, 0)
        for k, end in enumerate(self.clue_ends):
            if last < end:
                return k
        return len(self.clue_ends) - 1

    def clues(self) -> list[str]:
        start, out = 0, []
        for end in self.clue_ends:
            out.append(" ".join(self.words[start:end]))
            start = end
        return out


def tossup_parse(question: str) -> TossupText:
    tokens = IMAGE_MARKER.sub(lambda m: f"{m.group(1)} {_IMAGE_TOKEN} ", question).split()
    words: list[str] = []
    images: list[int] = []
    power_index: int | None = None
    for token in tokens:
        if token == _IMAGE_TOKEN:
            images.append(len(words))
            continue
        if token == POWER_MARK:
            if power_index is None:
                power_index = len(words)
            continue
        if POWER_MARK in token:  # "word(*)" or "(*)word"
            before, _, after = token.partition(POWER_MARK)
            if before:
                words.append(before)
            if power_index is None:
                power_index = len(words)
            if after:
                words.append(after)
            continue
        words.append(token)
    clue_ends: list[int] = []
    for i, word in enumerate(words):
        is_last = i == len(words) - 1
        if is_last or (_SENTENCE_END.search(word) and _SENTENCE_START.match(words[i + 1])):
            clue_ends.append(i + 1)
    return TossupText(words=words, clue_ends=clue_ends, power_index=power_index, images=tuple(images))


def sentence_end_flags(words: list[str]) -> list[bool]:
    """True where a word closes a sentence; the reading clock pauses a little longer after those."""
    return [bool(_SENTENCE_END.search(w)) for w in words]
