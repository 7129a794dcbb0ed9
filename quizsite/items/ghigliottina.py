"""Distractors for raw La Ghigliottina games (DATA.md): the reframing of the 4-choice version.

A distractor is a word close to three of the five clues and far from the other two (cosine similarity
of word vectors), no longer than the solution plus one letter, never a clue or the solution. Such a word
fits part of the game, so it tempts, but fails the rest, so exactly one choice links all five clues.

Candidates come from a real Italian vocabulary: the words of the vector file when the user names one,
otherwise the VOCAB_WORDS most frequent Italian words of the `wordfreq` package (its data ships in the
wheel, so this works offline), less function words. The games' own words are never added to the
candidates: they would make other games' solutions distractors far more often than chance.

A solution shorter than SHORT_MAX_LEN - 1 letters ("a", "po") would leave no eligible word, so the
length rule is relaxed to at most SHORT_MAX_LEN letters and the item records that it was (`Pick`).
A numeric solution ("18") gets numeric distractors (1..100), so the form of a choice gives nothing away.
A vulgar or offensive word is never a candidate (`blocklist.py`: glin-profanity's Italian and English
lists, with Italian plurals and past participles).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations
from pathlib import Path

import numpy as np

from .blocklist import Blocklist, blocklist_open
from .vectors import WordVectors

WORDLISTS = Path(__file__).resolve().parent / "wordlists"
FUNCTION_WORDS = WORDLISTS / "it_function.txt"
VOCAB_WORDS = 15_000  # candidate words from wordfreq's Italian list, most frequent first
SHORT_MAX_LEN = 4  # a distractor may always have this many letters, however short the solution
MIN_WORD_LEN = 3
FREQ_BAND = 0.4  # distractors come first from words within this many Zipf units of the solution's frequency
# (1.0 left the solution the most frequent of the four choices in 42% of the 615 games; 0.4: 26%, chance 25%)
NUMBERS = [str(i) for i in range(1, 101)]
TRIPLES = [list(t) for t in combinations(range(5), 3)]
RESTS = [[i for i in range(5) if i not in t] for t in TRIPLES]
LOOKALIKE = 3  # shared first letters that make a candidate look like a clue
PREFIX = 5  # at most this many shared first letters make two words inflections of one another


def _related(word: str, other: str) -> bool:
    """Same word or an inflection of it (duro/dura, bugia/bugie): all but the last letter shared, up to PREFIX."""
    n = min(len(word), len(other))
    if n < 4:
        return word == other
    k = min(PREFIX, n - 1)
    return word[:k] == other[:k]


def _lookalike(word: str, other: str) -> bool:
    """An inflection, or a word that merely looks like the other (same first LOOKALIKE letters, or one
    inside the other: pan/pane, spacca/spalla). Such choices are banned next to clues and the solution:
    the sentence model rates spelling as closeness, so they would win on looks alone."""
    if _related(word, other) or _related(other, word):
        return True
    if len(word) >= LOOKALIKE and len(other) >= LOOKALIKE and word[:LOOKALIKE] == other[:LOOKALIKE]:
        return True
    return min(len(word), len(other)) >= MIN_WORD_LEN and (word in other or other in word)


def _function_words() -> set[str]:
    lines = FUNCTION_WORDS.read_text(encoding="utf-8").splitlines()
    return {w for line in lines if not line.startswith("#") for w in line.split()}


@lru_cache(maxsize=2)
def italian_vocabulary(size: int = VOCAB_WORDS) -> tuple[str, ...]:
    """The `size` most frequent Italian words of wordfreq (offline) that can be a choice: alphabetic, at
    least MIN_WORD_LEN letters, not a function word."""
    from wordfreq import top_n_list

    stop = _function_words()
    words: list[str] = []
    for w in top_n_list("it", size * 2):
        if w.isalpha() and len(w) >= MIN_WORD_LEN and w not in stop:
            words.append(w)
            if len(words) == size:
                break
    return tuple(words)


def _cache_dir() -> Path | None:
    try:
        from django.conf import settings

        return Path(settings.VAR_DIR) / "cache" / "word-vectors"
    except Exception:  # settings not configured: plain library use, no cache  # noqa: BLE001
        return None


def _vocabulary_vectors(source: WordVectors, words: list[str]) -> np.ndarray:
    """The candidates' vectors. A sentence model is slow on 15,000 words (tens of seconds on two cores)
    and always gives the same vectors, so they are kept in VAR_DIR/cache, keyed by model and words."""
    if not words:
        return np.zeros((0, 1), np.float32)
    folder = _cache_dir() if source.name.startswith("sentence-transformers:") else None
    model = str(getattr(source, "model_path", source.name))
    key = hashlib.sha1("\n".join([model, *words]).encode()).hexdigest()[:20]
    path = folder / f"{key}.npy" if folder else None
    if path is not None and path.exists():
        try:
            cached = np.load(path)
            if cached.shape[0] == len(words):
                return cached
        except (OSError, ValueError):
            pass
    matrix = np.asarray(source.vectors(words), dtype=np.float32)
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp.npy")
            np.save(tmp, matrix)
            tmp.replace(path)
        except OSError:
            pass
    return matrix


def _clean(vocab: Sequence[str]) -> list[str]:
    stop = _function_words()
    seen: set[str] = set()
    words = []
    for w in vocab:
        w = w.strip().lower()
        if len(w) >= MIN_WORD_LEN and w.isalpha() and w not in seen and w not in stop:
            seen.add(w)
            words.append(w)
    return words


def _zipf(words: Sequence[str]) -> np.ndarray:
    from wordfreq import zipf_frequency

    return np.asarray([zipf_frequency(w, "it") for w in words], dtype=np.float32)


@dataclass
class Pick:
    """The distractors for one game, best first, and the length rule they were held to."""

    distractors: list[str]
    max_len: int
    length_relaxed: bool  # the solution is so short that max_len is SHORT_MAX_LEN, not len(solution) + 1
    numeric: bool = False
    chance: float = 0.0  # share of the eligible candidates that are other games' solutions (a random draw's)
    other_solutions: int = 0  # how many of the distractors are other games' solutions


def length_rule(solution: str) -> tuple[int, bool]:
    """(most letters a distractor may have, whether the short-solution relaxation applied)."""
    plain = len(solution.strip())
    if plain + 1 < SHORT_MAX_LEN:
        return SHORT_MAX_LEN, True
    return plain + 1, False


def _coin(seed: str, word: str) -> float:
    """A reproducible uniform draw in [0, 1) for one (game, word)."""
    return int(hashlib.sha1(f"{seed}|{word}".encode()).hexdigest()[:12], 16) / 16**12


class DistractorPicker:
    """Scores one candidate vocabulary against many games; the vocabulary is embedded once.

    `vocabulary` overrides the candidates (tests); otherwise the source's own words (a fastText file's),
    else `italian_vocabulary()`. `solutions` are the solutions of all the games being imported: they are
    candidates like any word, but `keep_other` (0..1) thins them, so that they do not turn up as
    distractors more often than a random draw from the vocabulary would make them (see the importer).
    Words in `blocklist` (default: the configured one, `blocklist_open()`) are never candidates; they are
    embedded with the rest, so the vectors cache does not depend on the blocklist."""

    def __init__(
        self,
        source: WordVectors,
        vocabulary: Sequence[str] | None = None,
        solutions: Sequence[str] = (),
        blocklist: Blocklist | None = None,
    ):
        self.source = source
        vocab = vocabulary if vocabulary is not None else source.vocabulary()
        words = _clean(vocab if vocab is not None else italian_vocabulary())
        matrix = _vocabulary_vectors(source, words)
        self.blocklist = blocklist if blocklist is not None else blocklist_open()
        keep = [i for i, w in enumerate(words) if w not in self.blocklist]
        self.blocked = len(words) - len(keep)  # candidate words left out as vulgar or offensive
        self.words = [words[i] for i in keep]
        self.matrix = matrix[keep]
        self.keep_other = 1.0
        self.name = source.name
        self._numbers: np.ndarray | None = None
        self.solutions = frozenset(s.strip().lower() for s in solutions)
        self._tables: dict[bool, tuple[list[str], np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
        self._cache: dict[str, np.ndarray] = dict(zip(words, matrix, strict=True)) if words else {}

    def warm(self, texts: Sequence[str]) -> None:
        """Embed many clues in one batch (one model call per game would cost far more)."""
        todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if todo:
            self._cache.update(zip(todo, self.source.vectors(todo), strict=True))

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        """The source's vectors, each text embedded once (the picker is a WordVectors itself)."""
        self.warm(texts)
        return np.vstack([self._cache[t] for t in texts]) if texts else np.zeros((0, self.matrix.shape[1]), np.float32)

    def vocabulary(self) -> list[str] | None:
        return None

    def _candidates(self, numeric: bool) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(words, vectors, lengths, is-a-solution mask, Zipf frequency) of the candidates for a word or
        a number."""
        if numeric not in self._tables:
            if numeric:
                words, matrix = NUMBERS, self.source.vectors(NUMBERS)
            else:
                words, matrix = self.words, self.matrix
            lengths = np.asarray([len(w) for w in words], dtype=np.int64)
            is_solution = np.asarray([w in self.solutions for w in words], dtype=bool)
            self._tables[numeric] = (words, matrix, lengths, is_solution, _zipf(words))
        return self._tables[numeric]

    def pick_full(self, clues: Sequence[str], solution: str, n: int = 3, seed: str = "") -> Pick:
        """The n best distractors, with the rule used; fewer when too few words are eligible."""
        if len(clues) != 5:
            raise ValueError("a game has five clues")
        solution_l = solution.strip().lower()
        numeric = solution_l.isdigit()
        max_len, relaxed = length_rule(solution_l)
        words, matrix, lengths, is_solution, zipf = self._candidates(numeric)
        clue_l = [c.strip().lower() for c in clues]
        tokens = [t for c in clue_l for t in c.replace("'", " ").split() if len(t) >= MIN_WORD_LEN]
        banned = list(dict.fromkeys([*clue_l, solution_l, *tokens]))
        if not words:
            return Pick([], max_len, relaxed, numeric)
        sims = matrix @ self.vectors(list(clues)).T  # (words, 5)
        close = np.stack([sims[:, t].mean(axis=1) for t in TRIPLES], axis=1)
        far = np.stack([sims[:, r].mean(axis=1) for r in RESTS], axis=1)
        fits = lengths <= max_len
        others = is_solution.copy()
        if solution_l in self.solutions and solution_l in words:
            others[words.index(solution_l)] = False
        chance = float(others[fits].mean()) if fits.any() else 0.0
        raw = (close - far).max(axis=1)
        solution_zipf = float(_zipf([solution_l])[0])
        # as common as the solution first (within FREQ_BAND Zipf), so frequency does not give it away
        band = np.abs(zipf - solution_zipf) <= FREQ_BAND if solution_zipf > 0 and not numeric else np.ones_like(fits)
        rank = np.where(fits, raw + np.where(band, 10.0, 0.0), -np.inf)
        picked: list[str] = []
        n_other = 0
        for i in np.argsort(-rank, kind="stable"):
            if not fits[i]:
                break
            word = words[i]
            if any(_lookalike(word, b) for b in banned) or any(_related(word, p) for p in picked):
                continue
            if others[i] and self.keep_other < 1.0 and _coin(seed or solution_l, word) >= self.keep_other:
                continue
            picked.append(word)
            n_other += bool(others[i])
            if len(picked) == n:
                break
        return Pick(picked, max_len, relaxed, numeric, chance, n_other)

    def pick(self, clues: Sequence[str], solution: str, n: int = 3) -> list[str]:
        """The n best distractors, best first; fewer when the vocabulary has too few eligible words."""
        return self.pick_full(clues, solution, n).distractors


def choices_shuffle(solution: str, distractors: Sequence[str], seed: str) -> tuple[list[str], int]:
    """The four choices in a reproducible order (seeded by the game), and the solution's index."""
    choices = [solution, *distractors]
    rng = random.Random(hashlib.sha1(seed.encode()).hexdigest())
    rng.shuffle(choices)
    return choices, choices.index(solution)


def nearest_choice_accuracy(source: WordVectors, games: Sequence[tuple[Sequence[str], Sequence[str], int]]) -> float:
    """The plain embedding baseline: pick the choice with the highest mean cosine to the five clues.
    `games` are (clues, choices, label); lower accuracy means harder distractors (chance is 1/4)."""
    if not games:
        return 0.0
    clue_m = source.vectors([c for clues, _, _ in games for c in clues]).reshape(len(games), 5, -1)
    choice_m = source.vectors([c for _, choices, _ in games for c in choices]).reshape(len(games), 4, -1)
    scores = np.einsum("gcd,gkd->gk", clue_m, choice_m) / 5  # (games, 4): mean cosine to the clues
    labels = np.asarray([label for _, _, label in games])
    return float((scores.argmax(axis=1) == labels).mean())


CARD_SPLIT_SCHEME = "card sizes 90% test / 10% train, drawn by id hash; not the card's own membership"


def card_split(ext_ids: Sequence[str], test_share: float = 0.9, seed: str = "ghigliottinai-card") -> dict[str, str]:
    """The HF card's proportions (test = floor(0.9 n), train = the rest: 553 / 62 for the 615 games),
    drawn reproducibly by a hash of each id. The card's own membership was drawn without a seed and
    cannot be recovered (shared/data/ghigliottina/SOURCE.md), so this is the same sizes, not the same games."""
    order = sorted(ext_ids, key=lambda e: hashlib.sha1(f"{seed}:{e}".encode()).hexdigest())
    n_test = int(len(order) * test_share)
    n_train = len(order) - n_test
    return {e: ("train" if i < n_train else "test") for i, e in enumerate(order)}


def most_frequent_choice_accuracy(games: Sequence[tuple[Sequence[str], Sequence[str], int]]) -> float:
    """A check that needs no vectors: pick the choice most frequent in Italian (wordfreq). Far above 1/4
    would mean the solution stands out as the common word among rarer distractors."""
    if not games:
        return 0.0
    from wordfreq import zipf_frequency

    hits = 0
    for _, choices, label in games:
        freqs = [zipf_frequency(c, "it") for c in choices]
        hits += int(max(range(4), key=lambda k: freqs[k]) == label)
    return hits / len(games)
