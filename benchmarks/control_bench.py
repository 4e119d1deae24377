"""How fast the controls act: pause, skip and cancel in the middle of a slow model call, and pause in
the middle of the embedded model's generation. The contract is one second.

    .venv/bin/python benchmarks/control_bench.py [--repeat 20] [--no-local]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from goalgui.engine import Limits, ModelReply, Run, Usage  # noqa: E402
from goalgui.journal import Journal  # noqa: E402


FREED: list[float] = []


class Slow:
    """Every call takes 30 s unless it is cancelled."""

    name = "slow"

    async def complete(self, request):
        await asyncio.sleep(30)
        return ModelReply("YES", usage=Usage(1, 1))


async def until_called(run: Run, model) -> None:
    while run.record.metrics.turns == 0:
        await asyncio.sleep(0.005)
    await asyncio.sleep(0.05)  # well inside the call


async def measure(action: str, journal: Journal, model_factory) -> float:
    model = model_factory()
    run = Run.create("Measure the controls", model, sink=journal, limits=Limits(max_depth=0))
    driver = asyncio.create_task(run.drive())
    await until_called(run, model)
    t0 = time.perf_counter()
    if action == "pause":
        run.pause()
    elif action == "cancel":
        run.cancel()
    else:
        run.skip()
    if action == "skip":  # the run goes on: wait until the skipped goal is settled
        while run.record.goals["g1"].status.value != "skipped" or run._step_task is not None and \
                run.strategy.current_goal_id == "g1":
            await asyncio.sleep(0)
        elapsed = time.perf_counter() - t0
        driver.cancel()
        try:
            await driver
        except asyncio.CancelledError:
            pass
    else:
        await driver
        elapsed = time.perf_counter() - t0
    executor = getattr(model, "_executor", None)
    if executor is not None:  # the llama.cpp worker finishes the token (or prompt) in hand on its own
        await asyncio.get_running_loop().run_in_executor(executor, lambda: None)
        FREED.append(time.perf_counter() - t0)
    close = getattr(model, "close", None)
    if close:
        close()
    return elapsed


async def main(repeat: int, local: bool) -> None:
    with tempfile.TemporaryDirectory() as directory:
        journal = Journal(Path(directory) / "journal.sqlite3")
        rows = [(action, "slow HTTP-like call", Slow) for action in ("pause", "skip", "cancel")]
        if local:
            from goalgui.providers.local import LocalModel

            rows.append(("pause", "local llama.cpp generation", lambda: LocalModel(max_tokens=None)))
        print(f"time from the control call until it took effect, {repeat} tries each (contract: 1 s)")
        for action, during, factory in rows:
            times = [await measure(action, journal, factory) for _ in range(repeat if factory is Slow else 5)]
            print(f"  {action:<6} during a {during:<27} median {statistics.median(times) * 1000:7.1f} ms, "
                  f"worst {max(times) * 1000:7.1f} ms")
        if FREED:
            print(f"  the llama.cpp worker itself was free again after: median "
                  f"{statistics.median(FREED) * 1000:7.1f} ms, worst {max(FREED) * 1000:7.1f} ms "
                  "(llama.cpp's abort callback stops a prompt's evaluation too)")
        journal.close()


if __name__ == "__main__":
    import logging

    logging.basicConfig(level=logging.ERROR)  # llama.cpp's note on each aborted decode is not news here
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--no-local", action="store_true")
    args = parser.parse_args()
    asyncio.run(main(args.repeat, not args.no_local))
