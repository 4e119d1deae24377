"""The plan graph: how long laying out and painting a plan holds the event loop.

A plan of N steps with random backward dependencies (0 to 3 each, on any earlier step; states mixed,
one in eight running) is written to a JSON file and read back, as a journaled plan would be; then
`PlanGraph.set_versions` lays it out in a 500x300 pane and `grab()` paints it. Two plans of each
size take turns, so every call lays out; survivors are frozen between repetitions, as the window's
GcPacer does. Also timed: the same data again (must do nothing, and schedules no paint) and a
state-only update (the running steps done, the last one running: a recolour and a paint, no layout).
Target: a 100-step plan is laid out and painted in < 100 ms.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/plan_graph_bench.py [--steps 10 100 500]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

STATES = ("pending", "pending", "done", "done", "running", "failed", "skipped", "abandoned")


def write_plan(n: int, path: Path, rng: random.Random) -> None:
    words = "search read compare estimate draft the market report figures prices sources table risks".split()
    steps = [{"id": i, "goal": " ".join(rng.choices(words, k=rng.randint(4, 18))),
              "tool": rng.choice([None, "web_search", "read_file", "python", "write_file"]),
              "dependencies": sorted(rng.sample(range(1, i), min(i - 1, rng.randint(0, 3)))),
              "state": rng.choice(STATES), "goal_id": f"goal-{i}"} for i in range(1, n + 1)]
    path.write_text(json.dumps({"steps": steps}))


def read_plan(path: Path):
    from goalgui.ui.plan_graph import GraphStep

    return [GraphStep(s["id"], s["goal"], s["tool"], tuple(s["dependencies"]), s["state"], s["goal_id"])
            for s in json.loads(path.read_text())["steps"]]


def figures(times: list[float]) -> str:
    return f"median {statistics.median(times) * 1000:6.2f} ms, worst {max(times) * 1000:6.2f} ms"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, nargs="+", default=[10, 100, 500])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from goalgui.ui.plan_graph import PlanGraph

    app = QApplication(sys.argv[:1])
    rng = random.Random(4)
    folder = Path(tempfile.mkdtemp(prefix="goalgui-plan-graph-bench-"))
    for n in args.steps:
        paths = [folder / f"plan-{n}-{k}.json" for k in "ab"]
        for path in paths:
            write_plan(n, path, rng)
        graph = PlanGraph()
        graph.resize(500, 300)
        graph.show()
        app.processEvents()  # the pane is on screen before the plan arrives, as in the window
        layout, same, states = [], [], []
        for i in range(args.repeat):
            start = time.perf_counter()
            steps = read_plan(paths[i % 2])  # two plans in turn: each call is a different shape
            graph.set_versions([steps])
            graph.grab()
            layout.append(time.perf_counter() - start)
            start = time.perf_counter()
            graph.set_versions([list(steps)])  # a batch that changed nothing in the plan: no paint follows
            same.append(time.perf_counter() - start)
            laid_out = graph.layouts
            moved = [replace(s, state="done") if s.state == "running" else s for s in steps]
            moved[-1] = replace(moved[-1], state="running")
            start = time.perf_counter()
            graph.set_versions([moved])
            graph.grab()
            states.append(time.perf_counter() - start)
            assert graph.layouts == laid_out, "a state-only update laid the plan out again"
            gc.freeze()  # what the window's GcPacer does once a second
        print(f"{n:>5} steps: load + lay out + paint {figures(layout)}; same data {figures(same)}; "
              f"states only + paint {figures(states)}")
        graph.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
