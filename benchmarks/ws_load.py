"""Live play under load: the project's play room against a minimal `websockets` server, same clients, same run.

    python benchmarks/ws_load.py                      # embedded default: 1 x 500 and 50 x 10
    python benchmarks/ws_load.py --profile services   # PostgreSQL + Redis, 1 daphne
    python benchmarks/ws_load.py --profile services --procs 2 4 --cases 1x500
    python benchmarks/ws_load.py --profile services --procs 2 --route spread room   # clients placed by room, too
    python benchmarks/ws_load.py --sweep 100 200 400 800 --cases 1xN   # players at the latency bound
    python benchmarks/ws_load.py --joins-only --rounds 3             # the joins alone, and the server's CPU for them
    python benchmarks/ws_load.py --joins-only --minimal-roster      # the same, the minimal hello carrying the roster
    python benchmarks/ws_load.py --churn 100 --cases 1x500           # players joining and leaving while a room reads

Prints a table (ms; ratios = project / minimal) and saves a plot of latency percentiles against players
to benchmarks/out/ws_load.png.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.wsbench import (  # noqa: E402
    CaseResult,
    MinimalServer,
    ProjectServer,
    join_phase,
    measured_case,
    now_ms,
)

OUT = Path(__file__).resolve().parent / "out"
BOUND_MS = 100.0


def parse_case(text: str, n: int | None = None) -> tuple[int, int]:
    rooms, per_room = text.lower().split("x")
    if per_room == "n":
        if n is None:
            raise SystemExit("a case of N players needs --sweep")
        return int(rooms), n
    return int(rooms), int(per_room)


def fmt(x: float) -> str:
    return "-" if isinstance(x, float) and math.isnan(x) else (f"{x:.1f}" if isinstance(x, float) else str(x))


def show(label: str, project: CaseResult, minimal: CaseResult) -> None:
    a, b = project.row(), minimal.row()
    print(f"\n{label}: {project.players} players, {project.deliveries} word deliveries "
          f"(minimal {minimal.deliveries}); project server RSS {', '.join(f'{m:.0f}' for m in project.rss_mb)} MB")
    print(f"{'':14}{'project':>10}{'minimal':>10}{'ratio':>8}")
    # With several processes, spread splits into the fan-out within a process and the hop between them.
    split = ("in_proc_p99", "hop_p50", "hop_p99") if project.hop else ()
    keys = ("spread_p50", "spread_p99", *split, "late_p50", "late_p99", "join_s", "buzz_p99", "ruling_p99", "cpu_s",
            "client_cpu_s")
    for key in keys:
        ratio = a[key] / b[key] if b[key] and not math.isnan(b[key]) and b[key] > 0 else float("nan")
        print(f"{key:14}{fmt(a[key]):>10}{fmt(b[key]):>10}{fmt(ratio):>8}")
    for key in ("lost", "duplicated", "missing_end", "refused"):
        print(f"{key:14}{a[key]:>10}{b[key]:>10}")
    if project.churned or minimal.churned:
        print(f"{'churned':14}{project.churned:>10}{minimal.churned:>10}")
    worst = sorted(project.worst_late_by_word.items(), key=lambda kv: -kv[1])[:5]
    print("latest words (index: ms):", ", ".join(f"{i}: {v:.0f}" for i, v in sorted(worst)))


def show_gc(pauses: list[tuple[int, float, int]]) -> None:
    """The server's full collections within the case (benchmarks/gcprobe): each stopped its process's
    rooms for that long, so the longest bounds the lateness the collector alone can cause."""
    full = [(ms, n) for gen, ms, n in pauses if gen == 2]
    longest = max(full, default=(0.0, 0))
    print(f"server full collections in the case: {len(full)}, longest {longest[0]:.1f} ms "
          f"({longest[1]} objects collected); other pauses over 2 ms: {len(pauses) - len(full)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", choices=["embedded", "services"], default="embedded")
    ap.add_argument("--procs", type=int, nargs="+", default=[1], help="ASGI processes (services only for > 1)")
    ap.add_argument("--servers", nargs="+", choices=["uvicorn", "daphne"], default=["uvicorn"],
                    help="ASGI servers to run the project on, each measured beside the minimal server")
    ap.add_argument("--cases", nargs="+", default=["1x500", "50x10"], help="ROOMSxPLAYERS, or ROOMSxN with --sweep")
    ap.add_argument("--sweep", type=int, nargs="*", default=None, help="player counts for a ROOMSxN case")
    ap.add_argument("--ms-per-word", type=int, default=50)
    ap.add_argument("--client-loop", choices=["asyncio", "uvloop"], default="asyncio",
                    help="event loop of the load clients (500 clients in one process can saturate a core)")
    ap.add_argument("--joins-only", action="store_true",
                    help="time only the joins of each case (no tossup), --rounds times, minimal and project alternating")
    ap.add_argument("--rounds", type=int, default=1, help="with --joins-only: rounds per case")
    ap.add_argument("--minimal-roster", action="store_true",
                    help="the minimal server's hello lists the room's players, as PROTOCOL.md's hello asks")
    ap.add_argument("--route", nargs="+", choices=["spread", "room"], default=["spread"],
                    help="how clients are placed over several processes: round-robin (any proxy), or by a hash of "
                         "the room (a proxy that hashes the room's path); each is measured in turn")
    ap.add_argument("--churn", type=float, default=0,
                    help="players a second who join a side room and leave again while the rooms read")
    args = ap.parse_args()
    if args.joins_only:
        joins_only(args)
        return

    OUT.mkdir(exist_ok=True)
    run = client_runner(args.client_loop)
    points: list[tuple[str, int, CaseResult]] = []
    for name, procs, minimal, server in project_servers(args):
        for case, n, route in [(c, n, r) for c in args.cases for n in (args.sweep or [None]) for r in routes(args, procs)]:
            rooms, per_room = parse_case(case, n)
            label = f"{name} {args.profile} x{procs} proc{by_room_label(route)}, {rooms} x {per_room}"
            base = run(measured_case([minimal.proc.pid], minimal.ports, rooms, per_room,
                                     ms_per_word=args.ms_per_word, name="minimal", churn_per_s=args.churn))
            started = now_ms()
            got = run(measured_case([p.pid for p in server.procs], server.ports, rooms, per_room,
                                    ms_per_word=args.ms_per_word, name=label, churn_per_s=args.churn, route=route))
            got.rss_mb = server.rss_mb()
            show(label, got, base)
            show_gc(server.gc_pauses(started, now_ms()))
            shape = f"{rooms} room{'s' if rooms > 1 else ''}"
            points += [(f"{name} {args.profile} {procs}p{by_room_label(route)}, {shape}", rooms * per_room, got),
                       (f"minimal, {shape}", rooms * per_room, base)]
    if args.sweep:
        print("\nplayers per process at the latency bound (p99 late and spread < 100 ms):")
        for name, procs, route in [(s, p, r) for p in args.procs for s in args.servers for r in routes(args, p)]:
            ok = [n for lab, n, r in points if lab.startswith(f"{name} {args.profile} {procs}p{by_room_label(route)},")
                  and r.row()["late_p99"] < BOUND_MS and r.row()["spread_p99"] < BOUND_MS and not r.lost]
            print(f"  {name}, {procs} process(es){by_room_label(route)}: {max(ok) // procs if ok else 0} players per "
                  f"process (max {max(ok) if ok else 0})")
    plot(points, OUT / "ws_load.png")
    print(f"\nplot: {OUT / 'ws_load.png'}")


def joins_only(args: argparse.Namespace) -> None:
    """The join figures alone: the minimal server's hello carries no player list and it tells nobody of
    a join, so what the project does beyond it (a player row, the roster in the hello, presence for the
    room) shows here without a tossup's noise. Server CPU is /proc utime + stime over the joins."""
    run = client_runner(args.client_loop)
    for name, procs, minimal, server in project_servers(args):
        for case, route in [(c, r) for c in args.cases for r in routes(args, procs)]:
            rooms, per_room = parse_case(case)
            print(f"\n{name} {args.profile} x{procs} proc{by_room_label(route)}, {rooms} x {per_room}: joins (s), server CPU (s)")
            for r in range(args.rounds):
                m = run(join_phase([minimal.proc.pid], minimal.ports, rooms, per_room))
                p = run(join_phase([x.pid for x in server.procs], server.ports, rooms, per_room, route=route))
                print(f"  round {r + 1}: project {p[0]:.2f} s, CPU {p[1]:.2f} s; minimal {m[0]:.2f} s, CPU "
                      f"{m[1]:.2f} s; ratio {p[0] / m[0]:.1f}x; no hello: {p[2]} / {m[2]}")


def routes(args: argparse.Namespace, procs: int) -> list[str]:
    """With one process every route is the same: measure it once."""
    return args.route if procs > 1 else args.route[:1]


def by_room_label(route: str) -> str:
    return " by room" if route == "room" else ""


def client_runner(loop: str) -> Callable[..., Any]:
    if loop == "uvloop":
        import uvloop

        return uvloop.run
    return asyncio.run


def project_servers(args: argparse.Namespace) -> Iterator[tuple[str, int, MinimalServer, ProjectServer]]:
    """The minimal server for the whole run, and each project configuration in turn, closed after it."""
    minimal = MinimalServer(roster=args.minimal_roster)
    try:
        for name, procs in [(s, p) for p in args.procs for s in args.servers]:
            server = ProjectServer(profile=args.profile, procs=procs, server=name)
            try:
                yield name, procs, minimal, server
            finally:
                server.close()
    finally:
        minimal.close()


def plot(points: list[tuple[str, int, CaseResult]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, metric in zip(axes, ("late", "spread"), strict=True):
        for label in sorted({p[0] for p in points}):
            rows = sorted(((n, r.row()) for lab, n, r in points if lab == label), key=lambda nr: nr[0])
            for pct, style in (("p50", "--"), ("p99", "-")):
                ax.plot([n for n, _ in rows], [row[f"{metric}_{pct}"] for _, row in rows], style, marker="o",
                        label=f"{label} {pct}")
        ax.set_xlabel("players")
        ax.set_ylabel(f"{metric} (ms)")
        ax.set_yscale("log")
        ax.axhline(BOUND_MS, color="grey", lw=0.5)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


if __name__ == "__main__":
    main()
