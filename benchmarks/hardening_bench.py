"""The red-team figures of issue 9, measured again with the product's own command and journal.

1. kill -9 at random moments: a run on a scripted model with a little latency per call is killed
   with SIGKILL at a random moment, then resumed, again and again until it completes. Checked
   after each kill: the journal passes SQLite's integrity check, every goal that was verified
   (done or failed) before the kill is still settled the same way with the same result, and no
   verified goal is executed again after a resume.
2. The gzip bomb: a loopback server answers with a 1 MB gzip body that inflates to 1 GB; the peak
   memory of the process that receives it (a child, so the figure is its own).
3. A write lock held elsewhere: while a run on the rehearsal script drives in this process, another
   process holds the journal's write lock for --hold seconds; the longest the event loop stood
   still (a 5 ms ticker beside the run), and whether every event landed once the lock was let go.

    .venv/bin/python benchmarks/hardening_bench.py [--kills 24] [--bomb-mb 1000] [--hold 3]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SCRIPT = {
    "latency": 0.05,
    "rules": [{"purpose": "actionable", "max_depth": 1, "reply": "NO"},
              {"purpose": "decompose", "reply": ["Find part one", "Find part two", "Find part three"]}],
    "defaults": {"actionable": "YES", "execute": "a verified result", "verify": "YES", "summarize": "done"},
}


def goalgui(*args: str, env: dict | None = None) -> list[str]:
    return [sys.executable, "-m", "goalgui", *args]


def settled(journal: Path, run_id: str) -> dict[str, tuple]:
    from goalgui.journal import Journal

    j = Journal(journal)
    try:
        record = j.view(run_id)
        return {g.id: (g.status.value, g.result) for g in record.goals.values()
                if g.status.value in ("done", "failed")}
    finally:
        j.close()


def executions(journal: Path, run_id: str) -> dict[str, int]:
    from goalgui.journal import Journal

    j = Journal(journal)
    try:
        counts: dict[str, int] = {}
        for e in j.events(run_id):
            if e.type == "model_called" and e.purpose == "execute" and not e.cancelled and not e.error:
                counts[e.goal_id] = counts.get(e.goal_id, 0) + 1
        return counts
    finally:
        j.close()


def kills(n: int) -> None:
    import sqlite3

    with tempfile.TemporaryDirectory(prefix="goalgui-kills-") as tmp:
        home = Path(tmp)
        env = dict(os.environ, GOALGUI_HOME=str(home))
        script = home / "script.json"
        script.write_text(json.dumps(SCRIPT))
        journal = home / "data" / "journal.sqlite3"
        spec = f"scripted:{script}"
        killed = resumed = lost = redone = bad_integrity = 0
        run_id = None
        rng = random.Random(7)
        while killed < n:
            args = ["run", "Write a three-part report", "--model", spec, "--max-goals", "40"] if run_id is None \
                else ["resume", run_id, "--model", spec]
            before = settled(journal, run_id) if run_id else {}
            done_before = executions(journal, run_id) if run_id else {}
            proc = subprocess.Popen(goalgui(*args, env=env), env=env, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0.3, 1.5))
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                killed += 1
            proc.wait()
            if run_id is None:
                from goalgui.journal import Journal

                j = Journal(journal)
                run_id = j.runs()[0]["run_id"]
                j.close()
            else:
                resumed += 1
            db = sqlite3.connect(journal)
            ok = db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            db.close()
            bad_integrity += not ok
            after = settled(journal, run_id)
            lost += sum(1 for goal_id, value in before.items() if after.get(goal_id) != value)
            done_after = executions(journal, run_id)
            redone += sum(1 for goal_id in before if done_after.get(goal_id, 0) > done_before.get(goal_id, 0))
            state = json.loads(subprocess.run(goalgui("export", run_id, env=env), env=env, capture_output=True,
                                              text=True).stdout)["state"]
            if state == "complete":  # start another run to kill
                run_id = None
        print(f"kill -9 at {killed} random moments, {resumed} resumes: {lost} settled goals lost or changed, "
              f"{redone} verified goals executed again, {bad_integrity} integrity failures")


BOMB_CHILD = """
import asyncio, resource, sys
sys.path.insert(0, {root!r})
from goalgui.engine import GoalView, ModelRequest
from goalgui.providers.openai import OpenAIModel
from goalgui.settings import Profile

async def main():
    profile = Profile(name="p", kind="openai", base_url={url!r}, model="m", structured_output="none").validated()
    model = OpenAIModel(profile, "k")
    try:
        await model.complete(ModelRequest("execute", [{{"role": "user", "content": "hi"}}], GoalView("g", None, 0, "x")))
        outcome = "accepted"
    except Exception as exc:
        outcome = f"{{type(exc).__name__}}: {{exc}}"
    await model.aclose()
    print(outcome)
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)

asyncio.run(main())
"""


def bomb(megabytes: int) -> None:
    import zlib

    sys.path.insert(0, str(ROOT / "tests"))
    from httpserver import ScriptedServer  # the tests' loopback server

    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b"\0" * 1_000_000
    body = b"".join(packer.compress(block) for _ in range(megabytes)) + packer.flush()
    with ScriptedServer() as server:
        server.default = ("reply", 200, body, {"content-encoding": "gzip"})
        out = subprocess.run([sys.executable, "-c", BOMB_CHILD.format(root=str(ROOT), url=server.url)],
                             capture_output=True, text=True, timeout=300)
    outcome, peak = out.stdout.strip().splitlines()[-2:]
    print(f"gzip bomb: {len(body) / 1e6:.1f} MB on the wire, {megabytes:,} MB inflated: {outcome}; "
          f"peak memory of the receiving process {int(peak) / 1024:.0f} MB")




def held_lock(seconds: float) -> None:
    import asyncio

    from goalgui.engine import Limits, Run
    from goalgui.journal import Journal
    from goalgui.providers import load_model

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "journal.sqlite3"
        journal = Journal(path)
        model, spec = load_model("scripted:rehearsal")
        writes: list[float] = []  # how long each commit attempt held the loop, busy or not
        write = journal.write

        def timed_write(*args, **kwargs):
            began = time.perf_counter()
            try:
                return write(*args, **kwargs)
            finally:
                writes.append(time.perf_counter() - began)

        journal.write = timed_write

        async def drive() -> tuple[float, float, object]:
            gaps: list[float] = []
            stop = asyncio.Event()

            async def tick():
                last = time.monotonic()
                while not stop.is_set():
                    await asyncio.sleep(0.005)
                    now = time.monotonic()
                    gaps.append(now - last - 0.005)
                    last = now

            ticker = asyncio.create_task(tick())
            await asyncio.sleep(0.05)
            holder_cmd = [sys.executable, str(ROOT / "benchmarks" / "lock_holder.py"), str(path), str(seconds)]
            with subprocess.Popen(holder_cmd, stdout=subprocess.PIPE,
                                  text=True) as holder:
                holder.stdout.readline()
                began = time.monotonic()
                run = Run.create("Plan a small birthday party for a child", model, model_spec=spec,
                                 limits=Limits(max_goals=25), sink=journal)
                state = await run.drive()
                took = time.monotonic() - began
            stop.set()
            await ticker
            return max(gaps), took, (state, run)

        stall, took, (state, run) = asyncio.run(drive())
        seqs = [e.seq for e in journal.events(run.run_id)]
        intact = seqs == list(range(1, run.record.last_seq + 1))
        journal.close()
    print(f"write lock held elsewhere for {seconds:g} s: {len(writes)} commit attempts on the loop, the longest "
          f"{max(writes) * 1000:.1f} ms; the loop's longest stall {stall * 1000:.1f} ms (any cause); the run "
          f"{state.value} after {took:.1f} s with all {len(seqs)} events journaled in order: {intact}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=24)
    parser.add_argument("--bomb-mb", type=int, default=1000)
    parser.add_argument("--hold", type=float, default=3.0)
    args = parser.parse_args()
    held_lock(args.hold)
    bomb(args.bomb_mb)
    kills(args.kills)
