"""Sub-goal confirmations in ask mode: approved, edited, declined, aborted; auto modes skip them."""

import asyncio

from goalgui.engine import ConfirmationAnswer, Outcome, Run, RunState
from goalgui.engine.confirm import refuse_unattended

from .models import FunctionModel, well_behaved


class Desk:
    """A confirmer that records each question and answers with what the test queued."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.questions = []
        self.waiting = asyncio.Event()

    async def __call__(self, request):
        self.questions.append(request)
        answer = self.answers.pop(0) if self.answers else None
        if answer is None:  # nobody answers: wait until the run is paused or cancelled
            self.waiting.set()
            await asyncio.Event().wait()
        return answer


def model():
    return FunctionModel(lambda r: well_behaved(r, width=3))


async def test_ask_mode_confirms_subgoals_and_approval_keeps_them():
    desk = Desk(ConfirmationAnswer.approve("ask"))
    run = Run.create("Write a report", model(), permission_mode="ask", confirmer=desk)
    assert await run.drive() is RunState.COMPLETE
    assert desk.questions[0].kind == "subgoals"
    assert desk.questions[0].proposal["subgoals"] == [g.text for g in list(run.record.goals.values())[1:]]
    answered = [e for e in run.record.goals.values()]
    assert len(answered) == 4


async def test_edits_drop_and_rewrite_subgoals():
    desk = Desk(ConfirmationAnswer.approve("ask", subgoals=["Find only this"]))
    run = Run.create("Write a report", model(), permission_mode="ask", confirmer=desk)
    await run.drive()
    goals = list(run.record.goals.values())
    assert [g.text for g in goals[1:]] == ["Find only this"]
    assert "edited on confirmation" in goals[0].note


async def test_decline_executes_the_parent_directly():
    desk = Desk(ConfirmationAnswer.decline())
    run = Run.create("Write a report", model(), permission_mode="ask", confirmer=desk)
    await run.drive()
    goals = list(run.record.goals.values())
    assert len(goals) == 1 and goals[0].status.value == "done"
    assert "sub-goals declined" in goals[0].note


async def test_pausing_while_a_question_is_open_aborts_it():
    desk = Desk(None)
    run = Run.create("Write a report", model(), permission_mode="ask", confirmer=desk)
    events = []
    run.subscribe(events.extend)
    driver = asyncio.create_task(run.drive())
    await desk.waiting.wait()
    assert run.record.pending_confirmation is not None
    run.pause()
    assert await asyncio.wait_for(driver, 1) is RunState.PAUSED
    run.recorder.flush()
    answers = [e for e in events if e.type == "confirmation_answered"]
    assert [a.outcome for a in answers] == [Outcome.ABORTED.value]
    assert run.record.pending_confirmation is None


async def test_approval_can_change_the_permission_mode():
    desk = Desk(ConfirmationAnswer.approve("auto"))
    run = Run.create("Write a report", FunctionModel(lambda r: well_behaved(r, width=2, leaf_depth=2)),
                     permission_mode="ask", confirmer=desk)
    await run.drive()
    assert run.record.permission_mode == "auto"
    assert len(desk.questions) == 1  # no more questions once the mode is auto


async def test_auto_edit_does_not_ask_for_subgoals():
    desk = Desk()
    run = Run.create("Write a report", model(), permission_mode="auto-edit", confirmer=desk)
    await run.drive()
    assert not desk.questions


async def test_unattended_confirmation_pauses_with_a_reason():
    run = Run.create("Write a report", model(), permission_mode="ask", confirmer=refuse_unattended)
    assert await run.drive() is RunState.PAUSED
    assert run.record.stop_reason.startswith("needs confirmation")
    run.confirmer = Desk(ConfirmationAnswer.approve())
    run.resume()
    assert await run.drive() is RunState.COMPLETE


async def test_plan_mode_builds_the_tree_then_waits_and_executes_after_a_mode_change():
    model = FunctionModel(lambda r: well_behaved(r, width=3))
    run = Run.create("Write a report", model, permission_mode="plan")
    assert await run.drive() is RunState.PAUSED
    assert run.record.stop_reason.startswith("needs confirmation: the plan is ready")
    assert "execute" not in model.purposes()
    leaves = [g for g in run.record.goals.values() if not g.children]
    assert len(leaves) == 3 and all(g.status.value == "pending" and g.actionable for g in leaves)
    run.resume()  # still in plan mode: nothing to do but wait again
    assert await run.drive() is RunState.PAUSED
    run.set_permission_mode("auto")
    run.resume()
    assert await run.drive() is RunState.COMPLETE
    assert model.purposes().count("actionable") == 4  # judged once, not again after the plan
    assert model.purposes().count("execute") == 3


async def test_a_question_a_stop_left_open_comes_back_with_its_edits_and_is_not_paid_for_again(journal):
    """Issue 11, item 10: the proposal and the operator's edits are journaled; after a pause (and,
    from the journal alone, after a crash) the same question is asked again with them, and the model
    is not asked for the split again."""
    from goalgui.engine.record import RunRecord

    desk = Desk(None)
    m = model()
    run = Run.create("Write a report", m, permission_mode="ask", confirmer=desk, sink=journal)
    driver = asyncio.create_task(run.drive())
    await desk.waiting.wait()
    first = desk.questions[0]
    assert first.draft is None and first.save_draft is not None
    typed = {"mode": "ask", "items": [["Find part 0, edited", True], ["Find part 1", False], ["Find part 2", True]]}
    first.save_draft(typed)
    crashed = RunRecord.from_events(journal.events(run.run_id))  # what a crash leaves in the journal
    assert crashed.unanswered[("subgoals", "g1")]["draft"] == typed
    paid = len(m.calls)
    run.pause()
    assert await driver is RunState.PAUSED
    kinds = [e.type for e in journal.events(run.run_id)]
    assert "confirmation_drafted" in kinds and kinds.count("confirmation_asked") == 1

    desk.answers = [ConfirmationAnswer.approve("ask", subgoals=["Find part 0, edited", "Find part 2"])]
    run.resume()
    assert await run.drive() is RunState.COMPLETE
    again = desk.questions[1]
    assert again.proposal == first.proposal and again.draft == typed  # asked again, edits and all
    decompose_calls = [r for r in m.calls[paid:] if r.purpose == "decompose" and r.goal.id == "g1"]
    assert decompose_calls == []  # the split was not bought again
    assert [g.text for g in list(run.record.goals.values())[1:]] == ["Find part 0, edited", "Find part 2"]
    assert "asked again, not made again" in run.record.goals["g1"].note
    assert run.record.unanswered == {}
