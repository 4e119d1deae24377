"""The window under load: a zero-latency model drives a 10,000-goal run with the journal on disk,
the tree, the detail pane and the plots all live, while a 1 ms timer on the same loop measures
how long the loop stalls. Targets: p99 stall < 16 ms, longest < 50 ms, every goal in the tree.

    .venv/bin/python benchmarks/window_bench.py [--goals 10000]   (offscreen; under Xvfb it paints too)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))


async def measure(window, goals: int) -> dict:
    from engine_bench import ZeroLatency

    from goalgui.engine import Limits, Run, RunState

    gaps: list[float] = []
    stop = asyncio.Event()

    async def ticker():
        last = time.perf_counter()
        while not stop.is_set():
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    tick = asyncio.ensure_future(ticker())
    model = ZeroLatency(goals)
    run = Run.create("Benchmark objective", model, sink=window.journal, limits=Limits(max_depth=12, max_goals=goals + 10))
    window.follow(run)
    t0 = time.perf_counter()
    await run.drive()
    engine_seconds = time.perf_counter() - t0
    while window.tree_model.goal_count() < run.record.metrics.goals_created or window.shown_seq < run.record.last_seq:
        await asyncio.sleep(0.01)
    shown = time.perf_counter() - t0
    stop.set()
    await tick
    assert run.state is RunState.COMPLETE
    stalls = sorted(max(0.0, g - 0.001) for g in gaps)
    events = run.record.last_seq
    return {"goals": run.record.metrics.goals_created, "in_tree": window.tree_model.goal_count(), "events": events,
            "events_per_s": events / engine_seconds, "goals_per_s": run.record.metrics.goals_created / engine_seconds,
            "shown_after": shown, "p99": stalls[int(len(stalls) * 0.99)] if stalls else 0.0,
            "max": stalls[-1] if stalls else 0.0, "ticks": len(gaps)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--goals", type=int, default=10_000)
    args = parser.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ["GOALGUI_HOME"] = tempfile.mkdtemp(prefix="goalgui-bench-")
    import qasync
    from PySide6.QtWidgets import QApplication

    from goalgui import paths
    from goalgui.journal import Journal
    from goalgui.settings import Settings
    from goalgui.ui.main_window import MainWindow

    app = QApplication(sys.argv[:1])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    journal = Journal(paths.journal_path())
    window = MainWindow(journal, Settings())
    window.resize(1300, 850)
    window.show()
    with loop:
        r = loop.run_until_complete(measure(window, args.goals))
    journal.close()
    print(f"window live on a {r['goals']:,}-goal run (zero-latency model, journal on disk, "
          f"{os.environ['QT_QPA_PLATFORM']} platform)")
    print(f"  events fed:        {r['events']:,} at {r['events_per_s']:,.0f} events/s ({r['goals_per_s']:,.0f} goals/s)")
    print(f"  goals in the tree: {r['in_tree']:,} of {r['goals']:,}, all shown {r['shown_after']:.2f} s after start")
    print(f"  loop stall:        p99 {r['p99'] * 1000:.1f} ms, longest {r['max'] * 1000:.1f} ms over "
          f"{r['ticks']:,} ticks   (targets: p99 < 16 ms, longest < 50 ms)")


if __name__ == "__main__":
    main()
