"""The task loop and the plan survive `kill -9` as the goal stack does: a `goalgui run` killed at
random moments comes back paused, resumes, and never executes again what was done before the kill."""

import pytest

from .crashing import kill_and_resume

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
    reports = kill_and_resume(tmp_path, PLUGIN, ["--strategy", strategy, "--model", "python:crashy.py:Crashy"],
                              kills=KILLS, seed=20261202, more=(1, 3), most_runs=40,
                              done_goal=lambda g: g["status"] == "done" and g["parent_id"])
    for report in reports:
        assert report["state"] == "complete" and report["outcome"] == "done", report["stop_reason"]
        assert len(report["goals"]) == GOALS[strategy]
        assert all(g["attempts"] == 1 for g in report["goals"] if g["parent_id"])
