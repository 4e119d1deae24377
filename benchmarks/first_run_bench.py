"""The first run on the embedded default: does an everyday objective grow a tree worth watching?

Each objective runs as an operator's first run does, through the `goalgui` command
(`goalgui run OBJECTIVE --yes --json`, the default model, strategy and limits), into a real
journal on disk in a fresh GOALGUI_HOME. Printed per objective and in total: goals in the tree,
depth reached, wall seconds (model load included), the outcome, and how many results the
echo/repetition check failed (every verdict the journal holds, retries included, and a discarded
wrap-up). Targets on 2 cores: at least 5 goals at depth 1 or more in most runs, each within about
two minutes, no echo reaching a result.

    .venv/bin/python benchmarks/first_run_bench.py [--only N] [--show]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from goalgui.journal import Journal  # noqa: E402

OBJECTIVES = [
    "Plan a small birthday party for a child",
    "Plan a weekend trip to the mountains",
    "Write a beginner's guide to growing tomatoes",
    "Compare electric and gas cars for a family",
    "Make a checklist for moving to a new apartment",
    "Organise a neighbourhood clean-up day",
    "Prepare a week of healthy school lunches",
    "Write a study plan for a maths exam",
]
ECHO = ("the output repeats",)  # the reasons parsing.degenerate gives


def goalgui() -> list[str]:
    venv = ROOT / ".venv" / "bin" / "goalgui"
    return [str(venv)] if venv.exists() else [sys.executable, "-m", "goalgui"]


def echo_failures(journal: Journal, run_id: str) -> int:
    """Verdicts the echo check gave, over every attempt, and a wrap-up it discarded."""
    count = 0
    for event in journal.events(run_id):
        verdict = getattr(event, "verdict", None)
        if verdict and any(reason in verdict for reason in ECHO):
            count += 1
        text = getattr(event, "text", None)
        if event.type == "summarized" and text and text.startswith("(no wrap-up: the output repeats"):
            count += 1
    return count


def one(objective: str, home: Path) -> dict:
    env = dict(os.environ, GOALGUI_HOME=str(home))
    path = home / "journal.sqlite3"
    t0 = time.perf_counter()
    proc = subprocess.run([*goalgui(), "run", objective, "--yes", "--json", "--journal", str(path)], env=env, capture_output=True,
                          text=True, timeout=900)
    seconds = time.perf_counter() - t0
    if proc.returncode not in (0, 1, 2, 3):
        raise SystemExit(f"goalgui run exited {proc.returncode}: {proc.stderr.strip()[-300:]}")
    report = json.loads(proc.stdout)
    journal = Journal(path)
    try:
        echoes = echo_failures(journal, report["run_id"])
    finally:
        journal.close()
    goals = report["goals"]
    return {"objective": objective, "goals": len(goals), "depth": max(g["depth"] for g in goals),
            "done": sum(g["status"] == "done" for g in goals), "seconds": seconds,
            "outcome": f"{report['state']}/{report['outcome']}", "echoes": echoes, "report": report}


def show(goals: list[dict]) -> None:
    """The tree in pre-order, each goal with the start of its result."""
    children: dict = {}
    for g in goals:
        children.setdefault(g["parent_id"], []).append(g)
    stack = list(reversed(children.get(None, [])))
    while stack:
        g = stack.pop()
        result = " ".join(g["result"].split())[:150]
        print(f"    {'  ' * g['depth']}[{g['status']}] {g['text'][:70]}: {result}")
        stack.extend(reversed(children.get(g["id"], [])))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", type=int, default=len(OBJECTIVES), help="run the first N objectives")
    parser.add_argument("--show", action="store_true", help="print each tree with its results")
    args = parser.parse_args()
    rows = []
    print(f"{'objective':<48} {'goals':>5} {'depth':>5} {'done':>4} {'secs':>6}  {'echo':>4}  outcome")
    with tempfile.TemporaryDirectory(prefix="goalgui-first-run-") as tmp:
        for objective in OBJECTIVES[:args.only]:
            row = one(objective, Path(tmp))
            rows.append(row)
            print(f"{objective[:48]:<48} {row['goals']:>5} {row['depth']:>5} {row['done']:>4} "
                  f"{row['seconds']:>6.1f}  {row['echoes']:>4}  {row['outcome']}", flush=True)
            if args.show:
                show(row["report"]["goals"])
                print(f"    summary: {' '.join(row['report']['summary'].split())[:300]}")
    worth = sum(r["goals"] >= 5 and r["depth"] >= 1 for r in rows)
    print(f"\ntotal: {len(rows)} runs, {sum(r['goals'] for r in rows)} goals, deepest {max(r['depth'] for r in rows)}, "
          f"{sum(r['seconds'] for r in rows):.0f} s (longest {max(r['seconds'] for r in rows):.0f} s), "
          f"{sum(r['echoes'] for r in rows)} echo failures; "
          f"{worth}/{len(rows)} runs with >= 5 goals at depth >= 1")


if __name__ == "__main__":
    main()
