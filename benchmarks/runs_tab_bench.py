"""The Runs tab following the journal: how long one refresh holds the event loop.

N finished runs are journaled into a real journal on disk (the product's Journal, the bundled
rehearsal at zero latency); the Runs tab is shown and refreshed the way its 2-second timer does
(`journal.runs()` off the loop, then `RunsView.show_runs` on it). Target: the refresh the timer does
(nothing new, or a live run's figures) holds the loop < 16 ms at 300 runs; a new set of rows (a run
started) < 100 ms (before the fix the columns re-measured per cell: 37 s for 300).

    .venv/bin/python benchmarks/runs_tab_bench.py [--runs 100 300 1000]
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


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, nargs="+", default=[100, 300, 1000])
    args = parser.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("GOALGUI_HOME", tempfile.mkdtemp(prefix="goalgui-runs-bench-"))
    from PySide6.QtWidgets import QApplication

    from goalgui.engine import Run
    from goalgui.journal import Journal
    from goalgui.providers import ScriptedModel
    from goalgui.ui.panes import RunsView

    app = QApplication(sys.argv[:1])
    journal = Journal(Path(tempfile.mkdtemp(prefix="goalgui-runs-bench-")) / "journal.sqlite3")
    script = ScriptedModel.from_spec("rehearsal").script
    view = RunsView()
    view.show()
    made = 0
    for n in sorted(args.runs):
        while made < n:
            run = Run.create(f"Produce a market analysis, run {made}", type(ScriptedModel.from_spec("rehearsal"))(
                script, latency=0.0), sink=journal)
            asyncio.run(run.drive())
            journal.release(run.run_id)
            made += 1
        timings = {}
        for case in ("new rows", "unchanged", "one run changed"):
            times = []
            for i in range(5):
                runs = journal.runs()  # read off the loop in the window
                if case == "new rows":
                    view._shown = {}  # as if the set of runs had changed
                elif case == "one run changed":
                    runs[0] = {**runs[0], "tokens": runs[0]["tokens"] + i + 1}  # a live run's figures move
                start = time.perf_counter()
                view.show_runs(runs)
                app.processEvents()
                times.append(time.perf_counter() - start)
            timings[case] = times
        print(f"{n:>6,} runs: refresh holds the loop " + ", ".join(
            f"{case} {min(t) * 1000:.1f} ms (worst {max(t) * 1000:.1f})" for case, t in timings.items()))
    journal.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
