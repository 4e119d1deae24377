"""Overrules in the strategies beyond the goal stack (issue 14, item 2: "in every strategy where it
applies"): a redo's note reaches the model in each strategy's own prompt (a small model's too), the
task loop takes the operator's tasks into its queue in place of a split one, and a split is refused
in one line where a strategy has no such notion (a plan's step, a cursor's task)."""

import pytest

from goalgui.engine import Limits, Run, RunState
from goalgui.engine.lifecycle import InputError

from .models import FunctionModel
from .test_cursor import Script, call
from .test_overrule import OBJECTIVE, finish, model
from .test_plan import planner
from .test_small_model import SmallModel
from .test_task_loop import loop

NOTE = "give the amounts in litres"


def mentions(request, text=NOTE) -> bool:
    return text in request.messages[-1]["content"]


async def held_for_review(strategy, fake, journal, **kwargs):
    """A run of `strategy` in plan mode: its plan (or first task) made and held, nothing executed."""
    run = Run.create(OBJECTIVE, fake, strategy=strategy, permission_mode="plan", sink=journal,
                     limits=Limits(max_goals=20, max_depth=2), **kwargs)
    assert await run.drive() is RunState.PAUSED
    return run


async def go_on(run):
    run.set_permission_mode("auto")
    run.resume()
    return await run.drive()


async def test_a_redo_note_reaches_a_small_models_prompt_in_the_goal_stack(journal):
    seen = []
    small = SmallModel(model(seen=seen).fn)  # the prompt profile is the model's, chosen at the start
    run = Run.create(OBJECTIVE, small, sink=journal, limits=Limits(max_goals=20, turns=2))
    assert await run.drive() is RunState.BLOCKED
    leaf = next(g for g in run.record.goals.values() if g.status.value == "done" and not g.children)
    run.overrule(leaf.id, "redo", note=NOTE)
    assert await finish(run, journal) is RunState.COMPLETE
    redone = [r for r in seen if r.purpose == "execute" and r.goal.id == leaf.id][1:]
    assert len(redone) == 1 and redone[0].messages[-1]["content"].endswith(f"Note from the operator: {NOTE}")
    others = [r for r in seen if r.purpose == "execute" and r.goal.id != leaf.id]
    assert others and not any(mentions(r) for r in others)  # said for that goal only


async def test_the_task_loop_takes_a_redo_note_and_the_operators_tasks_in_place_of_a_split(journal):
    fake = loop(lambda r: [], check=lambda r: {"answer": "YES", "reason": "covered"})
    run = await held_for_review("task-loop", fake, journal)
    first = run.record.tasks()[0]
    assert first.status.value == "pending"
    with pytest.raises(InputError, match="does not split a task itself"):
        run.overrule(first.id, "split")
    run.overrule(first.id, "split", subgoals=["Draft the part on glass", "Draft the part on paper"])
    assert first.status.value == "skipped" and "split by the operator into 2 task(s)" in first.note
    new = [t for t in run.record.tasks() if t.facts.get("creator") == first.id]
    assert [t.text for t in new] == ["Draft the part on glass", "Draft the part on paper"]
    assert all(t.facts["by"] == "operator" and t.parent_id == run.record.root_id for t in new)
    run.overrule(new[1].id, "redo", note=NOTE)
    assert await go_on(run) is RunState.COMPLETE
    executed = [c for c in fake.calls if c.purpose == "execute"]
    assert [c.goal.id for c in executed] == [t.id for t in new]  # the split task itself never ran
    assert mentions(executed[1]) and not mentions(executed[0])
    assert journal.load(run.run_id).goals[first.id].status.value == "skipped"  # the replay agrees


async def test_a_plan_step_is_redone_with_the_note_and_is_not_split(journal):
    fake = planner()
    run = await held_for_review("plan", fake, journal)
    steps = [run.record.goals[c] for c in run.record.goals[run.record.root_id].children]
    with pytest.raises(InputError, match="a plan's step is not split"):
        run.overrule(steps[0].id, "split", subgoals=["One part", "Another part"])
    run.overrule(steps[2].id, "redo", note=NOTE)
    run.overrule(steps[1].id, "edit", text="Check the delivery status with the carrier")
    assert await go_on(run) is RunState.COMPLETE
    by_goal = {c.goal.id: c for c in fake.calls if c.purpose == "execute"}
    assert mentions(by_goal[steps[2].id]) and not mentions(by_goal[steps[0].id])
    assert by_goal[steps[1].id].goal.text == "Check the delivery status with the carrier"
    assert 'name="the operator\'s instruction for this attempt"' in by_goal[steps[2].id].messages[-1]["content"]


async def test_a_cursor_task_is_redone_with_the_note_and_is_not_split(journal, tmp_path):
    from goalgui.tools import default_toolbox

    script = Script(["Create notes.txt", "Prove notes.txt exists"], {
        1: [[call("write_file", path="notes.txt", content="hi")],
            [call("task_complete", id=1, summary="made notes.txt", evidence="wrote it: hi")]],
        2: [[call("read_file", path="notes.txt")],
            [call("task_complete", id=2, summary="it exists", evidence="read it back: hi")]],
    })
    fake = FunctionModel(script)
    run = await held_for_review("cursor", fake, journal, tools=default_toolbox(tmp_path / "ws"))
    tasks = run.record.tasks()
    assert [t.text for t in tasks] == ["Create notes.txt", "Prove notes.txt exists"]
    with pytest.raises(InputError, match="a task of the cursor is not split"):
        run.overrule(tasks[0].id, "split", subgoals=["One part", "Another part"])
    run.overrule(tasks[0].id, "redo", note="write it in lower case")
    assert await go_on(run) is RunState.COMPLETE
    first_rounds = [r for r in script.work_requests if "Active task: 1" in r.messages[-1]["content"]]
    later_rounds = [r for r in script.work_requests if "Active task: 2" in r.messages[-1]["content"]]
    assert first_rounds and all(mentions(r, "write it in lower case") for r in first_rounds)
    assert later_rounds and not any(mentions(r, "write it in lower case") for r in later_rounds)
