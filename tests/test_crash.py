"""A `goalgui run` killed with SIGKILL at random moments comes back paused and resumes
without running finished goals again (the model itself logs every execution)."""

from .crashing import kill_and_resume

PLUGIN = '''
import asyncio, json, os
from goalgui.engine import ModelReply, Usage

class Crashy:
    name = "crashy"
    async def complete(self, r):
        await asyncio.sleep(0.004)
        if r.purpose == "actionable":
            return ModelReply("YES" if r.goal.depth >= 2 else "NO", usage=Usage(5, 1))
        if r.purpose == "decompose":
            return ModelReply(json.dumps([f"{r.goal.text} / part {i}" for i in range(4)]), usage=Usage(5, 9))
        if r.purpose == "execute":
            with open(os.environ["CRASH_LOG"], "a") as f:
                f.write(r.goal.text + "\\n")
            return ModelReply("result of " + r.goal.id, usage=Usage(8, 3))
        if r.purpose == "verify":
            return ModelReply("YES", usage=Usage(5, 1))
        return ModelReply("summary", usage=Usage(5, 5))
'''

KILLS = 20


def test_killed_runs_resume_without_redoing_finished_goals(tmp_path):
    reports = kill_and_resume(tmp_path, PLUGIN, ["--model", "python:crashy.py:Crashy"], kills=KILLS, seed=20261129,
                              more=(0, 4), most_runs=100)
    for report in reports:
        assert report["state"] == "complete" and report["outcome"] == "done"
        assert len(report["goals"]) == 21
        assert all(g["attempts"] == 1 for g in report["goals"] if g["depth"] == 2)
