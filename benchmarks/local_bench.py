"""The embedded model: tokens per second through goalgui against llama-cpp-python called directly,
and the event loop's lag while it generates.

Both sides get the same prompts, sampling settings and thread count, each on its own loaded copy
of SmolLM2 (so neither reuses the other's prompt cache), interleaved prompt by prompt. The lag is
the longest gap between two ticks of a 10 ms timer that runs on goalgui's event loop meanwhile.
Targets: ratio >= 0.9, lag < 50 ms.

    .venv/bin/python benchmarks/local_bench.py [--prompts 8] [--tokens 160]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from goalgui.engine import GoalView, ModelRequest  # noqa: E402
from goalgui.engine import prompts  # noqa: E402
from goalgui.providers.local import LocalModel, gguf_path  # noqa: E402

TOPICS = ["a picnic in the park", "a small bakery's weekly order", "a school science fair", "a bicycle repair",
          "a vegetable garden", "a family budget", "a birthday party", "a weekend hiking trip",
          "a book club meeting", "a charity bake sale"]


def requests(n: int, tokens: int) -> list[ModelRequest]:
    out = []
    for i in range(n):
        goal = f"Write a detailed plan for {TOPICS[i % len(TOPICS)]}"
        out.append(ModelRequest("execute", prompts.execute(goal, goal, "(no prior results)", [], False),
                                GoalView(f"g{i}", None, 0, goal), max_tokens=tokens))
    return out


class Ticker:
    """A 10 ms timer on the loop; records the longest gap between ticks."""

    def __init__(self):
        self.worst = 0.0
        self.ticks = 0
        self._task = None

    async def _run(self):
        last = time.perf_counter()
        while True:
            await asyncio.sleep(0.01)
            now = time.perf_counter()
            self.worst = max(self.worst, now - last)
            self.ticks += 1
            last = now

    def start(self):
        self._task = asyncio.get_running_loop().create_task(self._run())

    def stop(self):
        self._task.cancel()


def direct(llama, request: ModelRequest, temperature: float) -> int:
    """llama-cpp-python itself: the same chat completion, streamed, the same settings."""
    stream = llama.create_chat_completion(messages=request.messages, max_tokens=request.max_tokens,
                                          temperature=temperature, stream=True)
    text = "".join((chunk["choices"][0].get("delta") or {}).get("content") or "" for chunk in stream)
    return len(llama.tokenize(text.encode(), add_bos=False)) if text else 0


async def main(n: int, tokens: int) -> None:
    from llama_cpp import Llama

    ours = LocalModel()
    theirs = Llama(model_path=str(gguf_path()), n_ctx=ours.context, n_threads=ours.threads,
                   n_threads_batch=ours.threads, seed=ours.seed, verbose=False)
    await ours.complete(requests(1, 4)[0])  # load and warm both
    direct(theirs, requests(1, 4)[0], ours.temperature)
    ticker = Ticker()
    ours_tokens = ours_seconds = theirs_tokens = theirs_seconds = 0.0
    worst_lag = 0.0
    for request in requests(n, tokens):
        ticker.worst = 0.0
        ticker.start()
        t0 = time.perf_counter()
        reply = await ours.complete(request)
        ours_seconds += time.perf_counter() - t0
        ticker.stop()
        worst_lag = max(worst_lag, ticker.worst)
        ours_tokens += reply.usage.output_tokens
        t0 = time.perf_counter()
        theirs_tokens += direct(theirs, request, ours.temperature)
        theirs_seconds += time.perf_counter() - t0
    ours.close()
    ours_rate, theirs_rate = ours_tokens / ours_seconds, theirs_tokens / theirs_seconds
    print(f"local model (SmolLM2-135M Q4_1, {ours.threads} threads), {n} prompts of up to {tokens} tokens")
    print(f"  through goalgui:       {ours_rate:6.1f} tokens/s ({ours_tokens:.0f} tokens in {ours_seconds:.1f} s)")
    print(f"  llama-cpp-python:      {theirs_rate:6.1f} tokens/s ({theirs_tokens:.0f} tokens in {theirs_seconds:.1f} s)")
    print(f"  ratio:                 {ours_rate / theirs_rate:6.2f}   (target >= 0.9)")
    print(f"  event-loop lag:        {worst_lag * 1000:6.1f} ms worst gap between 10 ms ticks   (target < 50 ms)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--tokens", type=int, default=160)
    args = parser.parse_args()
    asyncio.run(main(args.prompts, args.tokens))
