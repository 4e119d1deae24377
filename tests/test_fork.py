"""Fork a run (issue 14, item 3): its history up to a goal or an event is the source's, then its own,
with a `forked_from` link; the source is never changed, a killed one included."""

import json
import signal
import subprocess
import time

import pytest

from goalgui.engine import Limits, Run, RunState
from goalgui.engine.lifecycle import InputError
from goalgui.forking import fork_run
from goalgui.runs import resume_run

from .conftest import cli_env, goalgui_cmd
from .models import split_script
from .test_compare import scripted

OBJECTIVE = "Write a short guide to composting"
PARTS = ["List what goes in", "Choose a bin", "Turn the heap"]


async def finished(journal, model=None):
    run = Run.create(OBJECTIVE, model or scripted(PARTS), sink=journal, limits=Limits(max_goals=20))
    await run.drive()
    return run


def source_state(journal, run_id):
    return ([(type(e).__name__, e.seq) for e in journal.events(run_id)], journal.load(run_id).report())


async def test_a_fork_at_a_goal_keeps_what_came_before_and_redoes_the_rest(journal):
    source = await finished(journal)
    before = source_state(journal, source.run_id)
    fork_id = fork_run(journal, source.run_id, goal_id="g3")
    assert source_state(journal, source.run_id) == before  # the source is only read
    record = journal.load(fork_id)
    assert record.forked_from["run"] == source.run_id and record.forked_from["goal"] == "g3"
    assert record.state is RunState.PAUSED and record.stop_reason.startswith(f"forked from {source.run_id} at goal g3")
    statuses = {g.text: (g.status.value, g.result) for g in record.goals.values()}
    assert statuses["List what goes in"] == ("done", source.record.goals["g2"].result)  # kept, with its result
    assert statuses["Choose a bin"] == ("pending", "") and statuses["Turn the heap"] == ("pending", "")
    assert record.report()["forked_from"] == {"run": source.run_id, "goal": "g3",
                                              "event": record.forked_from["event"]}
    # resumed with another model: only what followed the fork point is its work
    other = scripted(PARTS, results={"Choose a bin": "A 300-litre plastic bin with a lid and air holes."})
    run = resume_run(journal, fork_id, model="scripted:rehearsal")
    run.model = other  # the test's own model behind the same protocol
    assert await run.drive() is RunState.COMPLETE
    done = {g.text: g.result for g in run.record.goals.values()}
    assert done["Choose a bin"] == "A 300-litre plastic bin with a lid and air holes."
    assert not [c for c in other.calls if c.goal is not None and c.goal.text == "List what goes in"]
    assert source_state(journal, source.run_id) == before


async def test_a_fork_at_an_event_and_the_refusals(journal):
    source = await finished(journal)
    last = journal.runs(source.run_id)[0]["last_seq"]
    with pytest.raises(InputError, match="had ended"):
        fork_run(journal, source.run_id, event=last)
    with pytest.raises(InputError, match="between"):
        fork_run(journal, source.run_id, event=last + 5)
    with pytest.raises(InputError, match="no goal 'g99'"):
        fork_run(journal, source.run_id, goal_id="g99")
    fork_id = fork_run(journal, source.run_id, event=3)
    record = journal.load(fork_id)
    assert record.forked_from == {"run": source.run_id, "goal": None, "event": 3}
    assert len(record.goals) == 1 and record.goals["g1"].status.value == "pending"
    assert len(journal.runs()) == 2  # the refusals wrote nothing


def test_fork_on_the_command_line_after_a_kill_of_the_source(tmp_path):
    """The source driven by a process that is killed (-9) mid-run; the fork, made from what the journal
    holds, completes with another model, the link is in its report, and the source is as it was."""
    env = cli_env(tmp_path / "home")
    slow = split_script(tmp_path / "slow.json", PARTS, latency=0.3, execute="a slow result")
    proc = subprocess.Popen(goalgui_cmd("run", OBJECTIVE, "--model", slow), env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    run_id = proc.stdout.readline().split()[1].rstrip(":")
    deadline = time.monotonic() + 60
    while "[+] g2" not in (line := proc.stdout.readline()) and time.monotonic() < deadline:
        assert line, "the source ended before its first goal was done"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    before = subprocess.run(goalgui_cmd("export", run_id, "--events"), env=env, capture_output=True, text=True).stdout
    fast = split_script(tmp_path / "fast.json", PARTS, execute="a fast result")
    out = subprocess.run(goalgui_cmd("fork", run_id[:8], "--at", "g3", "--model", fast, "--json"),
                         env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout)
    assert report["forked_from"]["run"] == run_id and report["forked_from"]["goal"] == "g3"
    assert report["state"] == "complete" and report["model"] == fast
    results = {g["text"]: g["result"] for g in report["goals"]}
    assert results["List what goes in"] == "a slow result" and results["Choose a bin"] == "a fast result"
    assert f"forked {run_id} into {report['run_id']}" in out.stderr
    after = subprocess.run(goalgui_cmd("export", run_id, "--events"), env=env, capture_output=True, text=True).stdout
    assert after == before
    md = subprocess.run(goalgui_cmd("export", report["run_id"], "--format", "md"), env=env, capture_output=True,
                        text=True).stdout
    assert f"| forked from | run {run_id} at goal g3, event" in md
    bad = subprocess.run(goalgui_cmd("fork", run_id, "--at", "g99"), env=env, capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "no goal 'g99'" in bad.stderr


def test_a_bad_model_or_a_workspace_with_a_pipe_leaves_nothing_behind(tmp_path):
    """Found by a hostile review: a fork with a model that cannot load was written before the model was
    refused, and a named pipe in the source's workspace was an internal error that left a half copy."""
    import os

    env = cli_env(tmp_path / "home")
    space = tmp_path / "ws"
    space.mkdir()
    (space / "notes.txt").write_text("kept")
    os.mkfifo(space / "pipe")
    out = subprocess.run(goalgui_cmd("run", OBJECTIVE, "--model", "scripted:rehearsal", "--workspace", str(space),
                                     "--json"), env=env, capture_output=True, text=True, timeout=120)
    run_id = json.loads(out.stdout)["run_id"]
    bad = subprocess.run(goalgui_cmd("fork", run_id, "--at", "g3", "--model", "nosuch:thing"), env=env,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "nosuch" in bad.stderr
    listed = json.loads(subprocess.run(goalgui_cmd("runs", "--json"), env=env, capture_output=True, text=True).stdout)
    assert len(listed) == 1
    good = subprocess.run(goalgui_cmd("fork", run_id, "--at", "g3", "--json"), env=env, capture_output=True,
                          text=True, timeout=120)
    assert good.returncode == 0, good.stderr
    fork_id = json.loads(good.stdout)["run_id"]
    copied = tmp_path / "home" / "data" / "workspaces" / fork_id
    assert (copied / "notes.txt").read_text() == "kept" and not (copied / "pipe").exists()
