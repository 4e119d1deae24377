"""The window under load: a zero-latency model drives a 10,000-goal run with the journal on disk,
the tree, the detail pane and the plots all live, while a 1 ms timer on the same loop measures
how long the loop stalls. Targets: p99 stall < 16 ms, longest < 50 ms, every goal in the tree.

--soak runs about a million events (150,000 goals) the same way and samples memory each second:
it should grow with the data (goals in the engine's record, the tree's rows, the findings
memory) and nothing else, and give it back when the window moves on to another run.

    .venv/bin/python benchmarks/window_bench.py [--goals 10000]   (offscreen; under Xvfb it paints too)
    .venv/bin/python benchmarks/window_bench.py --soak
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


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


async def measure(window, goals: int, sample=None) -> dict:
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

    async def sampler():
        while not stop.is_set():
            await asyncio.sleep(1.0)
            sample(run.record.metrics.goals_created, run.record.last_seq, rss_mb())

    tick = asyncio.ensure_future(ticker())
    deepest = 7
    while (4 ** (deepest + 1) - 1) // 3 < goals:
        deepest += 1
    model = ZeroLatency(goals, deepest)
    run = Run.create("Benchmark objective", model, sink=window.journal, limits=Limits(max_depth=12, max_goals=goals + 10))
    window.follow(run)
    sampling = asyncio.ensure_future(sampler()) if sample else None
    t0 = time.perf_counter()
    await run.drive()
    engine_seconds = time.perf_counter() - t0
    while window.tree_model.goal_count() < run.record.metrics.goals_created or window.shown_seq < run.record.last_seq:
        await asyncio.sleep(0.01)
    shown = time.perf_counter() - t0
    stop.set()
    await tick
    if sampling is not None:
        await sampling
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
    parser.add_argument("--soak", action="store_true", help="about a million events, memory sampled")
    args = parser.parse_args()
    if args.soak:
        args.goals = max(args.goals, 150_000)
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
    samples: list[tuple[int, int, float]] = []
    baseline = rss_mb()
    with loop:
        if args.soak:  # the objects alive with a small run shown, to compare with after the big one
            import gc

            loop.run_until_complete(measure(window, 100))
            gc.unfreeze()
            gc.collect()
            objects_before = len(gc.get_objects())
        r = loop.run_until_complete(measure(window, args.goals, (lambda *s: samples.append(s)) if args.soak else None))
        if args.soak:  # move on: the window shows another (small) run, the big one is dropped
            import gc

            big = window.run
            at_end = rss_mb()
            loop.run_until_complete(measure(window, 100))
            del big
            gc.unfreeze()
            gc.collect()
            after = rss_mb()
            objects_after = len(gc.get_objects())
    journal.close()
    print(f"window live on a {r['goals']:,}-goal run (zero-latency model, journal on disk, "
          f"{os.environ['QT_QPA_PLATFORM']} platform)")
    print(f"  events fed:        {r['events']:,} at {r['events_per_s']:,.0f} events/s ({r['goals_per_s']:,.0f} goals/s)")
    print(f"  goals in the tree: {r['in_tree']:,} of {r['goals']:,}, all shown {r['shown_after']:.2f} s after start")
    print(f"  loop stall:        p99 {r['p99'] * 1000:.1f} ms, longest {r['max'] * 1000:.1f} ms over "
          f"{r['ticks']:,} ticks   (targets: p99 < 16 ms, longest < 50 ms)")
    if args.soak:
        print(f"  memory: {baseline:.0f} MB with the window open; then, by goals in the run:")
        for goals, events, mb in samples[:: max(1, len(samples) // 12)] + samples[-1:]:
            print(f"    {goals:>9,} goals {events:>10,} events  {mb:7.0f} MB  "
                  f"({(mb - baseline) * 2**20 / max(goals, 1):,.0f} bytes per goal)")
        print(f"  at the end {at_end:.0f} MB; after moving on to another run and dropping this one {after:.0f} MB")
        print(f"  objects alive with a small run shown: {objects_before:,} before the big run, {objects_after:,} "
              f"after it (what RSS keeps beyond that is the allocator's free lists, not live data)")


if __name__ == "__main__":
    main()
