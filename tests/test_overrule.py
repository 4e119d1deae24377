"""The operator overrules the model on a goal (issue 14, item 2): split, do, accept, redo and edit,
each journaled, honoured on resume and after a restart from the journal, refused in one line where
it cannot apply; and `goalgui steer` on a run nobody drives and on one driven by another process."""

import json
import subprocess

import pytest

from goalgui.engine import Limits, Run, RunState
from goalgui.engine.lifecycle import InputError

from .conftest import cli_env, goalgui_cmd
from .models import FunctionModel, split_script

OBJECTIVE = "Write a short guide to composting"
PARTS = ["List what goes in", "Choose a bin", "Turn the heap"]


def model(fail=(), split=(), seen=None):
    """Splits the root into PARTS; a goal in `split` is judged not actionable (and split into two);
    verification says NO for goals in `fail`. `seen` collects every request."""
    def answer(r):
        if seen is not None:
            seen.append(r)
        text = r.goal.text if r.goal else ""
        if r.purpose == "actionable":
            return "NO too big" if r.goal.depth == 0 or text in split else "YES it is small"
        if r.purpose == "decompose":
            return PARTS if r.goal.depth == 0 else [f"{text}: first half", f"{text}: second half"]
        if r.purpose == "execute":
            return f"Three facts about {text.lower()}, with sources."
        if r.purpose == "verify":
            return "NO: it does not" if text in fail else "YES"
        return "summary"
    return FunctionModel(answer)


async def blocked_after(journal, turns, **kw):
    """A run stopped by its turn budget after `turns` turns (blocked: it can still be steered)."""
    run = Run.create(OBJECTIVE, model(**kw), sink=journal, limits=Limits(max_goals=20, turns=turns))
    assert await run.drive() is RunState.BLOCKED
    return run


async def finish(run, journal, m=None):
    run.set_limits(clear=("turns",))
    if m is not None:
        run.model = m
    run.resume()
    return await run.drive()


def overrules(journal, run_id):
    return [(e.goal_id, e.action) for e in journal.events(run_id) if type(e).__name__ == "GoalOverruled"]


async def test_accept_takes_a_failed_result_as_done(journal):
    run = await blocked_after(journal, 4, fail={"Choose a bin"})  # root split, g2 done, g3 failed twice
    assert run.record.goals["g3"].status.value == "failed"
    run.overrule("g3", "accept", note="good enough for a first draft")
    g3 = run.record.goals["g3"]
    assert g3.status.value == "done" and g3.verdict == "accepted by the operator"
    assert "accept by the operator: good enough for a first draft" in g3.note
    assert await finish(run, journal) is RunState.COMPLETE and run.report()["outcome"] == "done"
    assert overrules(journal, run.run_id) == [("g3", "accept")]
    assert journal.load(run.run_id).goals["g3"].status.value == "done"  # the replay agrees


async def test_redo_runs_the_goal_again_with_the_operators_note(journal):
    run = await blocked_after(journal, 2)  # root split, g2 done
    first = run.record.goals["g2"].result
    run.overrule("g2", "redo", note="give the amounts in litres")
    assert run.record.goals["g2"].status.value == "pending" and run.record.goals["g2"].result == ""
    assert run.record.goals["g1"].status.value != "done"
    with pytest.raises(InputError, match="note"):
        run.overrule("g3", "redo")  # a redo says what to do differently
    seen = []
    assert await finish(run, journal, model(seen=seen)) is RunState.COMPLETE
    redone = [r for r in seen if r.purpose == "execute" and r.goal.id == "g2"]
    assert len(redone) == 1 and "give the amounts in litres" in json.dumps(redone[0].messages)
    assert run.record.goals["g2"].status.value == "done" and run.record.goals["g2"].result == first


async def test_do_executes_without_asking_and_split_uses_the_operators_subgoals(journal):
    run = await blocked_after(journal, 1, split={"Choose a bin", "Turn the heap"})  # only the root split
    run.overrule("g3", "do")
    run.overrule("g4", "split", subgoals=["Turn it weekly", "Check it is damp"])
    assert [run.record.goals[c].text for c in run.record.goals["g4"].children] == ["Turn it weekly",
                                                                                  "Check it is damp"]
    seen = []
    assert await finish(run, journal, model(split={"Choose a bin", "Turn the heap"}, seen=seen)) is RunState.COMPLETE
    asked = {(r.purpose, r.goal.id) for r in seen if r.goal is not None}
    assert ("actionable", "g3") not in asked and ("execute", "g3") in asked  # done as it is
    assert ("execute", "g4") not in asked and ("decompose", "g4") not in asked  # split the operator's way
    assert all(run.record.goals[c].status.value == "done" for c in run.record.goals["g4"].children)


async def test_edit_changes_a_pending_goals_text_in_the_journal_too(journal):
    run = await blocked_after(journal, 2)
    run.overrule("g4", "edit", text="Turn the heap every two weeks")
    assert run.record.goals["g4"].text == "Turn the heap every two weeks"
    assert [row[2] for row in journal.children(run.run_id, "g1")][2] == "Turn the heap every two weeks"
    with pytest.raises(InputError, match="only a pending goal"):
        run.overrule("g2", "edit", text="Another text")
    seen = []
    assert await finish(run, journal, model(seen=seen)) is RunState.COMPLETE
    assert any(r.purpose == "execute" and r.goal.text == "Turn the heap every two weeks" for r in seen)


async def test_overrules_survive_a_restart_from_the_journal_and_are_refused_where_they_cannot_apply(journal, tmp_path):
    from goalgui.journal import Journal
    from goalgui.runs import resume_run

    run = await blocked_after(journal, 4, fail={"Choose a bin"})
    run.overrule("g3", "accept")
    run.overrule("g4", "edit", text="Turn the heap twice")
    run.close()
    journal.release(run.run_id)
    again = Journal(journal.path)  # another process, as after a kill: only the journal is left
    try:
        record = again.load(run.run_id)
        assert record.goals["g3"].status.value == "done" and record.goals["g4"].text == "Turn the heap twice"
        resumed = resume_run(again, run.run_id, model="scripted:rehearsal", limits={"turns": 50})
        resumed.model = model()
        assert await resumed.drive() is RunState.COMPLETE
        with pytest.raises(InputError, match="complete: fork it"):
            resumed.overrule("g2", "redo", note="again")
        blocked = await blocked_after(again, 2)
        with pytest.raises(InputError, match="no goal 'g99'"):
            blocked.overrule("g99", "do")
        with pytest.raises(InputError, match="has sub-goals"):
            blocked.overrule("g1", "do")
        with pytest.raises(InputError, match="no result to accept"):
            blocked.overrule("g4", "accept")
    finally:
        again.close()


def test_goalgui_steer_on_a_run_nobody_drives_and_on_one_driven_elsewhere(tmp_path):
    env = cli_env(tmp_path / "home")
    spec = split_script(tmp_path / "s.json", PARTS, latency=0.4)
    first = subprocess.run(goalgui_cmd("run", OBJECTIVE, "--model", spec, "--turn-budget", "2",
                                       "--json"), env=env, capture_output=True, text=True, timeout=120)
    assert first.returncode == 3, first.stderr  # blocked by its turn budget
    run_id = json.loads(first.stdout)["run_id"]
    out = subprocess.run(goalgui_cmd("steer", run_id[:6], "g3", "edit", "--text", "Pick a shady corner for the bin"),
                         env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "g3 edit by the operator" in out.stdout, out.stderr
    bad = subprocess.run(goalgui_cmd("steer", run_id, "g2", "edit", "--text", "x"), env=env, capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "only a pending goal" in bad.stderr
    # now driven by another process: the steer goes through the journal and the driver carries it out
    slow = split_script(tmp_path / "slow.json", PARTS, latency=1.5)
    driver = subprocess.Popen(goalgui_cmd("resume", run_id, "--model", slow, "--turn-budget", "50",
                                          "--json"), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert driver.stderr.readline().startswith(f"run {run_id}")  # driving now
        live = subprocess.run(goalgui_cmd("steer", run_id, "g4", "redo", "--note", "shorter, please"), env=env,
                              capture_output=True, text=True, timeout=60)
        assert live.returncode == 0 and "its driver took the redo of g4" in live.stdout, live.stderr
        stdout, stderr = driver.communicate(timeout=120)
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.communicate()
    assert driver.returncode == 0, stderr[-1500:]
    report = json.loads(stdout)
    goals = {g["id"]: g for g in report["goals"]}
    assert goals["g3"]["text"] == "Pick a shady corner for the bin" and goals["g4"]["status"] == "done"
    assert "redo by the operator: shorter, please" in goals["g4"]["note"]
    events = json.loads(subprocess.run(goalgui_cmd("export", run_id, "--events"), env=env, capture_output=True,
                                       text=True).stdout)["events"]
    assert [(e["goal_id"], e["action"]) for e in events if e["type"] == "goal_overruled"] == [("g3", "edit"),
                                                                                              ("g4", "redo")]


def test_overrules_carried_out_by_a_driver_killed_right_after_are_honoured_on_resume(tmp_path):
    """Overrules requested of a run a live process drives; that process is killed (-9) as soon as
    they are journaled; `goalgui resume` in a new process honours each of them."""
    import signal
    import time

    from goalgui.journal import Journal

    env = cli_env(tmp_path / "home")
    slow = split_script(tmp_path / "slow.json", PARTS, latency=0.6)
    driver = subprocess.Popen(goalgui_cmd("run", OBJECTIVE, "--model", slow, "--max-goals", "12"),
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    journal = Journal(tmp_path / "home" / "data" / "journal.sqlite3")
    try:
        run_id = driver.stdout.readline().split()[1].rstrip(":")
        deadline = time.monotonic() + 60
        while "[+] g2" not in (line := driver.stdout.readline()) and time.monotonic() < deadline:
            assert line, "the run ended before its first goal was done"
        # the requests `goalgui steer` leaves (tested above), all at once: the driver takes them in one poll
        for goal_id, action, extra in (("g2", "redo", {"note": "MARK-NOTE: in litres"}),
                                       ("g4", "edit", {"text": "Turn the heap weekly"}), ("g4", "do", {})):
            journal.request_control(run_id, "steer", goal_id=goal_id, overrule=action, **extra)
        deadline = time.monotonic() + 20
        while len([e for e in journal.events(run_id) if e.type == "goal_overruled"]) < 3:
            assert time.monotonic() < deadline, "the driver did not journal the overrules"
            time.sleep(0.05)
        driver.send_signal(signal.SIGKILL)
        driver.wait()
    finally:
        if driver.poll() is None:
            driver.kill()
        driver.stdout.close()
    fast = split_script(tmp_path / "fast.json", PARTS)
    resumed = subprocess.run(goalgui_cmd("resume", run_id, "--model", fast, "--json"), env=env,
                             capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    goals = {g["id"]: g for g in json.loads(resumed.stdout)["goals"]}
    assert "redo by the operator: MARK-NOTE: in litres" in goals["g2"]["note"] and goals["g2"]["status"] == "done"
    assert goals["g4"]["text"] == "Turn the heap weekly" and goals["g4"]["status"] == "done"
    events = list(journal.events(run_id))
    redone = [e for e in events if e.type == "model_called" and e.purpose == "execute" and e.goal_id == "g2"]
    resumed_at = max(e.seq for e in events if e.type == "run_state_changed" and e.state == "active")
    assert len(redone) == 2 and redone[-1].seq > resumed_at  # redone by the new process, with the note
    assert "MARK-NOTE: in litres" in json.dumps(redone[-1].messages)
    asked = [e for e in events if e.type == "model_called" and e.goal_id == "g4"]
    assert asked and all(e.purpose != "actionable" for e in asked)  # done as it is, after the restart too
    journal.close()
