"""Benchmark: how hard the imported La Ghigliottina distractors are, on an installed set, per card split.

    python manage.py import_items --format ghigliottina ../shared/data/ghigliottina/games_615.jsonl --set gh615 --split card
    python manage.py agent_run embed-ghigliottina-choose --set gh615 --wait
    python benchmarks/ghigliottina_quality.py --set gh615 [--agent embed-ghigliottina-choose]

Reads the set from the configured database (THINKALIKE_VAR_DIR / DATABASE_URL, as manage.py does), and
prints, for all 4-choice items and for each `data.split` part (`--split card`: train 62 / test 553):

* the agent's accuracy from the responses its run stored (the latest version of AGENT that answered the
  set; chance 0.25), chance-corrected as (acc - 1/4) / (3/4) (0: chance, 1: perfect, below 0: worse than
  a random pick), and binomial tails under chance, both ways;
* the most-frequent-word baseline (wordfreq Zipf, as the import report computes it);
* the share of distractors that are other games' solutions, against the share random draws from the
  candidate vocabulary under each game's length rule would give (the import report's chance figure,
  recomputed here from the stored items: wordfreq's Italian vocabulary less the configured blocklist).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from math import comb
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def binomial_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p)."""
    return sum(comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(0, k + 1))


def other_solution_chance(items: Sequence, solutions: set[str], vocab: Sequence[str]) -> float:
    """Mean over games of the share of candidates (under the game's length rule) that are other games'
    solutions: `DistractorPicker.pick_full`'s `chance`, from the stored items."""
    from quizsite.items.ghigliottina import NUMBERS, length_rule

    shares = []
    for item in items:
        solution = item.answer.strip().lower()
        max_len = length_rule(solution)[0]
        pool = NUMBERS if solution.isdigit() else vocab
        fits = [w for w in pool if len(w) <= max_len]
        if fits:
            shares.append(sum(1 for w in fits if w in solutions and w != solution) / len(fits))
    return sum(shares) / len(shares) if shares else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--set", dest="item_set", default="gh615", help="item set slug (default gh615)")
    parser.add_argument(
        "--agent", default="embed-ghigliottina-choose", help="agent whose stored answers to score"
    )
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quizsite.settings.local")
    sys.path.insert(0, str(REPO))
    import django

    django.setup()
    from quizsite.agents.models import AgentVersion
    from quizsite.items.blocklist import blocklist_open
    from quizsite.items.ghigliottina import italian_vocabulary, most_frequent_choice_accuracy
    from quizsite.items.models import Item, Response

    items = list(
        Item.objects.filter(item_set__slug=args.item_set, kind=Item.Kind.GHIGLIOTTINA).order_by("id")
    )
    if not items:
        sys.exit(f"no Ghigliottina items in set {args.item_set!r}")
    solutions = {i.answer.strip().lower() for i in items}
    blocked = blocklist_open()
    vocab = [w for w in italian_vocabulary() if w not in blocked]

    answered = Response.objects.filter(
        source=Response.Source.AGENT_RUN,
        item__item_set__slug=args.item_set,
        agent__agent_version__config__name=args.agent,
    )
    version = AgentVersion.objects.filter(agent__responses__in=answered).order_by("-number").first()
    correct: dict[int, bool] = {}
    if version is not None:
        for item_id, ok in (
            answered.filter(agent=version.agent).order_by("id").values_list("item_id", "correct")
        ):
            correct[item_id] = bool(ok)
    print(
        f"set {args.item_set}: {len(items)} games; agent {version or args.agent + ' (no stored answers)'}; "
        f"blocklist {blocked.label}"
    )

    parts = [("all", items)]
    for split in sorted({str(i.data.get("split")) for i in items if i.data.get("split")}):
        parts.append((split, [i for i in items if i.data.get("split") == split]))
    for name, part in parts:
        four = [i for i in part if i.data.get("choices")]
        print(f"\n[{name}] {len(part)} games, {len(four)} with 4 choices, {len(part) - len(four)} open")
        mine = [correct[i.pk] for i in four if i.pk in correct]
        if mine:
            k, n = sum(mine), len(mine)
            acc = k / n
            print(
                f"  {args.agent}: accuracy {acc:.3f} ({k}/{n}; chance 0.25), chance-corrected "
                f"{(acc - 0.25) / 0.75:+.3f}; P(X <= {k}) = {binomial_cdf(k, n, 0.25):.3g}, "
                f"P(X >= {k}) = {1 - binomial_cdf(k - 1, n, 0.25):.3g} under chance"
            )
        games = [(i.data["clues"], i.data["choices"], i.data["label"]) for i in four]
        print(f"  most-frequent-word choice: {most_frequent_choice_accuracy(games):.3f}")
        hits = total = 0
        for i in four:
            own = i.answer.strip().lower()
            for c in i.data["choices"]:
                if c.strip().lower() != own:
                    total += 1
                    hits += c.strip().lower() in solutions
        chance = other_solution_chance(four, solutions, vocab)
        sigma = (chance * (1 - chance) / total) ** 0.5 if total else 0.0
        print(
            f"  distractors that are other games' solutions: {hits}/{total} = {hits / max(total, 1):.1%} "
            f"(random vocabulary draws: {chance:.1%}, sd of the share {sigma:.1%})"
        )


if __name__ == "__main__":
    main()
