"""A tiny word-vector source for tests: five topic axes, clue k on axis k, words mixing some axes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

AXES = {"pane": [0], "gioco": [1], "testa": [2], "osso": [3], "zoccolo": [4], "duro": [0, 1, 2, 3, 4]}
# eligible (length <= len("duro") + 1) words close to three clues and far from two, ranked by construction
WORDS = {
    "pila": [0, 1, 2],
    "mano": [1, 2, 3],
    "rete": [2, 3, 4],
    "uno": [0],
    "lunghissima": [0, 1, 3],  # too long for the solution "duro"
    "dura": [0, 1, 2],  # an inflection of the solution
    "pani": [0, 1, 2],  # an inflection of a clue
    "sole": [5],
}


class FakeVectors:
    name = "fake:test"

    def __init__(self) -> None:
        self.table = {**AXES, **WORDS}

    def vectors(self, words: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(words), 6), np.float32)
        for i, w in enumerate(words):
            for axis in self.table.get(w.lower(), []):
                out[i, axis] = 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1
        return out / norms

    def vocabulary(self) -> list[str] | None:
        return list(WORDS)
