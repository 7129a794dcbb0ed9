"""Accuracy and speed of the answer judge against a naive baseline, on the labelled case file.

Run from the project root:  python benchmarks/judge.py  [--seconds 2]

Accuracy counts every case in tests/judge/cases.jsonl, the xfail-marked ones included. Throughput is
measured in this one process pinned to one core, with answer lines already parsed (the parser
cache is warm, as it is in a running game); nothing that depends on the given answer is cached.
The baseline is "rapidfuzz fuzz.WRatio(whole answer line, given) >= 80 -> accept, else reject",
timed the same way in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rapidfuzz import fuzz  # noqa: E402

from quizsite.judge import JUDGE_VERSION, judge  # noqa: E402

CASES = ROOT / "tests" / "judge" / "cases.jsonl"
VERDICTS = ("accept", "prompt", "reject")


def baseline(
    answerline: str, given: str, question_text: str | None = None, word_index: int | None = None
) -> str:
    return "accept" if fuzz.WRatio(answerline, given) >= 80 else "reject"


def judge_verdict(
    answerline: str, given: str, question_text: str | None = None, word_index: int | None = None
) -> str:
    return judge(answerline, given, question_text, word_index).verdict


def load() -> list[dict]:
    with CASES.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def evaluate(fn: Callable[..., str], cases: list[dict]) -> tuple[float, dict[str, dict[str, int]]]:
    matrix = {e: dict.fromkeys(VERDICTS, 0) for e in VERDICTS}
    for c in cases:
        matrix[c["expected"]][
            fn(c["answerline"], c["given"], c.get("question_text"), c.get("word_index"))
        ] += 1
    correct = sum(matrix[v][v] for v in VERDICTS)
    return correct / len(cases), matrix


def throughput(fn: Callable[..., str], cases: list[dict], seconds: float) -> float:
    args = [(c["answerline"], c["given"], c.get("question_text"), c.get("word_index")) for c in cases]
    for a in args:  # warm: parse every line once, as a running game has
        fn(*a)
    done, start = 0, time.perf_counter()
    while True:
        for a in args:
            fn(*a)
        done += len(args)
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return done / elapsed


def show_matrix(matrix: dict[str, dict[str, int]]) -> None:
    header = "expected / got"
    print(f"    {header:>16}" + "".join(f"{v:>9}" for v in VERDICTS))
    for e in VERDICTS:
        print(f"    {e:>16}" + "".join(f"{matrix[e][g]:>9}" for g in VERDICTS))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=2.0, help="timing window per contender")
    opts = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    cases = load()
    counts = {v: sum(c["expected"] == v for c in cases) for v in VERDICTS}
    xfail = sum(bool(c.get("xfail")) for c in cases)
    print(
        f"judge {JUDGE_VERSION} on {len(cases)} cases ({', '.join(f'{v} {n}' for v, n in counts.items())}; "
        f"{xfail} marked xfail, counted here)"
    )
    results = {}
    for name, fn in (("judge", judge_verdict), ("baseline WRatio>=80", baseline)):
        acc, matrix = evaluate(fn, cases)
        rate = throughput(fn, cases, opts.seconds)
        results[name] = rate
        print(f"\n{name}: accuracy {acc:.2%}, {rate:,.0f} judgments/s on one core")
        show_matrix(matrix)
    ratio = results["judge"] / results["baseline WRatio>=80"]
    print(f"\nthroughput judge / baseline: {ratio:.2f}x")


if __name__ == "__main__":
    main()
