"""The task loop and the plan with the real journal on disk.

- plan: three independent 1 s steps and a fourth that needs them, at --max-parallel 1 and 3 (wall time);
- task loop: the guarded blog-series run of seed 003 (1 + 2 + 4 tasks) on a zero-latency model, repeated,
  for the engine's time per iteration with the journal;
- plan: a 10-step plan (the cap) on a zero-latency model, for the time per step.

    .venv/bin/python benchmarks/strategies_bench.py
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from goalgui.engine import Limits, ModelReply, Run, Usage  # noqa: E402
from goalgui.journal import Journal  # noqa: E402


class Model:
    name = "bench"

    def __init__(self, steps: int = 3, delay: float = 0.0):
        self.steps, self.delay, self.n = steps, delay, 0

    async def complete(self, request):
        p = request.purpose
        if p == "plan":
            steps = [{"id": i, "goal": f"Check source {i}", "tool": None, "dependencies": []}
                     for i in range(1, self.steps + 1)]
            steps.append({"id": self.steps + 1, "goal": "Write the answer", "tool": None,
                          "dependencies": list(range(1, self.steps + 1))})
            return ModelReply(json.dumps({"steps": steps}), usage=Usage(50, 40))
        if p == "execute":
            if self.delay:
                await asyncio.sleep(self.delay)
            return ModelReply(f"Result of {request.goal.text}: 3 items with figures 1, 2 and 3.", usage=Usage(80, 20))
        if p == "create":
            self.n += 1
            tasks = [{"description": f"Draft section {self.n} {w}", "priority": 3} for w in ("alpha", "omega")]
            return ModelReply(json.dumps({"tasks": tasks}), usage=Usage(60, 30))
        if p == "reprioritise":
            return ModelReply('{"priorities": []}', usage=Usage(40, 5))
        if p == "check_complete":
            return ModelReply('{"answer": "NO", "reason": "more to do"}', usage=Usage(40, 5))
        return ModelReply("summary", usage=Usage(20, 10))


async def timed(journal, objective, model, **kwargs) -> tuple[float, Run]:
    run = Run.create(objective, model, sink=journal, **kwargs)
    began = time.perf_counter()
    await run.drive()
    run.close()
    return time.perf_counter() - began, run


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        journal = Journal(Path(tmp) / "journal.sqlite3")
        for parallel in (1, 3):
            seconds, run = await timed(journal, "Answer from three sources", Model(3, 1.0), strategy="plan",
                                       options={"max_parallel": parallel})
            print(f"plan, three 1 s steps then one more (1 s), --max-parallel {parallel}: {seconds:.2f} s "
                  f"({run.report()['outcome']})")
        loops, counts = [], []
        for _ in range(20):
            seconds, run = await timed(journal, "Write a five-part blog series on sustainable packaging", Model(),
                                       strategy="task-loop", limits=Limits(max_depth=2, max_goals=40))
            loops.append(seconds)
            counts.append(sum(1 for t in run.record.tasks() if "iteration" in t.facts))
        per = statistics.median(s / n for s, n in zip(loops, counts))
        print(f"task loop, seed 003's guarded run ({counts[0]} tasks): median {statistics.median(loops) * 1000:.1f} ms "
              f"a run, {per * 1000:.2f} ms an iteration (execute, create, reprioritise; journal on disk)")
        plans = []
        for _ in range(20):
            seconds, run = await timed(journal, "Answer from nine sources", Model(9), strategy="plan")
            plans.append(seconds / len(run.record.tasks()))
        print(f"plan, 10 steps on a zero-latency model: median {statistics.median(plans) * 1000:.2f} ms a step")
        journal.close()


if __name__ == "__main__":
    asyncio.run(main())
