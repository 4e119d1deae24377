"""How fast an attached window follows and steers a run that `goalgui run` drives in another process
(issue 14: "within a second of the events being committed"). Real subprocess, real journal on disk
(the product's own settings), the window's `AttachedRun` and `AttachedQuestions` with a confirmer
that answers at once (what an operator's click would send), no display needed.

Measured, over `--runs` runs of the driver in ask mode on a scripted model:
- follow: from an event's commit time in the journal to the attached side holding it;
- answer: from the driver's question to its journaled answer, which went through the journal twice;
- pause: from the pause request to the driver's journaled pause.

    .venv/bin/python benchmarks/attach_bench.py [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from goalgui.engine import events as ev  # noqa: E402
from goalgui.engine.confirm import ConfirmationAnswer  # noqa: E402
from goalgui.journal import Journal  # noqa: E402
from goalgui.ui.attached import AttachedRun  # noqa: E402

PARTS = ["List what goes in", "Choose a bin", "Turn the heap", "Use the compost"]


async def one_run(home: Path, script: Path) -> tuple[list[float], float, float]:
    env = {**os.environ, "GOALGUI_HOME": str(home)}
    driver = subprocess.Popen([sys.executable, "-m", "goalgui", "run", "Write a short guide to composting", "--model",
                               f"scripted:{script}", "--permission-mode", "ask", "--max-goals", "10"],
                              env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              text=True)
    run_id = driver.stdout.readline().split()[1].rstrip(":")
    journal = Journal(home / "data" / "journal.sqlite3")
    follow: list[float] = []
    try:
        while not journal.runs(run_id) or journal.runs(run_id)[0]["state"] != "active":
            await asyncio.sleep(0.02)

        async def answer_now(request):
            return ConfirmationAnswer.approve(request.mode)

        attached = AttachedRun(journal, run_id, confirmer=answer_now)
        attached.subscribe(lambda batch: follow.extend(time.time() - e.ts for e in batch))
        paused_asked = None
        while not attached.record.state.final:
            await asyncio.sleep(0.02)
            if paused_asked is None and attached.record.metrics.goals_created >= 5 \
                    and any(g.status.value == "done" for g in attached.record.goals.values()):
                paused_asked = time.time()
                attached.pause("paused from the benchmark")
            if paused_asked is not None and attached.state.value == "paused":
                attached.resume()
                await asyncio.sleep(0.5)
        events = list(journal.events(run_id))
        asked = next(e for e in events if isinstance(e, ev.ConfirmationAsked))
        answered = next(e for e in events if isinstance(e, ev.ConfirmationAnswered))
        paused = next(e for e in events if isinstance(e, ev.RunStateChanged) and e.state == "paused")
        attached.detach()
        return follow, answered.ts - asked.ts, paused.ts - paused_asked
    finally:
        if driver.poll() is None:
            driver.wait(timeout=60)
        driver.stdout.close()
        journal.close()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    follows, answers, pauses = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "slow.json"
        script.write_text(json.dumps({"rules": [{"purpose": "actionable", "depth": 0, "reply": "NO"},
                                                {"purpose": "decompose", "reply": PARTS}],
                                      "defaults": {"actionable": "YES", "execute": "a result", "verify": "YES",
                                                   "summarize": "done"}, "latency": 0.3}))
        for i in range(args.runs):
            follow, answer, pause = asyncio.run(one_run(Path(tmp) / f"home{i}", script))
            follows += follow
            answers.append(answer)
            pauses.append(pause)
    q = statistics.quantiles(follows, n=100)
    print(f"follow: {len(follows)} events, median {statistics.median(follows) * 1000:.0f} ms, "
          f"p99 {q[98] * 1000:.0f} ms, max {max(follows) * 1000:.0f} ms (contract: under 1 s)")
    print(f"answer from the attached side, question to journaled answer: median {statistics.median(answers) * 1000:.0f}"
          f" ms, max {max(answers) * 1000:.0f} ms")
    print(f"pause from the attached side, request to journaled pause: median {statistics.median(pauses) * 1000:.0f} ms,"
          f" max {max(pauses) * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
