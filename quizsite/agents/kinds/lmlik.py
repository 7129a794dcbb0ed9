"""Language-model likelihood agents for multiple choice: no generation, each option scored by the
log-likelihood a causal LM gives it, the protocol of lm-eval-harness `multiple_choice` tasks that ITA-Bench
runs on the Ghigliottina MCQA (see shared/data/ghigliottina/SOURCE.md).

Two prompts are scored for every item and both recorded in `raw`:

- "mcqa": the question with the options lettered A., B., ... and the continuation " A", " B", ...;
- "cloze": the question without the list and the option itself as the continuation (SOURCE.md names
  ITA-Bench's cloze variant but not its text: this is our reading of it).

`protocol` says which decides the answer and `normalize` whether a continuation's log-likelihood is
divided by its length in bytes (lm-eval's `acc_norm`) instead of summed (`acc`). `model_path` is any local
directory that `transformers` loads with AutoModelForCausalLM / AutoTokenizer; nothing is fetched from a hub.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from quizsite.items.models import Item

from .base import AgentKind, Output, Question, register
from .parsing import LETTERS, lettered

PROTOCOLS = ("mcqa", "cloze")


def _argmax(values: Sequence[float]) -> int:
    """The best option; among equals the first shown (question_for fixes the order per item)."""
    return max(range(len(values)), key=lambda k: (values[k], -k))


class _LMLikelihood(AgentKind):
    defaults: ClassVar[dict[str, Any]] = {
        "model_path": "",
        "protocol": "mcqa",
        "normalize": False,
        "batch_size": 8,
        "device": "cpu",
        "max_length": 0,  # 0: the model's own context size; longer prompts lose their start
    }

    def __init__(self, settings: dict[str, Any] | None = None) -> None:
        super().__init__(settings)
        s = self.settings
        if s["protocol"] not in PROTOCOLS:
            raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}, not {s['protocol']!r}")
        path = Path(str(s["model_path"] or ""))
        if not s["model_path"] or not path.is_dir():
            raise ValueError(
                f"{self.name}: model_path must be a local directory with a causal LM, got {s['model_path']!r}"
            )
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self._torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        self.model = (
            AutoModelForCausalLM.from_pretrained(str(path), local_files_only=True).to(s["device"]).eval()
        )
        limit = int(s["max_length"]) or int(
            getattr(self.model.config, "max_position_embeddings", 0)
            or getattr(self.model.config, "n_positions", 0)
            or 2048
        )
        self.max_length = limit
        tok = self.tokenizer
        self.pad_id = next(i for i in (tok.pad_token_id, tok.eos_token_id, 0) if i is not None)
        self.start_id = next((i for i in (tok.bos_token_id, tok.eos_token_id) if i is not None), self.pad_id)

    # prompts ---------------------------------------------------------------------------------------
    def mcqa_prompt(self, q: Question) -> str:
        raise NotImplementedError

    def cloze_prompt(self, q: Question) -> str:
        raise NotImplementedError

    def _requests(self, q: Question) -> list[tuple[str, str]]:
        if len(q.options) < 2:
            raise ValueError(f"item {q.item_id}: {self.name} needs at least two options")
        mc, cz = self.mcqa_prompt(q), self.cloze_prompt(q)
        return [(mc, f" {LETTERS[i]}") for i in range(len(q.options))] + [(cz, f" {o}") for o in q.options]

    # scoring ---------------------------------------------------------------------------------------
    def _encode(self, context: str, continuation: str) -> tuple[list[int], list[int]]:
        """Context and continuation token ids as lm-eval splits them: encode the whole and the context and
        take the difference, so a token that spans the boundary belongs to the continuation."""
        tok = self.tokenizer
        spaces = len(context) - len(context.rstrip(" "))
        if spaces:
            context, continuation = context[:-spaces], context[-spaces:] + continuation
        whole = tok(context + continuation, add_special_tokens=False)["input_ids"]
        ctx = tok(context, add_special_tokens=False)["input_ids"]
        if whole[: len(ctx)] == ctx and len(whole) > len(ctx):
            cont = whole[len(ctx) :]
        else:
            cont = tok(continuation, add_special_tokens=False)["input_ids"]
        return [self.start_id, *ctx], cont

    def loglikelihoods(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[float, int]]:
        """Sum of the continuation's token log-probabilities after the context, and its token count."""
        torch = self._torch
        encoded = []
        for context, continuation in pairs:
            if not continuation:
                raise ValueError("an empty continuation has no likelihood")
            ctx, cont = self._encode(context, continuation)
            cont = cont[-self.max_length :]
            ctx = ctx[-(self.max_length - len(cont)) :] if self.max_length > len(cont) else ctx[-1:]
            encoded.append((ctx, cont))
        out: list[tuple[float, int]] = [(0.0, 0)] * len(encoded)
        order = sorted(range(len(encoded)), key=lambda i: -(len(encoded[i][0]) + len(encoded[i][1])))
        size = max(1, int(self.settings["batch_size"]))
        for start in range(0, len(order), size):
            batch = order[start : start + size]
            rows = [encoded[i][0] + encoded[i][1] for i in batch]
            width = max(len(r) for r in rows)
            ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
            mask = torch.zeros((len(rows), width), dtype=torch.long)
            for r, row in enumerate(rows):
                ids[r, : len(row)] = torch.tensor(row)
                mask[r, : len(row)] = 1
            with torch.no_grad():
                logits = self.model(
                    input_ids=ids.to(self.model.device), attention_mask=mask.to(self.model.device)
                ).logits
            for r, i in enumerate(batch):
                ctx, cont = encoded[i]
                n_ctx, n_cont = len(ctx), len(cont)
                logp = torch.log_softmax(logits[r, n_ctx - 1 : n_ctx - 1 + n_cont].float(), dim=-1)
                target = torch.tensor(cont, device=logp.device)
                out[i] = (float(logp.gather(1, target[:, None]).sum()), n_cont)
        return out

    def answer(self, question: Question) -> Output:
        return self.answer_many([question])[0]

    def answer_many(self, questions: Iterable[Question]) -> list[Output]:
        qs = list(questions)
        started = time.perf_counter()
        requests = [self._requests(q) for q in qs]
        flat = self.loglikelihoods([p for r in requests for p in r])
        elapsed = (time.perf_counter() - started) * 1000
        outs, at = [], 0
        for q, reqs in zip(qs, requests, strict=True):
            n = len(q.options)
            scores = flat[at : at + len(reqs)]
            at += len(reqs)
            by = {
                "mcqa": [s for s, _ in scores[:n]],
                "cloze": [s for s, _ in scores[n:]],
            }
            by["mcqa_norm"] = [s / len(c.encode()) for s, (_, c) in zip(by["mcqa"], reqs[:n], strict=True)]
            by["cloze_norm"] = [s / len(c.encode()) for s, (_, c) in zip(by["cloze"], reqs[n:], strict=True)]
            key = self.settings["protocol"] + ("_norm" if self.settings["normalize"] else "")
            deciding = by[key]
            best = _argmax(deciding)
            top = max(deciding)
            weights = [math.exp(s - top) for s in deciding]
            raw = {
                "model_path": str(self.settings["model_path"]),
                "decided_by": key,
                "choice_index": best,
                **{f"scores_{k}": [round(v, 6) for v in vs] for k, vs in by.items()},
                "picks": {k: _argmax(vs) for k, vs in by.items()},
            }
            outs.append(
                Output(
                    q.options[best],
                    confidence=weights[best] / sum(weights),
                    raw=raw,
                    latency_ms=elapsed / max(1, len(qs)),
                    tokens=sum(c for _, c in scores),
                )
            )
        return outs


@register
class LMGhigliottinaChoose(_LMLikelihood):
    """ITA-Bench's Ghigliottina MCQA prompt, scored by likelihood."""

    name = "lmlik-ghigliottina-choose"
    item_kinds = frozenset({Item.Kind.GHIGLIOTTINA})
    task = "ghigliottina-choose"

    QUESTION = "Domanda: Quale tra i seguenti concetti è quello che lega le parole date?"

    def mcqa_prompt(self, q: Question) -> str:
        return f"Date le parole: {', '.join(q.clues)}\n{self.QUESTION}\n{lettered(q.options)}\nRisposta:"

    def cloze_prompt(self, q: Question) -> str:
        return f"Date le parole: {', '.join(q.clues)}\n{self.QUESTION}\nRisposta:"


@register
class LMArchaeologyChoose(_LMLikelihood):
    """Which of the questions the passage answers, scored by likelihood (the cloze form scores each question
    as the continuation of the passage; length-normalised by default, as the questions differ in length)."""

    name = "lmlik-archaeology-choose"
    item_kinds = frozenset({Item.Kind.ARCHAEOLOGY})
    task = "archaeology-choose"
    defaults = {**_LMLikelihood.defaults, "protocol": "cloze", "normalize": True}

    def mcqa_prompt(self, q: Question) -> str:
        return (
            f"Text: {q.text}\nQuestion: Which of the following questions does the text answer?\n"
            f"{lettered(q.options)}\nAnswer:"
        )

    def cloze_prompt(self, q: Question) -> str:
        return f"Text: {q.text}\nThe question this text answers:"
