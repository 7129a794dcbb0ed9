"""CPU of one play transition on the database thread, with the leader's roster and without it.

    python benchmarks/play_transitions.py                   # rooms of 10 and 500 players, SQLite
    python benchmarks/play_transitions.py --players 10 --rounds 200

A room is made on a fresh SQLite database in a temporary folder, players join it, then each round
runs the transitions a tossup goes through (next, buzz, a wrong answer) by calling the services
directly, as the leader's group commit does on its database thread. Each transition is timed in the
thread's own CPU time (`time.thread_time`), which other processes on a shared machine do not inflate;
the figure is the median over the rounds. Two variants run in the same process, alternating round
by round: "roster" (the leader lends the services its players, play/roster.py: what the app does)
and "rows" (the services read the buzzer's row and every player's score, as before the roster; the
baseline). Joins are timed one at a time (`room_join`) and as one batch (`room_join_many`, what a
crowd arriving together costs per player).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def setup_django(var: str) -> None:
    from benchmarks.wsbench import bench_tossups

    os.environ.update(DJANGO_SETTINGS_MODULE="quizsite.settings.local", THINKALIKE_VAR_DIR=var, DEBUG="0",
                      LOG_LEVEL="WARNING")
    items = Path(var) / "bench.jsonl"
    items.write_text("\n".join(json.dumps(t) for t in bench_tossups()) + "\n")
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "-v0"], cwd=REPO, check=True)
    subprocess.run([*manage, "import_items", "--format", "quizbowl", str(items), "--set", "bench"], cwd=REPO,
                   check=True, capture_output=True)
    import django

    django.setup()


def timed(fn, **kwargs) -> float:  # type: ignore[no-untyped-def]
    t = time.thread_time()
    fn(**kwargs)
    return (time.thread_time() - t) * 1000


def run(players: int, rounds: int) -> dict[str, dict[str, float]]:
    from datetime import timedelta

    from django.utils import timezone

    from quizsite.agents.services import agent_get_or_create_guests, new_guest_key
    from quizsite.play import leases, services
    from quizsite.play.models import Player
    from quizsite.play.roster import Roster

    now = timezone.now()
    room = leases.room_take(slug=f"bench-{players}", driver="bench", now=now, lease=timedelta(hours=1),
                            initial_settings={"set": "bench"})
    assert room is not None
    guests = agent_get_or_create_guests(items=[(new_guest_key(), f"p{i}") for i in range(players)])
    single = [timed(services.room_join, room=room, agent_id=a.pk, name=a.name, now=now) for a in guests[:10]]
    crowd = agent_get_or_create_guests(items=[(new_guest_key(), f"c{i}") for i in range(players)])
    t = time.thread_time()
    services.room_join_many(room=room, requests=[(a.pk, a.name) for a in crowd], now=now)
    many = (time.thread_time() - t) * 1000 / players
    services.room_join_many(room=room, requests=[(a.pk, a.name) for a in guests], now=now)
    table, online, agents = leases.players_load(room=room, online_since=now - timedelta(hours=1))
    roster = Roster(players=table, agents=agents)
    pids = list(table)
    times: dict[str, dict[str, list[float]]] = {v: {"next": [], "buzz": [], "answer": []} for v in ("roster", "rows")}
    for r in range(rounds):
        variant = "roster" if r % 2 == 0 else "rows"
        if variant == "roster":
            room.roster = roster  # type: ignore[attr-defined]
        elif hasattr(room, "roster"):
            del room.roster
        at = timezone.now()
        times[variant]["next"].append(timed(services.room_next, room=room, player_id=pids[0], now=at, qid=room.qid,
                                            present=pids))
        services.room_start_reading(room=room, now=at)
        later = at + timedelta(seconds=2)
        times[variant]["buzz"].append(timed(services.room_buzz, room=room, player_id=pids[1], qid=room.qid, now=later))
        times[variant]["answer"].append(timed(services.room_answer, room=room, player_id=pids[1], qid=room.qid,
                                              text="definitely not the answer", now=later, heard=players))
        if variant == "roster":  # the leader takes in the new score after the commit, as it does from `scores`
            table[pids[1]]["score"] = Player.objects.get(pk=pids[1]).score
    out = {v: {k: statistics.median(xs) for k, xs in d.items()} for v, d in times.items()}
    out["join"] = {"one at a time": statistics.median(single), f"batch of {players}, per player": many}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--players", type=int, nargs="+", default=[10, 500])
    ap.add_argument("--rounds", type=int, default=120)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="play-transitions-") as var:
        setup_django(var)
        for players in args.players:
            got = run(players, args.rounds)
            print(f"\nroom of {players} players (median CPU ms on the database thread, {args.rounds // 2} rounds each)")
            print(f"{'':12}{'roster':>10}{'rows':>10}{'ratio':>8}")
            for kind in ("next", "buzz", "answer"):
                a, b = got["roster"][kind], got["rows"][kind]
                print(f"{kind:12}{a:>10.3f}{b:>10.3f}{a / b:>8.2f}")
            one, batch = got["join"].values()
            print(f"join: one at a time {one:.3f} ms, in a batch {batch:.3f} ms per player ({batch / one:.2f}x)")


if __name__ == "__main__":
    main()
