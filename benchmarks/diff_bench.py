"""Comparing two big runs (`goalgui diff`): two goal-stack runs of 10,000 and 10,001 goals, written
into a real journal on disk as the engine journals them (benchmarks/open_bench.py's writer: every
model call with its prompt and reply), then compared as the command does: both runs read from the
journal, aligned, and rendered. Target: under 1 s for the comparison of two 10,000-goal runs.

    .venv/bin/python benchmarks/diff_bench.py [--goals 10000] [--cache DIR]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--goals", type=int, default=10_000)
    parser.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "goalgui-diff-bench"))
    args = parser.parse_args()
    from open_bench import write_run

    from goalgui.cli_compare import compare_runs
    from goalgui.journal import Journal

    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"diff-{args.goals}.sqlite3"
    if not path.exists():
        started = time.perf_counter()
        write_run(path, args.goals)
        write_run(path, args.goals + 1)
        print(f"wrote two runs of {args.goals:,} and {args.goals + 1:,} goals in {time.perf_counter() - started:.1f} s")
    a, b = f"bench{args.goals}", f"bench{args.goals + 1}"
    times = []
    for _ in range(5):
        journal = Journal(path)
        started = time.perf_counter()
        data, text = compare_runs(journal, a, b)
        times.append(time.perf_counter() - started)
        journal.close()
    print(f"compare {a} with {b} in process: median {statistics.median(times) * 1000:.0f} ms, "
          f"worst {max(times) * 1000:.0f} ms ({data['counts']}; {len(text):,} characters of Markdown)")
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "goalgui", "diff", a, b, "--journal", str(path)],
                         capture_output=True, text=True, cwd=ROOT)
    print(f"`goalgui diff` as a command (interpreter start included): {time.perf_counter() - started:.2f} s, "
          f"exit {out.returncode}")
    return 0 if out.returncode == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
