"""The task loop's queue view: what `QueueView.set_tasks` costs the event loop.

N tasks (a third done, one running, the rest pending, as a long run looks) are set into a shown
view from empty (a run opened), then updated with one task's state changed (the next task starts:
the row moves to the top, one layout change) and with nothing changed (a batch that did not touch
the queue). Each time includes the repaint that follows (one processEvents, as the window's loop
would run it). The figures guide, they are not a test: no thresholds.

Measured here (offscreen, 2 cores), medians: set_tasks alone 1.4 ms for a one-change update of 200
tasks, 4.6 ms of 1000 (a full set 4.6 and 15 ms; an unchanged one 0.02 ms). The rest of the time
with the repaint is Qt painting the visible rows: a plain QTreeView over a QStandardItemModel of the
same size takes ~7 ms to repaint as well.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/queue_view_bench.py [--tasks 20 200 1000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

REPEATS = 15


def queue(n: int):
    from goalgui.ui.queue_view import QueueTask

    done = n // 3
    tasks = []
    for i in range(n):
        state = "done" if i < done else "running" if i == done else "pending"
        tasks.append(QueueTask(f"g{i}", f"Draft part {i} of the blog series on sustainable packaging", 1 + i % 5,
                               1 + i % 9, i, min(2, i), f"Draft part {i // 2}" if i else "", state,
                               i + 1 if i <= done else None, (i % 4 != 0) if i < done else None))
    return tasks


def step(tasks):
    """The loop's next iteration: the running task is done, the next pending one runs."""
    running = next(k for k, t in enumerate(tasks) if t.state == "running")
    pending = [k for k, t in enumerate(tasks) if t.state == "pending"]
    out = list(tasks)
    out[running] = replace(out[running], state="done", artefact=True)
    if pending:
        nxt = min(pending, key=lambda k: (out[k].effective, out[k].seq))
        out[nxt] = replace(out[nxt], state="running", iteration=out[running].iteration + 1)
    return out


def timed(app, action) -> tuple[float, float]:
    """Milliseconds of the call alone, and with the repaint it causes (the layout is posted first,
    the paint after it: two turns of the loop)."""
    start = time.perf_counter()
    action()
    called = time.perf_counter()
    app.processEvents()
    app.processEvents()
    return (called - start) * 1000, (time.perf_counter() - start) * 1000


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, nargs="+", default=[20, 200, 1000])
    args = parser.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from goalgui.ui.queue_view import QueueView

    app = QApplication(sys.argv[:1])
    health = {"k": 0.9, "k_flag": False, "histogram_flag": False, "artefact_share": 0.75, "duplicates": []}
    for n in args.tasks:
        view = QueueView()
        view.resize(520, 420)
        view.show()
        app.processEvents()
        base = queue(n)
        moved = step(base)
        results = {"full set": [], "one change": [], "unchanged": []}
        for _ in range(REPEATS):
            view.set_tasks([], None)
            app.processEvents()
            app.processEvents()
            results["full set"].append(timed(app, lambda: view.set_tasks(base, health)))
            results["one change"].append(timed(app, lambda: view.set_tasks(moved, health)))
            same = list(moved)
            results["unchanged"].append(timed(app, lambda: view.set_tasks(same, dict(health))))
        for case, times in results.items():
            calls, painted = [c for c, _p in times], [p for _c, p in times]
            print(f"{n:>5} tasks, {case:<10}: set_tasks median {statistics.median(calls):6.2f} ms "
                  f"(worst {max(calls):6.2f}); with the repaint median {statistics.median(painted):6.2f} ms "
                  f"(worst {max(painted):6.2f})")
        view.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
