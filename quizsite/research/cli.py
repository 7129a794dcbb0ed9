"""Command-line options shared by `fit_caimira` and `export`: which responses, and how humans are grouped."""

from __future__ import annotations

from typing import Any

from quizsite.agents.models import Agent

from .prepare import GROUPINGS, DataSpec
from .selectors import data_spec_names_check


def csv_list(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def add_data_arguments(parser) -> None:
    parser.add_argument("--sets", default="", help="item set slugs, comma separated (default: all)")
    parser.add_argument("--item-kinds", default="", help="item kinds, comma separated (default: all)")
    parser.add_argument("--agent-kinds", default=",".join(k.value for k in Agent.Kind))
    parser.add_argument("--since", default="", help="ISO date or datetime, inclusive")
    parser.add_argument("--until", default="", help="ISO date or datetime, exclusive")
    parser.add_argument("--grouping", default="individual", choices=GROUPINGS,
                        help="individual; groups (every player at every size); paper (CAIMIRA's disjoint groups)")
    parser.add_argument("--group-sizes", default="1,5,10,15")
    parser.add_argument("--groups-per-size", type=int, default=5, help="with --grouping paper")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--include-practice", action="store_true",
                        help="keep annotation practice answers (left out by default)")
    parser.add_argument("--campaign", default="",
                        help="annotation campaign slugs, comma separated: their answers only (default: every response)")


def data_spec(options: dict[str, Any]) -> DataSpec:
    """Raises ValueError on a bad value or an unknown item set or campaign (the commands turn it into a
    CommandError)."""
    spec = DataSpec(
        item_sets=csv_list(options["sets"]), item_kinds=csv_list(options["item_kinds"]),
        agent_kinds=csv_list(options["agent_kinds"]), since=options["since"], until=options["until"],
        grouping=options["grouping"], group_sizes=[int(s) for s in csv_list(options["group_sizes"])],
        groups_per_size=options.get("groups_per_size", 5), seed=options["seed"],
        include_practice=bool(options.get("include_practice")), campaigns=csv_list(options.get("campaign") or ""),
    )
    data_spec_names_check(spec)
    return spec
