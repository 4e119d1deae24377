"""One current goal per window, whose model it is, and asking before anything final (issue 11, items
7, 8, 9, 11, 12, 19), against real runs in the real journal and real widgets."""

from PySide6.QtWidgets import QMessageBox

from goalgui.engine import Limits, Run, RunState

from .test_ui_controls import Gate, until
from .test_ui_window import chat_until_a_proposal, fast_rehearsal, interrupted_window, window  # noqa: F401 (fixture)


def goal(objective, model="scripted:rehearsal", mode="auto"):
    return {"objective": objective, "criteria": "", "strategy": "goal-stack", "model": model,
            "limits": Limits(), "mode": mode}


def held(window, qloop, objective="Write a report"):
    """A run the window drives, held in its first execute call."""
    model = Gate()
    run = Run.create(objective, model, sink=window.journal, model_spec="scripted:rehearsal")
    window.run_goal(run)
    until(qloop, model.entered.is_set)
    return model, run


def answer(box, yes: bool) -> None:
    box.button(QMessageBox.StandardButton.Yes if yes else QMessageBox.StandardButton.No).click()


def test_a_new_goal_while_one_is_current_asks_and_keeping_it_starts_nothing(window, qloop, journal):
    model, first = held(window, qloop)
    assert window.current is first
    assert window.start_goal(goal("Plan a picnic")) is None
    box = window.replace_box
    assert "A goal is current (active): Write a report" in box.text() and "cancelled" in box.text()
    answer(box, yes=False)
    assert first.state is RunState.ACTIVE and window.current is first and len(journal.runs()) == 1
    assert window.start_goal(goal("Plan a picnic")) is None
    answer(window.replace_box, yes=True)  # replace: the old one is cancelled first, with its note
    assert first.state is RunState.CANCELLED and first.record.stop_reason == "replaced by a new goal"
    new = window.current
    assert new is not None and new.record.objective == "Plan a picnic" and window.run is new
    model.release.set()
    until(qloop, lambda: new.state is RunState.COMPLETE, timeout=20)
    assert window.current is None  # a finished goal is not current: the next one starts at once
    assert window.start_goal(goal("Plan a second picnic")) is not None


def test_slash_goal_new_and_resuming_another_run_are_held_to_one_current_goal(window, qloop, journal):
    other = Run.create("Something paused", fast_rehearsal(), sink=journal, model_spec="scripted:rehearsal")
    other.recorder.flush()
    other.pause("paused by the operator")
    model, first = held(window, qloop)
    window.command.setText("/goal new Plan a picnic")
    window.command.returnPressed.emit()
    answer(window.replace_box, yes=False)
    assert window.current is first and len(journal.runs()) == 2
    window.show_journaled(other.run_id)  # inspecting another run leaves the current goal current
    assert window.current is first and first.state is RunState.ACTIVE
    assert window.resume_journaled(other.run_id) is None
    answer(window.replace_box, yes=True)
    assert first.state is RunState.CANCELLED and window.current.run_id == other.run_id
    until(qloop, lambda: window.current is None, timeout=20)
    model.release.set()


def test_a_chat_proposal_is_refused_while_the_window_drives_a_goal(window, qloop, journal):
    from .test_session import create

    model, first = held(window, qloop)
    from goalgui.engine.session import GoalSession

    from .test_session import ChatModel

    window.session = GoalSession(ChatModel(create("Draft the release notes"), "ok"), sink=journal,
                                 confirmer=window.confirmer, permission_mode="ask", on_run=window._on_session_run)
    window.command.setText("please draft the release notes")
    window.command.returnPressed.emit()
    until(qloop, lambda: "a goal is already current" in window.chat_log.toPlainText())
    assert not window.confirmer.open_dialogs and window.current is first and len(journal.runs()) == 1
    model.release.set()


def test_new_goals_and_the_chat_use_the_windows_model_and_the_window_names_it(window, qloop, journal):
    window.settings.default_model = "scripted:rehearsal"
    assert window.open_new_goal().model.currentText() == "scripted:rehearsal"
    window.launch_model = "scripted:echo"  # `goalgui run --model scripted:echo --window`
    assert window.model_for_new() == "scripted:echo"
    assert window.open_new_goal().model.currentText() == "scripted:echo"
    model, first = held(window, qloop)  # a current run's own model comes first
    assert window.model_for_new() == "scripted:rehearsal"
    assert "model scripted:rehearsal" in window.modeline.text()
    model.release.set()
    until(qloop, lambda: first.state.final, timeout=20)


def test_an_opened_run_shows_its_own_permission_mode(window, qloop, journal):
    run = Run.create("Produce a market analysis", fast_rehearsal(), sink=journal, permission_mode="plan")
    qloop.run_until_complete(run.drive())
    window.controls.mode.setCurrentText("auto")
    window.show_journaled(run.run_id)
    assert window.controls.mode.currentText() == "plan" and not window.controls.mode.isEnabled()


def test_abandon_asks_first(qtbot, qloop, journal):
    _run, window = interrupted_window(qtbot, journal)
    window.interrupted_abandon.click()
    assert "cannot be resumed" in window.abandon_box.text()
    answer(window.abandon_box, yes=False)
    assert journal.runs()[0]["state"] == "paused"
    window.interrupted_abandon.click()
    answer(window.abandon_box, yes=True)
    assert journal.runs()[0]["state"] == "cancelled"


def test_closing_mid_run_asks_and_keep_running_keeps_it(window, qloop):
    model, run = held(window, qloop)
    window.close()
    answer(window.close_box, yes=False)
    assert window.isVisible() and run.state is RunState.ACTIVE
    window.close()
    answer(window.close_box, yes=True)
    assert not window.isVisible() and run.state is RunState.PAUSED
    model.release.set()


def test_a_proposal_does_not_take_the_keyboard_from_the_chat_bar(window, qloop, journal, qtbot):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    from .test_session import create

    window.activateWindow()
    window.command.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window.command)
    chat_until_a_proposal(window, qloop, journal, create("Draft the release notes"), "draft the notes")
    dialog = window.confirmer.open_dialogs[0]
    assert dialog.testAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating)
    qtbot.keyClicks(window.command, "more")
    assert window.command.text() == "more" and dialog.objective.toPlainText() == "Draft the release notes"
    assert dialog.mode.toolTip().startswith("Approving sets the run's permission mode")
    dialog.decline_button.click()


def test_a_split_can_gain_a_sub_goal_and_declining_says_what_it_does(qtbot):
    from goalgui.engine.confirm import ConfirmationRequest
    from goalgui.ui.confirm_dialog import ConfirmDialog

    dialog = ConfirmDialog(ConfirmationRequest("c1", "subgoals", {"parent": "Plan a party",
                                                                 "subgoals": ["Book a venue", "Send invites"]}, "ask"))
    qtbot.addWidget(dialog)
    assert dialog.decline_button.text() == "Don't split: do it directly"
    item = dialog.add_button.click() or dialog.subgoals.item(2)
    item.setText("Order the cake")
    blank = dialog.add_subgoal()  # left empty: dropped
    assert blank.text() == ""
    assert dialog.answer().edits["subgoals"] == ["Book a venue", "Send invites", "Order the cake"]


def test_budgets_typed_in_the_window_are_read_as_the_command_reads_them(window, qloop, journal):
    dialog = window.open_new_goal()
    dialog.intent.setText("Plan a picnic")
    dialog.model.setCurrentText("scripted:rehearsal")
    dialog.seconds.setText("99999")  # a spin box made this 9999 without a word
    dialog._on_buttons_accepted()
    assert dialog.isVisible() and dialog.error.text() == "time budget 99999s is out of range: it must be between 1 s and 24 h"
    dialog.seconds.setText("10m")
    dialog.tokens.setText("-5")  # a spin box dropped the sign
    dialog._on_buttons_accepted()
    assert dialog.error.text().startswith("token budget -5 is out of range")
    dialog.tokens.setText("five")
    dialog._on_buttons_accepted()
    assert dialog.error.text() == "bad token budget 'five': it must be a whole number"
    dialog.tokens.setText("5,000")
    dialog._on_buttons_accepted()
    assert not dialog.isVisible() and len(journal.runs()) == 1
    limits = window.current.record.limits
    assert (limits.seconds, limits.tokens, limits.turns) == (600.0, 5000, None)
    window.current.cancel()


def test_the_tree_says_what_a_stopped_runs_goals_wait_for(window, qloop, journal):
    model = Gate()
    model.release.set()
    run = Run.create("Write a report", model, sink=journal, limits=Limits(max_goals=1))
    window.run_goal(run)
    until(qloop, lambda: window.shown_state is RunState.BLOCKED)
    window._update_status()
    status = window.tree_model.data(window.tree_model.index(0, 3))
    assert status == "— abandoned · waiting on the budget"
    assert "Raise and resume" in window.controls.raise_button.text()


def test_a_split_being_edited_survives_pause_and_resume_in_the_window(window, qloop, journal):
    """Issue 11, item 10, through the real dialog: edits are journaled as typed; Pause aborts the
    dialog; Resume shows the same question with those edits, without a new decomposition."""
    from PySide6.QtCore import Qt

    from .models import FunctionModel, well_behaved

    m = FunctionModel(lambda r: well_behaved(r, width=3))
    run = Run.create("Write a report", m, sink=journal, permission_mode="ask", confirmer=window.confirmer)
    window.run_goal(run)
    until(qloop, lambda: window.confirmer.open_dialogs)
    dialog = window.confirmer.open_dialogs[0]
    dialog.subgoals.item(0).setText("Find part 0, in my words")
    dialog.subgoals.item(1).setCheckState(Qt.CheckState.Unchecked)
    until(qloop, lambda: any(e.type == "confirmation_drafted" for e in journal.events(run.run_id)))
    dialog.subgoals.item(2).setText("Find part 2, typed just before the pause")  # not yet debounced
    decompositions = sum(1 for r in m.calls if r.purpose == "decompose")
    window.controls.pause_button.click()
    until(qloop, lambda: not window.confirmer.open_dialogs)
    window.controls.refresh()
    window.controls.resume_button.click()
    until(qloop, lambda: window.confirmer.open_dialogs)
    again = window.confirmer.open_dialogs[0]
    texts = [(again.subgoals.item(i).text(), again.subgoals.item(i).checkState() == Qt.CheckState.Checked)
             for i in range(again.subgoals.count())]
    assert texts == [("Find part 0, in my words", True), ("Find part 1 of Write a report", False),
                     ("Find part 2, typed just before the pause", True)]
    assert sum(1 for r in m.calls if r.purpose == "decompose") == decompositions
    again.approve_button.click()
    until(qloop, lambda: run.state is RunState.COMPLETE, timeout=20)
    assert [g.text for g in list(run.record.goals.values())[1:]] == ["Find part 0, in my words",
                                                                     "Find part 2, typed just before the pause"]


def test_a_replacement_that_cannot_start_keeps_the_current_goal_and_one_question_at_a_time(window, qloop, journal):
    """Review findings: the old goal was cancelled before the new one was known to start, and two
    replace questions answered yes left two live runs."""
    model, first = held(window, qloop)
    window.start_goal(goal("Plan a picnic", model="nosuchkind:foo"))
    answer(window.replace_box, yes=True)
    assert first.state is RunState.ACTIVE and window.current is first  # it could not start: nothing lost
    assert "nosuchkind" in window.statusBar().currentMessage()
    window.start_goal(goal("Plan A"))
    box = window.replace_box
    assert window.start_goal(goal("Plan B")) is None and window.replace_box is box  # refused while it is open
    assert "answer the open question" in window.statusBar().currentMessage()
    answer(box, yes=True)
    live = [r for r in journal.runs() if r["state"] == "active"]
    assert [r["objective"] for r in live] == ["Plan A"]
    window.current.cancel()
    model.release.set()


def test_a_journaled_run_a_budget_blocked_is_raised_and_resumed_from_the_banner(window, qloop, journal):
    model = Gate()
    model.release.set()
    run = Run.create("Write a report", model, sink=journal, limits=Limits(max_goals=1), model_spec="scripted:rehearsal")
    qloop.run_until_complete(run.drive())
    journal.release(run.run_id)
    window.show_journaled(run.run_id)
    assert window.interrupted_bar.isVisibleTo(window) and window.interrupted_resume.text() == "Raise and resume…"
    window.interrupted_resume.click()
    until(qloop, lambda: getattr(window, "raise_dialog", None) is not None and window.raise_dialog.isVisible())
    dialog = window.raise_dialog
    assert "goal budget is still too small" in dialog.headline.text()
    dialog.goals.setText("30")
    dialog.ok_button.click()
    resumed = window.current
    assert resumed is not None and resumed.run_id == run.run_id and resumed.record.limits.max_goals == 30
    until(qloop, lambda: resumed.state.final, timeout=20)
    assert resumed.state is RunState.COMPLETE


def test_slash_goal_fork_goes_on_in_a_conversation_without_the_goal(window, qloop, journal):
    """Seed 001's fork rule in the window: `/goal fork` starts a conversation with the same history but
    not the goal (the run goes on, no longer the window's current goal, and the agent is told not to
    pursue it); `/goal fork continue` keeps the goal."""
    from goalgui.engine.session import GoalSession

    from .test_session import ChatModel

    window.command.setText("/goal fork")
    window.command.returnPressed.emit()
    assert "no conversation to fork yet" in window.statusBar().currentMessage()
    model, first = held(window, qloop)
    chat = ChatModel("Noted.", "Something else, then.", "Still on it.")
    window.session = GoalSession(chat, sink=journal, confirmer=window.confirmer, on_run=window._on_session_run)
    window.command.setText("how is the report going?")
    window.command.returnPressed.emit()
    until(qloop, lambda: "agent: Noted." in window.chat_log.toPlainText())
    source = window.session
    assert source.run is first  # the window's current goal is the conversation's
    window.command.setText("/goal fork continue")
    window.command.returnPressed.emit()
    assert window.session is not source and window.session.run is first and window.current is first
    assert "goes on with the goal 'Write a report'" in window.chat_log.toPlainText()
    window.command.setText("/goal fork")
    window.command.returnPressed.emit()
    assert window.session.run is None and window.current is None
    assert "stays with the earlier conversation" in window.chat_log.toPlainText()
    window.command.setText("let us talk about something else")
    window.command.returnPressed.emit()
    until(qloop, lambda: "agent: Something else, then." in window.chat_log.toPlainText())
    system = chat.requests[-1].messages[0]["content"]
    assert "forked from another session" in system and "do not pursue it" in system
    assert window.session.run is None  # the window's run was not offered back to the fork
    assert first.state is RunState.ACTIVE  # the source's goal goes on
    model.release.set()
    until(qloop, lambda: first.state is RunState.COMPLETE, timeout=20)
    window.command.setText("/goal fork sideways")
    window.command.returnPressed.emit()
    assert "unknown command: /goal fork sideways" in window.statusBar().currentMessage()
