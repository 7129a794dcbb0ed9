"""Word-vector sources: the fastText .vec reader, and the sentence-transformers fallback on a few words."""

from __future__ import annotations

import json

import numpy as np
import pytest

from quizsite.items.ghigliottina import DistractorPicker
from quizsite.items.vectors import FastTextVec, WordVectors, text_similarity, word_vectors_open
from tests.conftest import SHARED_DATA


def test_fasttext_vec_reader_and_multiword_clues(tmp_path):
    path = tmp_path / "tiny.vec"
    path.write_text("4 3\nfico 1 0 0\nindia 0 1 0\nmare 0 0 2\nsole 1 1 0\n", encoding="utf-8")
    vec = word_vectors_open(path)
    assert isinstance(vec, FastTextVec) and isinstance(vec, WordVectors) and vec.name == "fasttext:tiny.vec"
    m = vec.vectors(["mare", "fico d'india", "ignoto"])
    assert m[0] == pytest.approx([0, 0, 1])
    assert m[1] == pytest.approx(np.array([1, 1, 0]) / np.sqrt(2))  # mean of the tokens
    assert m[2] == pytest.approx([0, 0, 0])  # unknown: a zero row, similar to nothing
    assert vec.vocabulary() == ["fico", "india", "mare", "sole"]


def test_bad_vector_files_are_named(tmp_path):
    bad = tmp_path / "bad.vec"
    bad.write_text("not a header\n")
    with pytest.raises(ValueError, match="not a fastText .vec file"):
        word_vectors_open(bad)
    with pytest.raises(ValueError, match="not found"):
        word_vectors_open(tmp_path / "missing.vec")


@pytest.mark.slow
def test_sentence_transformers_fallback_on_a_handful_of_real_games():
    """The bundled all-MiniLM-L6-v2, offline, makes three eligible distractors for a real game from the
    default Italian vocabulary."""
    games_file = SHARED_DATA / "ghigliottina" / "games_615.jsonl"
    if not games_file.exists():
        pytest.skip("../shared/data/ghigliottina is not present")
    games = [json.loads(line) for line in games_file.read_text(encoding="utf-8").splitlines()[:8]]
    source = word_vectors_open(None)
    assert source.name.startswith("sentence-transformers:") and source.vocabulary() is None
    picker = DistractorPicker(source)
    game = games[0]
    clues = [game[k] for k in ("w1", "w2", "w3", "w4", "w5")]
    picked = picker.pick(clues, game["solution"])
    assert len(picked) == 3
    for word in picked:
        assert len(word) <= len(game["solution"]) + 1 and word not in clues and word != game["solution"]
    m = source.vectors(["cane", "gatto"])
    assert np.linalg.norm(m, axis=1) == pytest.approx([1, 1], abs=1e-4)
    same, other = text_similarity([("Why does the Nile flood?", "Why does the Nile flood?"),
                                   ("Why does the Nile flood?", "Who painted the Mona Lisa?")], source)
    assert same == pytest.approx(1, abs=1e-4) and other < 0.5
