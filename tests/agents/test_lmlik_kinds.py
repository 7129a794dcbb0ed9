"""Likelihood agents on a tiny randomly initialised GPT-2 built here, loaded by path like a real model."""

from __future__ import annotations

import json
import time

import pytest

from quizsite.agents.kinds import REGISTRY, question_for
from quizsite.items.demo import DEMO_DIR


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory):  # type: ignore[no-untyped-def]
    """A word-level tokenizer trained on the demo files and a 2-layer GPT-2 with random weights (seed 0)."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    texts = []
    for path in DEMO_DIR.glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            texts.extend(str(v) for v in json.loads(line).values())
    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(texts, trainers.WordLevelTrainer(special_tokens=["[PAD]", "[UNK]", "[EOS]"]))
    wrapped = PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", eos_token="[EOS]"
    )
    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=tok.get_vocab_size(),
        n_positions=512,
        n_embd=32,
        n_layer=2,
        n_head=2,
        eos_token_id=wrapped.eos_token_id,
        bos_token_id=wrapped.eos_token_id,
    )
    path = tmp_path_factory.mktemp("tiny-lm")
    GPT2LMHeadModel(config).save_pretrained(path)
    wrapped.save_pretrained(path)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the test machine's cores are shared: one thread is ten times faster here
    yield path
    torch.set_num_threads(threads)


def full_sequence_loglik(agent, context: str, continuation: str) -> float:  # type: ignore[no-untyped-def]
    """The continuation's log-likelihood computed independently: one forward pass, no batching or padding."""
    import torch

    ctx, cont = agent._encode(context, continuation)
    ids = torch.tensor([ctx + cont])
    with torch.no_grad():
        logp = torch.log_softmax(agent.model(input_ids=ids).logits[0], dim=-1)
    return float(sum(logp[len(ctx) - 1 + k, t] for k, t in enumerate(cont)))


def test_batched_scores_equal_one_at_a_time_scores(demo_items, tiny_lm):
    games = demo_items["ghigliottina"][:6]
    batched = REGISTRY["lmlik-ghigliottina-choose"]({"model_path": str(tiny_lm), "batch_size": 7})
    single = REGISTRY["lmlik-ghigliottina-choose"]({"model_path": str(tiny_lm), "batch_size": 1})
    qs = [question_for(g) for g in games]
    a, b = batched.answer_many(qs), single.answer_many(qs)
    for x, y in zip(a, b, strict=True):
        assert x.raw["scores_mcqa"] == pytest.approx(y.raw["scores_mcqa"], abs=1e-4)
        assert x.raw["scores_cloze"] == pytest.approx(y.raw["scores_cloze"], abs=1e-4)
    q = qs[0]
    assert a[0].raw["scores_cloze"][2] == pytest.approx(
        full_sequence_loglik(batched, batched.cloze_prompt(q), f" {q.options[2]}"), abs=1e-4
    )
    assert a[0].raw["scores_mcqa"][3] == pytest.approx(
        full_sequence_loglik(batched, batched.mcqa_prompt(q), " D"), abs=1e-4
    )


def test_the_deciding_protocol_picks_its_best_option(demo_items, tiny_lm):
    games = demo_items["ghigliottina"]
    qs = [question_for(g) for g in games]
    for protocol, normalize in [("mcqa", False), ("cloze", False), ("cloze", True)]:
        agent = REGISTRY["lmlik-ghigliottina-choose"](
            {"model_path": str(tiny_lm), "protocol": protocol, "normalize": normalize}
        )
        outs = agent.answer_many(qs)
        key = protocol + ("_norm" if normalize else "")
        for q, out in zip(qs, outs, strict=True):
            scores = out.raw[f"scores_{key}"]
            assert out.guess == q.options[scores.index(max(scores))] and out.raw["decided_by"] == key
            assert 0 < out.confidence <= 1 and out.tokens > 0
        again = agent.answer_many(qs)
        assert [o.guess for o in again] == [o.guess for o in outs]  # deterministic


def test_mcqa_prompt_is_ita_bench_s(demo_items, tiny_lm):
    agent = REGISTRY["lmlik-ghigliottina-choose"]({"model_path": str(tiny_lm)})
    q = question_for(demo_items["ghigliottina"][0])
    assert agent.mcqa_prompt(q) == (
        f"Date le parole: {', '.join(q.clues)}\nDomanda: Quale tra i seguenti concetti è quello che lega le parole date?\n"
        f"A. {q.options[0]}\nB. {q.options[1]}\nC. {q.options[2]}\nD. {q.options[3]}\nRisposta:"
    )


def test_archaeology_on_the_demo_set(demo_items, tiny_lm):
    items = demo_items["archaeology"]
    agent = REGISTRY["lmlik-archaeology-choose"]({"model_path": str(tiny_lm), "batch_size": 8})
    started = time.perf_counter()
    outs = agent.answer_many([question_for(i) for i in items])
    rate = len(items) / (time.perf_counter() - started)
    acc = sum(o.guess == i.data["true_question"] for o, i in zip(outs, items, strict=True)) / len(items)
    print(
        f"lmlik-archaeology-choose, random tiny GPT-2: accuracy {acc:.3f} on {len(items)} items, {rate:.1f} items/s"
    )
    # random weights know nothing: only that every answer is one of the item's questions is asserted
    assert all(o.guess in question_for(i).options for o, i in zip(outs, items, strict=True))
    assert outs[0].raw["decided_by"] == "cloze_norm"


def test_a_missing_model_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="model_path must be a local directory"):
        REGISTRY["lmlik-ghigliottina-choose"]({"model_path": str(tmp_path / "nope")})
    with pytest.raises(ValueError, match="protocol must be one of"):
        REGISTRY["lmlik-ghigliottina-choose"]({"model_path": str(tmp_path), "protocol": "vibes"})
