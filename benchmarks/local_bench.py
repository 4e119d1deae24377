"""The embedded model: tokens per second through goalgui (its child process, the default, and
in-process) against llama-cpp-python called directly, the first call's latency, and the event
loop's lag while it generates.

All three get the same prompts, sampling settings and thread count, each on its own loaded copy
of SmolLM2 (so none reuses another's prompt cache), interleaved prompt by prompt. The lag is
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


def direct(llama, request: ModelRequest, temperature: float, repeat_penalty: float) -> int:
    """llama-cpp-python itself: the same chat completion, streamed, the same settings."""
    stream = llama.create_chat_completion(messages=request.messages, max_tokens=request.max_tokens,
                                          temperature=temperature, repeat_penalty=repeat_penalty, stream=True)
    text = "".join((chunk["choices"][0].get("delta") or {}).get("content") or "" for chunk in stream)
    return len(llama.tokenize(text.encode(), add_bos=False)) if text else 0


async def timed(model: LocalModel, request: ModelRequest, ticker: Ticker) -> tuple[int, float, float]:
    """(tokens, seconds, worst loop gap) of one call through goalgui."""
    ticker.worst = 0.0
    ticker.start()
    t0 = time.perf_counter()
    reply = await model.complete(request)
    seconds = time.perf_counter() - t0
    ticker.stop()
    return reply.usage.output_tokens, seconds, ticker.worst


async def main(n: int, tokens: int) -> None:
    from llama_cpp import Llama

    child = LocalModel()  # the product's default: the model in its own process
    inproc = LocalModel(isolate=False)
    warm = requests(1, 4)[0]
    first = {}
    for label, model in (("child", child), ("in-process", inproc)):
        t0 = time.perf_counter()
        await model.complete(warm)  # start (the child: spawn, import, load) and warm
        first[label] = time.perf_counter() - t0
    theirs = Llama(model_path=str(gguf_path()), n_ctx=child.context, n_threads=child.threads,
                   n_threads_batch=child.threads, seed=child.seed, verbose=False)
    direct(theirs, warm, child.temperature, child.repeat_penalty)
    ticker = Ticker()
    totals = {"child": [0, 0.0, 0.0], "in-process": [0, 0.0, 0.0], "direct": [0, 0.0, 0.0]}
    for request in requests(n, tokens):  # interleaved, prompt by prompt
        for label, model in (("child", child), ("in-process", inproc)):
            got, seconds, lag = await timed(model, request, ticker)
            totals[label][0] += got
            totals[label][1] += seconds
            totals[label][2] = max(totals[label][2], lag)
        t0 = time.perf_counter()
        totals["direct"][0] += direct(theirs, request, child.temperature, child.repeat_penalty)
        totals["direct"][1] += time.perf_counter() - t0
    child.close()
    inproc.close()
    rate = {label: got / seconds for label, (got, seconds, _lag) in totals.items()}
    print(f"local model (SmolLM2-135M Q4_1, {child.threads} threads), {n} prompts of up to {tokens} tokens")
    for label, name in (("child", "goalgui, child process"), ("in-process", "goalgui, in-process"),
                        ("direct", "llama-cpp-python")):
        got, seconds, _lag = totals[label]
        print(f"  {name + ':':<24}{rate[label]:6.1f} tokens/s ({got:.0f} tokens in {seconds:.1f} s)")
    print(f"  ratio child / direct:  {rate['child'] / rate['direct']:6.2f}   (target >= 0.9)")
    print(f"  ratio in-proc / direct:{rate['in-process'] / rate['direct']:6.2f}")
    print(f"  first call (start, load, 4 tokens): child {first['child']:.2f} s, in-process {first['in-process']:.2f} s")
    print(f"  event-loop lag:        {totals['child'][2] * 1000:6.1f} ms child, "
          f"{totals['in-process'][2] * 1000:.1f} ms in-process, worst gap between 10 ms ticks   (target < 50 ms)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--tokens", type=int, default=160)
    args = parser.parse_args()
    asyncio.run(main(args.prompts, args.tokens))
