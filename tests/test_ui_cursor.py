"""The cursor in the window: its plan beside the tree, the cursor on the active task, task N/M."""

import json

from goalgui.engine import Limits, RunState

from .test_cursor import PROOF_SCRIPT
from .test_ui_controls import until
from .test_ui_window import window  # noqa: F401  (the fixture)



def test_the_plan_is_shown_beside_the_tree_with_the_cursor_and_task_n_of_m(window, qloop, journal, tmp_path):
    script = tmp_path / "cursor.json"
    script.write_text(json.dumps(PROOF_SCRIPT))
    assert not window.plan.isVisible()  # no plan for a goal-stack run or none
    run = window.start_goal({"objective": "Create the notes file, then prove it exists", "criteria": "",
                             "strategy": "cursor", "model": f"scripted:{script}", "limits": Limits(),
                             "mode": "auto", "workspace": str(tmp_path / "ws")})
    until(qloop, lambda: run.state is RunState.COMPLETE, timeout=20)
    until(qloop, lambda: window.shown_state is RunState.COMPLETE)
    assert window.plan.isVisible() and window.plan.count() == 2
    assert window.plan.item(0).text() == "✔ 1. Write proof.txt  (done)"
    assert "evidence: read back: ok" in window.plan.item(0).toolTip()
    assert "task 2/2" in window.modeline.text()
    assert f"workspace {(tmp_path / 'ws').resolve()}" in window.modeline.text()  # where the run acts
    assert (tmp_path / "ws" / "proof.txt").read_text() == "ok"
    window.refresh_runs()
    window.runs_view.table.selectRow(0)
    window.show_journaled(run.run_id)
    assert [window.plan.item(i).text() for i in range(window.plan.count())] == [
        "✔ 1. Write proof.txt  (done)", "✔ 2. Check proof.txt  (done)"]
    assert f"workspace {(tmp_path / 'ws').resolve()}" in window.modeline.text()  # a journaled run's too


def test_goal_commands_show_the_plan_move_the_cursor_on_and_clear_the_goal(window, qloop, tmp_path):
    script = tmp_path / "slow.json"
    script.write_text(json.dumps({"latency": 0.3, "rules": [
        {"purpose": "decompose", "reply": {"tasks": ["Write alpha", "Write beta", "Write gamma"]}},
        {"purpose": "confirm_plan", "reply": "APPROVE"},
        {"purpose": "work", "reply": "written"},
        {"purpose": "summarize", "reply": "done"},
    ]}))
    run = window.start_goal({"objective": "Write the three notes, alpha then beta then gamma", "criteria": "",
                             "strategy": "cursor", "model": f"scripted:{script}", "limits": Limits(),
                             "mode": "auto", "workspace": str(tmp_path / "ws")})
    until(qloop, lambda: run.record.task_position() == "1/3", timeout=20)

    def command(text):
        window.command.setText(text)
        window.command.returnPressed.emit()

    command("/goal")
    assert "[>] 1. Write alpha" in window.chat_log.toPlainText()
    command("/goal skip")  # the cursor moves on at once, mid-call
    task = run.record.goals[run.record.goals[run.record.root_id].children[0]]
    assert task.status.value == "skipped"
    until(qloop, lambda: run.record.task_position() == "2/3", timeout=5)
    command("/goal clear")
    assert run.state is RunState.CANCELLED and run.record.stop_reason == "cleared by /goal clear"
    command("/goal clear")
    assert "cancelled already" in window.statusBar().currentMessage()


def test_the_tool_dialog_allows_once_for_the_run_or_denies_with_a_reason(qtbot):
    from PySide6.QtWidgets import QPlainTextEdit

    from goalgui.engine import ConfirmationRequest, Outcome
    from goalgui.ui.confirm_dialog import ConfirmDialog

    def dialog():
        request = ConfirmationRequest("c1", "tool", {"tool": "run_shell", "effect": "shell",
                                                     "arguments": {"command": "make test"},
                                                     "preview": "$ make test\x1b[2J"}, "ask")
        d = ConfirmDialog(request)
        qtbot.addWidget(d)
        answers = []
        d.answered.connect(answers.append)
        return d, answers

    d, answers = dialog()
    assert d.windowTitle() == "The model wants to use a tool"
    assert d.findChild(QPlainTextEdit).toPlainText() == "$ make test\x1b[2J"  # plain text, read only
    assert d.findChild(QPlainTextEdit).isReadOnly()
    d.approve_button.click()
    assert answers[0].outcome is Outcome.APPROVED and not answers[0].edits.get("always")
    d, answers = dialog()
    d.always_button.click()
    assert answers[0].outcome is Outcome.APPROVED and answers[0].edits == {"always": True}
    d, answers = dialog()
    d.reason.setText("not on this machine")
    d.decline_button.click()
    assert answers[0].outcome is Outcome.DECLINED and answers[0].edits == {"reason": "not on this machine"}
