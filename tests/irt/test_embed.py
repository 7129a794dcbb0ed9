"""Embedding template, content-hash cache, and the bundled default embedder (offline)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from irt import IRTDataError
from irt.embed import DEFAULT_MODEL, embed_queries, embed_texts, item_text, resolve_model


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
def test_real_embedder_cli_embed_then_fit_from_cache_then_cold_predict(tmp_path, monkeypatch):
    """embed 3 queries with the bundled model; fit embeds nothing again (cache); predict a new text."""
    import json

    import irt.embed
    from irt.cli import main
    from tests.irt.irt_testutil import write_jsonl

    q = write_jsonl(tmp_path / "q.jsonl", [
        {"id": "q1", "text": "This river flows through Cairo.", "answer": "Nile"},
        {"id": "q2", "text": "This physicist proposed special relativity.", "answer": "Einstein"},
        {"id": "q3", "text": "This composer wrote the Jupiter symphony.", "answer": "Mozart"},
    ])
    a = write_jsonl(tmp_path / "a.jsonl", [{"id": "ai", "type": "ai"}, {"id": "hu", "type": "human"}])
    r = write_jsonl(tmp_path / "r.jsonl", [
        {"query_id": f"q{i}", "agent_id": ag, "ruling": int(ag == "ai" or i == 1)} for i in (1, 2, 3) for ag in ("ai", "hu")
    ])
    cache = tmp_path / "cache"
    assert main(["embed", "--queries", str(q), "--out", str(tmp_path / "E.npz"), "--cache", str(cache)]) == 0
    ids, emb, meta = irt.load_embeddings(tmp_path / "E.npz")
    assert ids == ["q1", "q2", "q3"] and emb.shape == (3, 384) and meta["model"] == DEFAULT_MODEL
    assert np.allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-4) and os.environ["HF_HUB_OFFLINE"] == "1"

    def no_model(*args, **kwargs):
        raise AssertionError("the model was loaded although every text is cached")

    monkeypatch.setattr(irt.embed, "load_encoder", no_model)
    out = tmp_path / "fit"
    assert main(["fit", "--queries", str(q), "--agents", str(a), "--responses", str(r), "--out", str(out),
                 "--val-fraction", "0", "--epochs", "20", "--cache", str(cache), "--no-progress"]) == 0
    assert json.loads((out / "config.json").read_text())["embedder"] == {"model": DEFAULT_MODEL, "template": "default"}
    monkeypatch.undo()
    write_jsonl(tmp_path / "new.jsonl", [{"id": "n1", "text": "This river flows through Khartoum.", "answer": "Nile"}])
    write_jsonl(tmp_path / "p.jsonl", [{"query_id": "n1", "agent_id": "ai"}])
    assert main(["predict", "--fit", str(out), "--queries", str(tmp_path / "new.jsonl"), "--pairs",
                 str(tmp_path / "p.jsonl"), "--out", str(tmp_path / "o.jsonl"), "--cache", str(cache)]) == 0
    assert 0 < json.loads((tmp_path / "o.jsonl").read_text())["p"] < 1


def test_embedding_progress_counts_items_done_of_all(fake_encoder, tmp_path, monkeypatch):
    import irt.embed

    monkeypatch.setattr(irt.embed, "PROGRESS_CHUNK", 2)
    embed_texts(["a", "b"], model="fake", encoder=fake_encoder, cache=tmp_path)  # cached before
    steps: list[tuple[int, int]] = []
    texts = ["a", "b", "c", "d", "c", "e", "f"]  # 2 cached, "c" twice, 4 new distinct texts: 2 chunks
    out = embed_texts(texts, model="fake", encoder=fake_encoder, cache=tmp_path, progress=lambda *a: steps.append(a))
    assert steps == [(2, 7), (5, 7), (7, 7)]  # cached first, then each chunk (both "c" items at once)
    assert out.shape[0] == 7 and fake_encoder.seen[-4:] == ["c", "d", "e", "f"]
