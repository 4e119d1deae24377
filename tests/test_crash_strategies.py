"""The task loop and the plan survive `kill -9` as the goal stack does: a `goalgui run` killed at
random moments comes back paused, resumes, and never executes again what was done before the kill."""

import json
import random
import subprocess
import time

import pytest

from .conftest import cli_env, goalgui_cmd

PLUGIN = '''
import asyncio, json, os
from goalgui.engine import ModelReply, Usage

def log(text):
    with open(os.environ["CRASH_LOG"], "a") as f:
        f.write(text + "\\n")

class Crashy:
    name = "crashy"
    async def complete(self, r):
        await asyncio.sleep(0.02)
        text = r.goal.text if r.goal else ""
        if r.purpose == "execute":
            log(text)
            return ModelReply("Result of " + text + ": three items with 2 figures each.", usage=Usage(8, 3))
        if r.purpose == "create":
            run, _, part = text.partition(": write part ")  # run: "Crash objective N", unique across runs
            tasks = [{"description": run + ": write part " + (part + "." if part else "") + str(i),
                      "priority": 3} for i in range(2)]
            return ModelReply(json.dumps({"tasks": tasks}), usage=Usage(5, 9))
        if r.purpose == "reprioritise":
            return ModelReply(json.dumps({"priorities": []}), usage=Usage(5, 2))
        if r.purpose == "check_complete":
            done = sum(line.startswith("- ") for line in r.messages[-1]["content"].splitlines())
            return ModelReply("YES: all parts" if done >= 7 else "NO: parts are missing", usage=Usage(5, 2))
        if r.purpose == "plan":
            steps = [{"id": i, "goal": text + " / step " + str(i), "tool": None,
                      "dependencies": [] if i < 4 else [1, 2, 3]} for i in range(1, 7)]
            return ModelReply(json.dumps({"steps": steps}), usage=Usage(5, 20))
        return ModelReply("summary", usage=Usage(5, 5))
'''

KILLS = 4
GOALS = {"task-loop": 8, "plan": 7}  # the root and 7 tasks (1 + 2 + 4); the root and 6 steps


@pytest.mark.parametrize("strategy", ["task-loop", "plan"])
def test_killed_runs_resume_without_redoing_done_work(tmp_path, strategy):
    (tmp_path / "crashy.py").write_text(PLUGIN)
    log = tmp_path / "executions.log"
    env = cli_env(tmp_path / "home")
    env["CRASH_LOG"] = str(log)
    rng = random.Random(20261202)

    def cli(*args):
        return subprocess.run(goalgui_cmd(*args), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)

    def log_lines():
        return log.read_text().splitlines() if log.exists() else []

    checkpoints, run_ids, kills, current = [], [], 0, None
    while kills < KILLS:
        assert len(run_ids) < 40, "the kills never met a run at work"
        args = ("resume", current) if current else ("run", f"Crash objective {len(run_ids)}", "--strategy", strategy,
                                                     "--model", "python:crashy.py:Crashy")
        proc = subprocess.Popen(goalgui_cmd(*args), cwd=tmp_path, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        first = proc.stdout.readline()
        if current is None:
            current = first.split()[1].rstrip(":")
            run_ids.append(current)
        # killed by progress, not by the clock: after 1 to 3 more executions (on a fast machine a run of
        # this model is over in 0.1 s, and a kill at a random delay then only ever met finished runs)
        target = len(log_lines()) + rng.randint(1, 3)
        deadline = time.monotonic() + 60
        while proc.poll() is None and len(log_lines()) < target and time.monotonic() < deadline:
            time.sleep(0.005)
        proc.kill()
        proc.wait()
        proc.stdout.close()
        state = {r["run_id"]: r for r in json.loads(cli("runs", "--json").stdout)}[current]["state"]
        if proc.returncode == -9 and state != "complete":
            kills += 1
            assert state == "paused"
            report = json.loads(cli("export", current).stdout)
            assert all(g["status"] != "running" for g in report["goals"])
            done = {g["text"] for g in report["goals"] if g["status"] == "done" and g["parent_id"]}
            checkpoints.append((current, done, len(log_lines())))
        else:
            current = None

    for run_id in run_ids:
        if json.loads(cli("export", run_id).stdout)["state"] != "complete":
            out = cli("resume", run_id, "--json")
            assert out.returncode == 0, out.stderr
        report = json.loads(cli("export", run_id).stdout)
        assert report["state"] == "complete" and report["outcome"] == "done", report["stop_reason"]
        assert len(report["goals"]) == GOALS[strategy]
        assert all(g["attempts"] == 1 for g in report["goals"] if g["parent_id"])
    lines = log_lines()
    for run_id, done, offset in checkpoints:
        assert not done & set(lines[offset:]), run_id
    assert kills == KILLS
