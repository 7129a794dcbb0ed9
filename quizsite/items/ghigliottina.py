"""Distractors for raw La Ghigliottina games (DATA.md): the reframing of the 4-choice version.

A distractor is a word close to three of the five clues and far from the other two, no longer than the
solution plus one letter, never a clue or the solution. Such a word fits part of the game, so it tempts,
but fails the rest, so exactly one choice links all five clues.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path

import numpy as np

from .vectors import WordVectors

WORDLIST = Path(__file__).resolve().parent / "wordlists" / "it_common.txt"
TRIPLES = [list(t) for t in combinations(range(5), 3)]
RESTS = [[i for i in range(5) if i not in t] for t in TRIPLES]
PREFIX = 5  # at most this many shared first letters make two words inflections of one another


def _related(word: str, other: str) -> bool:
    """Same word or an inflection of it (duro/dura, bugia/bugie): all but the last letter shared, up to PREFIX."""
    n = min(len(word), len(other))
    if n < 4:
        return word == other
    k = min(PREFIX, n - 1)
    return word[:k] == other[:k]


class DistractorPicker:
    """Scores one candidate vocabulary against many games; the vocabulary is embedded once."""

    def __init__(self, source: WordVectors, extra_words: Sequence[str] = ()):
        self.source = source
        vocab = source.vocabulary()
        if vocab is None:  # a sentence model proposes no words: use the games' own words and a common list
            vocab = [*extra_words, *WORDLIST.read_text(encoding="utf-8").split()]
        seen: set[str] = set()
        words = []
        for w in vocab:
            w = w.strip().lower()
            if len(w) >= 3 and w.isalpha() and w not in seen:
                seen.add(w)
                words.append(w)
        self.words = words
        self.matrix = source.vectors(words) if words else np.zeros((0, 1), np.float32)

    def pick(self, clues: Sequence[str], solution: str, n: int = 3) -> list[str]:
        """The n best distractors, best first; fewer when the vocabulary has too few eligible words."""
        if len(clues) != 5:
            raise ValueError("a game has five clues")
        solution_l = solution.strip().lower()
        banned = [c.strip().lower() for c in clues] + [solution_l]
        sims = self.matrix @ self.source.vectors(list(clues)).T  # (words, 5)
        close = np.stack([sims[:, t].mean(axis=1) for t in TRIPLES], axis=1)
        far = np.stack([sims[:, r].mean(axis=1) for r in RESTS], axis=1)
        score = (close - far).max(axis=1)
        picked: list[str] = []
        for i in np.argsort(-score, kind="stable"):
            word = self.words[i]
            if len(word) > len(solution_l) + 1:
                continue
            if any(_related(word, b) or _related(b, word) for b in banned):
                continue
            if any(_related(word, p) for p in picked):
                continue
            picked.append(word)
            if len(picked) == n:
                break
        return picked


def choices_shuffle(solution: str, distractors: Sequence[str], seed: str) -> tuple[list[str], int]:
    """The four choices in a reproducible order (seeded by the game), and the solution's index."""
    choices = [solution, *distractors]
    rng = random.Random(hashlib.sha1(seed.encode()).hexdigest())
    rng.shuffle(choices)
    return choices, choices.index(solution)
