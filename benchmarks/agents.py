"""Benchmark: the built-in AI agent kinds, speed and accuracy, in one run on this CPU.

    python benchmarks/agents.py              # every registered tossup kind, demo sets + QANTA-2026 (~2 min)
    python benchmarks/agents.py --kinds qb-guesser-tfidf retriever-bm25   # a quicker run

Builds a scratch SQLite database (in a temporary folder) with the demo content, the shared QANTA-2026
adversarial tossups (../shared/data/protobowl/qanta2026_adversarial/derived_caimira, imported as
`import_items --format caimira` does) and "halves": each demo tossup cut into its first three clues
(halves-early) and its last two (halves-late), so that answers repeat without a question repeating
(every demo and QANTA answer is otherwise unique, and every kind holds out the tossup it answers).

For every registered kind that answers tossups it runs the agent through the app's own runner
(quizsite.agents.runner, as `agent_run --wait` does) on demo-tossups, halves-late and qanta26, and prints:
- questions (item x clue prefix) per second, including `prepare` (training / indexing), and the ratio
  to a baseline measured in the same run: an agent that guesses a random answer of the bank, through the
  same runner, judge and database writes (so the ratio is the kind's own cost);
- accuracy over every clue prefix and after the last clue, beside chance (that random agent's accuracy,
  and for a top-k retriever k / number of distinct answers);
- on QANTA, beside the 16 real AI systems and the pooled humans of that release (mean ruling over the
  clue-prefix queries each answered, from responses.jsonl).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
QANTA = REPO.parent / "shared" / "data" / "protobowl" / "qanta2026_adversarial" / "derived_caimira"
SETS = ["demo-tossups", "halves-late", "qanta26"]


def django_setup(var_dir: str) -> None:
    os.environ.update(
        DJANGO_SETTINGS_MODULE="quizsite.settings.local",
        DATABASE_URL=f"sqlite:///{var_dir}/bench.sqlite3",
        THINKALIKE_VAR_DIR=var_dir,
        DEBUG="0",
        LOG_LEVEL="WARNING",
        CELERY_TASK_ALWAYS_EAGER="1",
    )
    os.environ.pop("REDIS_URL", None)
    sys.path.insert(0, str(REPO))
    import django

    django.setup()


def build(tmp: Path) -> None:
    from django.core.management import call_command

    from quizsite.items.demo import demo_load
    from quizsite.items.importers import items_import
    from quizsite.items.models import Item

    call_command("migrate", verbosity=0)
    demo_load()
    if QANTA.is_dir():
        items_import(fmt="caimira", path=QANTA, set_slug="qanta26")
    early, late = [], []
    for item in Item.objects.filter(item_set__slug="demo-tossups").order_by("id"):
        words, ends = item.data["words"], item.data["clue_ends"]
        base = {"answer": item.answer, "category": item.category}
        early.append({**base, "id": item.external_id + "-early", "question": " ".join(words[: ends[2]])})
        late.append({**base, "id": item.external_id + "-late", "question": " ".join(words[ends[2] :])})
    for name, rows in (("halves-early", early), ("halves-late", late)):
        path = tmp / f"{name}.jsonl"
        path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
        items_import(fmt="quizbowl", path=path, set_slug=name)


def random_kind():
    """The baseline: a random answer of the bank (fixed seed), through the same runner and judge."""
    from quizsite.agents.kinds import _bank
    from quizsite.agents.kinds.base import AgentKind, Output, register
    from quizsite.items.models import Item

    class RandomAnswer(AgentKind):
        name = "bench-random-answer"
        item_kinds = frozenset({Item.Kind.TOSSUP})
        per_clue = True

        def prepare(self, items):
            self.titles = sorted(
                {
                    _bank.main_answer(a)
                    for a in Item.objects.filter(kind=Item.Kind.TOSSUP).values_list("answer", flat=True)
                }
            )
            self.rng = random.Random(0)

        def answer(self, question):
            return Output(guess=self.rng.choice(self.titles), confidence=1 / len(self.titles))

    return register(RandomAnswer)


def run_one(kind: str, slug: str) -> dict:
    from quizsite.agents import runner, runs, services
    from quizsite.items.models import ItemSet, Response

    version, _ = services.agentversion_register(name=f"bench-{kind}", kind=kind)
    run = runs.agentrun_create(version=version, item_set=ItemSet.objects.get(slug=slug))
    t0 = time.perf_counter()
    run = runner.agentrun_execute(run_id=run.pk)
    seconds = time.perf_counter() - t0
    if run.status != "done":
        raise SystemExit(f"{kind} on {slug}: {run.status}: {run.error}")
    rows = list(
        Response.objects.filter(agent=version.agent, item__item_set__slug=slug).values_list(
            "correct", "word_index", "n_words"
        )
    )
    last = [c for c, w, n in rows if w == n]
    return {
        "kind": kind,
        "set": slug,
        "questions": len(rows),
        "tossups": len(last),
        "seconds": seconds,
        "qps": len(rows) / seconds,
        "acc_all": sum(c for c, *_ in rows) / len(rows),
        "acc_last": sum(last) / len(last),
    }


def qanta_systems() -> list[tuple[str, str, float, int]]:
    """(id, type, mean ruling, rulings) of every agent in the release's responses.jsonl."""
    types = {json.loads(line)["id"]: json.loads(line)["type"] for line in (QANTA / "agents.jsonl").open()}
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for line in (QANTA / "responses.jsonl").open():
        r = json.loads(line)
        tally[r["agent_id"]][0] += 1
        tally[r["agent_id"]][1] += int(r["ruling"])
    return sorted(((a, types.get(a, "?"), k / n, n) for a, (n, k) in tally.items()), key=lambda t: -t[2])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--kinds", nargs="*", help="kinds to run (default: every registered kind that answers tossups)"
    )
    ap.add_argument("--sets", nargs="*", default=SETS)
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="agents-bench-") as tmp:
        django_setup(tmp)
        t0 = time.perf_counter()
        build(Path(tmp))
        from quizsite.agents import kinds
        from quizsite.items.models import Item

        registry = kinds.load_all()
        chosen = args.kinds or sorted(k for k, c in registry.items() if Item.Kind.TOSSUP in c.item_kinds)
        baseline = random_kind().name
        sets = [s for s in args.sets if s != "qanta26" or QANTA.is_dir()]
        print(
            f"setup (migrate, demo, QANTA import, halves): {time.perf_counter() - t0:.1f} s; CPU threads {os.cpu_count()}"
        )
        distinct = {
            s: len(
                {
                    r
                    for r in Item.objects.filter(item_set__slug=s, kind="tossup").values_list(
                        "answer", flat=True
                    )
                }
            )
            for s in sets
        }
        results = []
        for slug in sets:
            base = run_one(baseline, slug)
            results.append(base)
            print(
                f"\n== {slug}: {base['tossups']} tossups, {base['questions']} questions (clue prefixes), {distinct[slug]} answers"
            )
            print(f"{'kind':22} {'q/s':>8} {'x base':>7} {'acc all':>8} {'acc last':>9} {'chance':>7}")
            print(
                f"{'random answer (base)':22} {base['qps']:8.1f} {1:7.2f} {base['acc_all']:8.3f} {base['acc_last']:9.3f} {'':>7}"
            )
            for kind in chosen:
                r = run_one(kind, slug)
                k = int(registry[kind].defaults.get("k", 1))
                chance = max(
                    base["acc_last"],
                    min(1.0, k / distinct[slug]) if "k" in registry[kind].defaults else 1 / distinct[slug],
                )
                r["chance"], r["ratio"] = chance, r["qps"] / base["qps"]
                results.append(r)
                print(
                    f"{kind:22} {r['qps']:8.1f} {r['ratio']:7.2f} {r['acc_all']:8.3f} {r['acc_last']:9.3f} {chance:7.3f}"
                )
        if "qanta26" in sets:
            print(
                "\n== QANTA-2026 adversarial: the release's own systems (mean ruling over the clue prefixes they answered)"
            )
            for agent, typ, acc, n in qanta_systems():
                print(f"  {acc:6.3f}  {n:5d} rulings  {typ:5} {agent}")
        print(f"\ntotal {time.perf_counter() - t0:.1f} s")
        if args.json:
            Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
