"""Benchmark: the built-in agent kinds on the demo sets: accuracy (or F1 / similarity) and items per second.

    python benchmarks/agent_kinds.py                              # the embedding kinds (bundled MiniLM)
    python benchmarks/agent_kinds.py --lm-path /models/some-causal-lm   # + the likelihood kinds
    python benchmarks/agent_kinds.py --chat-base-url http://localhost:8000/v1 --chat-model NAME [--chat-key-env VAR]

Loads the demo files into a throw-away SQLite database, answers every demo item through `question_for` +
`answer_many` exactly as a run does, and scores with `agents.scoring.agent_answer_score` (the rules people
are scored by). The romqa threshold is tuned by the kind's own `prepare` on a train split of clusters;
only the held-out items are reported, for five seeds, beside two baselines measured on the same items.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from math import comb
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def django_setup(var_dir: str) -> None:
    os.environ.update(
        DJANGO_SETTINGS_MODULE="quizsite.settings.local",
        DATABASE_URL=f"sqlite:///{var_dir}/bench.sqlite3",
        THINKALIKE_VAR_DIR=var_dir,
        DEBUG="0",
        LOG_LEVEL="WARNING",
    )
    os.environ.pop("REDIS_URL", None)
    sys.path.insert(0, str(REPO))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from quizsite.items.demo import DEMO_DIR, DEMO_SETS
    from quizsite.items.importers import items_import

    for filename, fmt, slug, name in DEMO_SETS:
        items_import(fmt=fmt, path=DEMO_DIR / filename, set_slug=slug, set_name=name)


def timed(agent, questions):  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    outs = agent.answer_many(questions)
    return outs, len(questions) / (time.perf_counter() - started)


def binomial_tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p): how often chance alone does this well."""
    return sum(comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k, n + 1))


def report_choice(name: str, agent, items, truth, chance: float, task: str) -> None:  # type: ignore[no-untyped-def]
    from quizsite.agents.kinds import question_for
    from quizsite.agents.scoring import agent_answer_score

    outs, rate = timed(agent, [question_for(i) for i in items])
    right = sum(agent_answer_score(i, o.guess, task=task).correct for o, i in zip(outs, items, strict=True))
    assert right == sum(o.guess == truth(i) for o, i in zip(outs, items, strict=True))
    print(
        f"{name:28s} accuracy {right / len(items):.3f} ({right}/{len(items)}; chance {chance:.2f}, "
        f"P(chance >= this) = {binomial_tail(right, len(items), chance):.3g}); {rate:.1f} items/s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lm-path", help="a local causal LM directory for the lmlik kinds")
    parser.add_argument("--chat-base-url", help="an OpenAI-compatible endpoint for the chat kinds")
    parser.add_argument("--chat-model", default="")
    parser.add_argument("--chat-key-env", default="", help="NAME of the environment variable holding the key")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as var_dir:
        django_setup(var_dir)
        import numpy as np
        import torch

        from quizsite.agents.kinds import REGISTRY, question_for
        from quizsite.agents.scoring import agent_answer_score
        from quizsite.items.models import Item

        print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
        by_kind = {k: list(Item.objects.filter(kind=k).order_by("id")) for k in Item.Kind.values}
        arch, games, romqa = by_kind["archaeology"], by_kind["ghigliottina"], by_kind["romqa"]
        games = [g for g in games if g.data.get("choices")]
        true_q = lambda i: i.data["true_question"]  # noqa: E731
        solution = lambda i: i.answer  # noqa: E731

        started = time.perf_counter()
        embed_choose = REGISTRY["embed-archaeology-choose"]()
        embed_choose.answer(question_for(arch[0]))  # loads the model once, outside the timings
        print(f"embedding model loaded in {time.perf_counter() - started:.1f} s")
        report_choice("embed-archaeology-choose", embed_choose, arch, true_q, 1 / 3, "archaeology-choose")
        report_choice(
            "embed-ghigliottina-choose",
            REGISTRY["embed-ghigliottina-choose"](),
            games,
            solution,
            0.25,
            "ghigliottina-choose",
        )

        writer = REGISTRY["embed-archaeology-write"]()
        writer.prepare(arch)
        outs, rate = timed(writer, [question_for(i) for i in arch])
        scores = [
            agent_answer_score(i, o.guess, task="archaeology-write") for o, i in zip(outs, arch, strict=True)
        ]
        print(
            f"{'embed-archaeology-write':28s} similarity to the true question: mean {np.mean([s.score for s in scores]):.3f}, "
            f"correct (>= 0.8) {sum(s.correct for s in scores)}/{len(arch)}; {rate:.1f} items/s"
        )

        for seed in range(5):
            agent = REGISTRY["embed-romqa-select"]({"seed": seed})
            agent.prepare(romqa)
            outs, rate = timed(agent, [question_for(i) for i in romqa])
            held = [(o, i) for o, i in zip(outs, romqa, strict=True) if o.raw["split"] == "held-out"]
            f1 = np.mean([agent_answer_score(i, o.guess).score for o, i in held])
            every = np.mean(
                [agent_answer_score(i, [c["text"] for c in i.data["candidates"]]).score for _, i in held]
            )
            one = np.mean(
                [
                    2
                    * sum(c["is_answer"] for c in i.data["candidates"])
                    / len(i.data["candidates"])
                    / (1 + sum(c["is_answer"] for c in i.data["candidates"]))
                    for _, i in held
                ]
            )
            print(
                f"{'embed-romqa-select':28s} seed {seed}: threshold {agent.threshold:.2f} (train F1 {agent.train_f1:.3f}); "
                f"held-out F1 {f1:.3f} on {len(held)} items; tick every candidate {every:.3f}, one random pick {one:.3f}; "
                f"{rate:.1f} items/s"
            )

        if args.lm_path:
            for name, items, truth, chance, task in [
                ("lmlik-ghigliottina-choose", games, solution, 0.25, "ghigliottina-choose"),
                ("lmlik-archaeology-choose", arch, true_q, 1 / 3, "archaeology-choose"),
            ]:
                for protocol, norm in [("mcqa", False), ("cloze", False), ("cloze", True)]:
                    agent = REGISTRY[name](
                        {"model_path": args.lm_path, "protocol": protocol, "normalize": norm}
                    )
                    report_choice(
                        f"{name} {protocol}{'_norm' if norm else ''}", agent, items, truth, chance, task
                    )
        if args.chat_base_url:
            settings = {
                "base_url": args.chat_base_url,
                "model": args.chat_model,
                "api_key_env": args.chat_key_env,
            }
            report_choice(
                "chat-ghigliottina-choose",
                REGISTRY["chat-ghigliottina-choose"](settings),
                games,
                solution,
                0.25,
                "ghigliottina-choose",
            )
            report_choice(
                "chat-archaeology-choose",
                REGISTRY["chat-archaeology-choose"](settings),
                arch,
                true_q,
                1 / 3,
                "archaeology-choose",
            )


if __name__ == "__main__":
    main()
