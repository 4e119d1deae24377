"""Controls, the status line and confirmation dialogs against a real run in qasync's loop."""

import asyncio
import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from goalgui.engine import Limits, ModelReply, Outcome, Run, RunState, Usage
from goalgui.ui.confirm_dialog import DialogConfirmer
from goalgui.ui.controls import ControlBar, modeline

from .models import well_behaved


class Gate:
    """Execute calls wait for `release`; everything else answers at once."""

    name = "gate"

    def __init__(self, width=3):
        self.width = width
        self.entered = asyncio.Event()
        self.release = asyncio.Event()

    async def complete(self, request):
        if request.purpose == "execute" and not self.release.is_set():
            self.entered.set()
            await self.release.wait()
        out = well_behaved(request, width=self.width)
        return ModelReply(out if isinstance(out, str) else json.dumps(out), usage=Usage(10, 5))


def until(loop, predicate, timeout=5.0):
    async def wait():
        while not predicate():
            await asyncio.sleep(0.01)

    loop.run_until_complete(asyncio.wait_for(wait(), timeout))


def started(qtbot, qloop, width=3):
    """A run with its control bar, driven until its first execute call is in progress."""
    model = Gate(width)
    run = Run.create("Write a report", model)
    bar = ControlBar()
    qtbot.addWidget(bar)
    bar.bind(run)
    run.start()
    until(qloop, model.entered.is_set)
    return model, run, bar


def test_buttons_follow_the_state_and_act_at_once(qtbot, qloop):
    model, run, bar = started(qtbot, qloop)
    bar.refresh()
    assert bar.pause_button.isEnabled() and not bar.resume_button.isEnabled()
    assert bar.skip_button.isEnabled() and bar.cancel_button.isEnabled()
    assert modeline(run.record).startswith("active")

    qtbot.mouseClick(bar.pause_button, Qt.MouseButton.LeftButton)
    assert run.state is RunState.PAUSED  # at once, mid-call
    assert not bar.pause_button.isEnabled() and bar.resume_button.isEnabled()
    assert "paused by user" in modeline(run.record)

    model.release.set()
    qtbot.mouseClick(bar.resume_button, Qt.MouseButton.LeftButton)
    assert run.state is RunState.ACTIVE
    until(qloop, lambda: run.state is RunState.COMPLETE)
    bar.refresh()
    assert not any(b.isEnabled() for b in (bar.pause_button, bar.resume_button, bar.skip_button,
                                           bar.cancel_button, bar.raise_button))


def test_cancel_asks_once(qtbot, qloop):
    model, run, bar = started(qtbot, qloop)
    qtbot.mouseClick(bar.cancel_button, Qt.MouseButton.LeftButton)
    box = bar._confirm_cancel
    assert box.isVisible() and run.state is RunState.ACTIVE
    box.button(QMessageBox.StandardButton.Yes).click()
    assert run.state is RunState.CANCELLED
    until(qloop, lambda: run._drive_task.done())


def blocked(qtbot, qloop, model, limits):
    """A run with its control bar, driven until a budget blocks it."""
    run = Run.create("Write a report", model, limits=limits)
    bar = ControlBar()
    qtbot.addWidget(bar)
    bar.bind(run)
    run.start()
    until(qloop, lambda: run.state is RunState.BLOCKED)
    bar.refresh()
    return run, bar


def test_raise_budget_on_a_blocked_run_resumes_it(qtbot, qloop):
    model = Gate(width=4)
    model.release.set()
    run, bar = blocked(qtbot, qloop, model, Limits(max_goals=1))  # the root cannot be split: blocked at once
    # resuming as it is would block again at once: Resume waits for the budget, and Raise says it resumes
    assert not bar.resume_button.isEnabled() and "goal budget is still too small" in bar.resume_button.toolTip()
    assert bar.raise_button.isEnabled() and bar.raise_button.text() == "Raise and resume…"
    dialog = bar.open_raise_dialog()
    assert "Blocked: the goal budget is still too small (1 of 1 used; 2 more needed)" in dialog.headline.text()
    assert dialog.ok_button.text() == "Raise and resume"
    dialog.goals.setValue(2)  # one short of what the split needs: refused in the dialog, nothing changes
    dialog.ok_button.click()
    assert dialog.isVisible() and "would stop again at once" in dialog.error.text()
    assert run.record.limits.max_goals == 1 and run.state is RunState.BLOCKED
    dialog.goals.setValue(10)
    dialog.ok_button.click()
    assert run.record.limits.max_goals == 10 and run.state is RunState.ACTIVE
    until(qloop, lambda: run.state is RunState.COMPLETE)
    assert run.report()["outcome"] == "done"


def test_the_raise_dialog_names_what_is_used_and_0_clears_a_budget(qtbot, qloop):
    class Costly(Gate):
        async def complete(self, request):
            reply = await super().complete(request)
            return ModelReply(reply.text, usage=Usage(400, 100))

    model = Costly()
    model.release.set()
    run, bar = blocked(qtbot, qloop, model, Limits(tokens=600, turns=50))
    assert run.record.stop_reason.startswith("budget: tokens") and not bar.resume_button.isEnabled()
    dialog = bar.open_raise_dialog()
    assert "the tokens budget is still spent" in dialog.headline.text()
    used = run.record.metrics.tokens
    dialog.tokens.setValue(used)  # equal to what is used: still spent
    dialog.ok_button.click()
    assert "tokens budget is still spent" in dialog.error.text() and run.state is RunState.BLOCKED
    dialog.tokens.setValue(0)  # no token budget at all
    dialog.turns.setValue(0)
    dialog.ok_button.click()
    assert run.record.limits.tokens is None and run.record.limits.turns is None
    until(qloop, lambda: run.state is RunState.COMPLETE)


def _ask_run(model, confirmer):
    return Run.create("Write a report", model, permission_mode="ask", confirmer=confirmer)


def test_subgoal_dialog_keeps_edits_and_drops(qtbot, qloop):
    confirmer = DialogConfirmer(None)
    model = Gate(width=3)
    model.release.set()
    run = _ask_run(model, confirmer)
    run.start()
    until(qloop, lambda: confirmer.open_dialogs)
    dialog = confirmer.open_dialogs[0]
    assert dialog.isVisible() and not dialog.isModal()
    assert "WAITING" in modeline(run.record, waiting=run.record.pending_confirmation is not None)
    dialog.subgoals.item(1).setCheckState(Qt.CheckState.Unchecked)
    dialog.subgoals.item(2).setText("Draft the summary")
    dialog.approve_button.click()
    until(qloop, lambda: run.state is RunState.COMPLETE)
    assert [g.text for g in list(run.record.goals.values())[1:]] == [
        "Find part 0 of Write a report", "Draft the summary"]


def test_subgoal_dialog_decline_and_timeout(qtbot, qloop):
    for timeout, press in ((None, "decline"), (0.2, None)):
        confirmer = DialogConfirmer(None, timeout_s=timeout)
        model = Gate()
        model.release.set()
        run = _ask_run(model, confirmer)
        answers = []
        run.subscribe(lambda batch: answers.extend(e.outcome for e in batch if e.type == "confirmation_answered"))
        run.start()
        until(qloop, lambda: confirmer.open_dialogs)
        if press:
            confirmer.open_dialogs[0].decline_button.click()
        until(qloop, lambda: run.state is RunState.COMPLETE)
        assert answers == [Outcome.DECLINED.value]
        assert len(run.record.goals) == 1 and "sub-goals declined" in run.record.goals["g1"].note


def test_pausing_aborts_an_open_dialog(qtbot, qloop):
    confirmer = DialogConfirmer(None)
    model = Gate()
    run = _ask_run(model, confirmer)
    run.start()
    until(qloop, lambda: confirmer.open_dialogs)
    answers = []
    run.subscribe(lambda batch: answers.extend(e.outcome for e in batch if e.type == "confirmation_answered"))
    run.pause()
    until(qloop, lambda: run._drive_task.done())
    assert run.state is RunState.PAUSED and not confirmer.open_dialogs
    assert answers == [Outcome.ABORTED.value] and run.record.pending_confirmation is None


def test_resuming_a_run_the_model_blocked_asks_what_it_needs_and_tells_it(qtbot, qloop):
    from goalgui.engine import ModelReply

    seen = []

    class Blocks(Gate):
        async def complete(self, request):
            seen.append(str(request.messages))
            if request.purpose == "execute" and request.goal.id == "g2" and not any("MARK-ADDRESS" in s for s in seen):
                return ModelReply("BLOCKED: needs the customer's address")
            return await super().complete(request)

    model = Blocks()
    model.release.set()
    run, bar = blocked(qtbot, qloop, model, Limits())
    assert run.record.stop_reason.startswith("blocked by model") and bar.resume_button.isEnabled()
    bar.resume_button.click()
    dialog = bar.message_dialog
    assert "needs the customer's address" in dialog.labelText()
    dialog.setTextValue("MARK-ADDRESS: 1 High Street")
    dialog.accept()
    assert run.state is RunState.ACTIVE and run.record.operator_messages == ["MARK-ADDRESS: 1 High Street"]
    until(qloop, lambda: run.state is RunState.COMPLETE, timeout=20)
