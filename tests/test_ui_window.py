"""The main window against real runs: live tree and status, journaled runs reopened, restore."""

import asyncio

import pytest

from goalgui.engine import Limits, Run, RunState
from goalgui.providers import ScriptedModel
from goalgui.settings import Settings
from goalgui.ui.main_window import MainWindow
from goalgui.ui.tree_model import GOAL_ID_ROLE, STATUS_ROLE

from .test_ui_controls import until


@pytest.fixture
def window(qtbot, journal, qloop):
    w = MainWindow(journal, Settings())
    qtbot.addWidget(w)
    w.show()
    return w


def fast_rehearsal():
    return ScriptedModel.from_spec("rehearsal").__class__(ScriptedModel.from_spec("rehearsal").script, latency=0.0)


def tree_rows(model, parent=None):
    from PySide6.QtCore import QModelIndex

    parent = parent or QModelIndex()
    while model.canFetchMore(parent):  # a journaled run is read lazily
        model.fetchMore(parent)
    out = []
    for row in range(model.rowCount(parent)):
        index = model.index(row, 0, parent)
        out.append((model.data(index, GOAL_ID_ROLE), model.data(index, STATUS_ROLE), tree_rows(model, index)))
    return out


def report_rows(report, parent=None):
    return [(g["id"], g["status"], report_rows(report, g["id"])) for g in report["goals"] if g["parent_id"] == parent]


def chat_until_a_proposal(window, qloop, journal, proposal, text):
    """Send `text` through the command bar to a chat model that answers with `proposal` (a CreateGoal
    call); return once its confirmation dialog is open."""
    from goalgui.engine.session import GoalSession

    from .test_session import ChatModel

    model = ChatModel(proposal, "Started it.")
    model.name = "chat"
    window.session = GoalSession(model, sink=journal, confirmer=window.confirmer, permission_mode="auto-edit",
                                 on_run=window._on_session_run)
    window.command.setText(text)
    window.command.returnPressed.emit()
    until(qloop, lambda: window.confirmer.open_dialogs)


def test_a_live_run_fills_the_tree_plots_and_status_line(window, qloop, qtmodeltester):
    qtmodeltester.check(window.tree_model)
    run = window.start_goal({"objective": "Produce a market analysis of UK meal-kit services", "criteria": "",
                             "strategy": "goal-stack", "model": "scripted:rehearsal", "limits": Limits(),
                             "mode": "auto"})
    run.model.latency = 0.0
    until(qloop, lambda: run.state is RunState.COMPLETE, timeout=20)
    until(qloop, lambda: window.shown_state is RunState.COMPLETE)
    report = run.report()
    assert tree_rows(window.tree_model) == report_rows(report)
    assert window.modeline.text().startswith("complete") and f"{report['metrics']['tokens']:,}" in window.modeline.text()
    until(qloop, lambda: not window.budgets.history.dirty)  # redrawn by its timer, not per event
    xs, ys = window.budgets.curves["goals"].getData()
    assert ys[-1] == report["metrics"]["goals_created"] / 25
    window.tree.setCurrentIndex(window.tree.model().index(0, 0))
    assert "market analysis" in window.detail.toPlainText() and "summarize" not in window.detail.toPlainText()


def test_a_journaled_run_opens_read_only_and_the_filter_keeps_the_shape(window, qloop, journal):
    run = Run.create("Produce a market analysis", fast_rehearsal(), sink=journal)
    qloop.run_until_complete(run.drive())
    window.refresh_runs()
    assert window.runs_view.table.rowCount() == 1
    window.runs_view.table.selectRow(0)
    window.runs_view.open_button.click()
    assert tree_rows(window.tree_model) == report_rows(run.report())
    assert not window.controls.pause_button.isEnabled() and not window.controls.resume_button.isEnabled()
    window.search.setText("Gousto")
    window.tree.expandAll()
    assert window.tree.model() is window.proxy
    visible = []
    index = window.proxy.index(0, 0)
    while index.isValid():
        visible.append(window.proxy.data(index, GOAL_ID_ROLE))
        index = window.tree.indexBelow(index)
    assert visible == ["g1", "g3", "g7"]  # the match with its ancestors
    window.search.setText("")
    assert window.tree.model() is window.tree_model
    window.status_filter.setCurrentIndex(window.status_filter.findData("failed"))
    assert window.tree.model() is window.proxy and window.proxy.rowCount() == 0  # nothing failed
    window.status_filter.setCurrentIndex(0)
    assert window.tree.model() is window.tree_model


def interrupted_window(qtbot, journal):
    """A run whose process was killed mid-run, and a window opened on the journal afterwards."""
    run = Run.create("Produce a market analysis", fast_rehearsal(), sink=journal, model_spec="scripted:rehearsal")
    run.recorder.flush()
    journal._db.execute("UPDATE runs SET owner_pid=999999999 WHERE run_id=?", (run.run_id,))
    journal._owned.clear()  # as if its process had been killed
    window = MainWindow(journal, Settings())
    qtbot.addWidget(window)
    return run, window


def test_an_interrupted_run_comes_back_paused_and_resumes(qtbot, qloop, journal):
    run, window = interrupted_window(qtbot, journal)
    assert window.interrupted_bar.isVisibleTo(window) and "paused" in window.interrupted_label.text()
    window.interrupted_resume.click()
    resumed = window.run
    assert resumed is not None and resumed.run_id == run.run_id
    until(qloop, lambda: resumed.state is RunState.COMPLETE, timeout=20)
    assert journal.runs()[0]["state"] == "complete"


def test_the_timeline_rebuilds_the_run_at_an_earlier_event_and_exports(window, qloop, journal, qtbot, tmp_path):
    run = Run.create("Produce a market analysis", fast_rehearsal(), sink=journal)
    qloop.run_until_complete(run.drive())
    shown = []
    window.moment_shown.connect(shown.append)
    window.show_journaled(run.run_id)
    until(qloop, lambda: shown)  # its health and plots are read off the event loop
    assert window.inspect.isVisible() and "leaves done:failed 7:0" in window.inspect.health.text()
    shown.clear()
    events = list(journal.events(run.run_id))
    fifth_goal = [e.seq for e in events if e.type == "goal_added"][4]
    window.inspect.slider.setValue(fifth_goal)
    until(qloop, lambda: shown == [fifth_goal])  # debounced, then replayed off the event loop
    assert window.tree_model.goal_count() == 5
    assert window.shown_seq == fifth_goal and window.shown_state is RunState.ACTIVE
    assert f"event {fifth_goal} of {len(events)}" in window.inspect.position.text()
    md = window.inspect.export(tmp_path / "run.md", "md")
    js = window.inspect.export(tmp_path / "run.json", "json")
    assert "## Goals" in md.read_text()
    import json

    assert json.loads(js.read_text())["goals"] == run.report()["goals"]  # the whole run, not the moment


def test_a_chat_turn_proposes_a_goal_that_the_dialog_confirms_with_edits(window, qloop, journal):
    from .test_session import create

    chat_until_a_proposal(window, qloop, journal, create("Draft the release notes", criteria="every PR"),
                          "please draft the release notes on your own")
    dialog = window.confirmer.open_dialogs[0]
    assert dialog.request.kind == "create_goal" and dialog.objective.toPlainText() == "Draft the release notes"
    dialog.objective.setPlainText("Draft the release notes for 2.0")
    dialog.budgets["turns"].setValue(20)
    dialog.approve_button.click()
    until(qloop, lambda: window.run is not None and window.run.state is RunState.COMPLETE)
    until(qloop, lambda: window.shown_state is RunState.COMPLETE)  # the bridge hands on at 30 Hz
    record = window.run.record
    assert record.objective == "Draft the release notes for 2.0" and record.limits.turns == 20
    assert "agent: Started it." in window.chat_log.toPlainText()
    assert window.shown_run_id == record.run_id


def test_a_search_in_a_closed_run_finds_goals_not_yet_read_and_details_come_from_the_journal(window, qloop, journal,
                                                                                            monkeypatch):
    from goalgui.ui import tree_model

    monkeypatch.setattr(tree_model, "PAGE", 2)
    run = Run.create("Produce a market analysis", fast_rehearsal(), sink=journal)
    qloop.run_until_complete(run.drive())
    window.show_journaled(run.run_id)
    deepest = max(run.record.goals.values(), key=lambda g: (g.depth, g.id))
    assert deepest.id not in window.tree_model._nodes  # not read yet
    window.search.setText(deepest.text[:25])
    window.tree.expandAll()
    index = window.proxy.mapFromSource(window.tree_model.index_of(deepest.id))
    assert index.isValid()
    window.tree.setCurrentIndex(index)
    shown = window.detail.toPlainText()
    assert deepest.text in shown and deepest.result[:40] in shown
    calls = [c for c in journal.goal_events(run.run_id, deepest.id) if c.type == "model_called"]
    assert calls and all(c.purpose in shown for c in calls)


def test_scrolling_the_tree_by_hand_stops_following_until_follow_is_ticked(window, qloop, journal):
    from goalgui.engine import ModelReply

    release = asyncio.Event()

    class Slow:
        name = "slow"

        async def complete(self, request):
            if request.purpose == "execute":
                await release.wait()
            return ModelReply("NO" if request.purpose == "actionable" and request.goal.depth == 0 else
                              '["a", "b", "c", "d"]' if request.purpose == "decompose" else "YES")

    run = Run.create("Write a report", Slow(), sink=journal, limits=Limits())
    window.follow(run)
    run.start()
    until(qloop, lambda: window._running_goal not in (None, "g1"))  # a sub-goal, waiting in its execute call
    assert window.follow_box.isChecked()
    window.tree.verticalScrollBar().triggerAction(window.tree.verticalScrollBar().SliderAction.SliderPageStepAdd)
    assert not window.follow_box.isChecked()
    window._followed = None
    window.follow_box.setChecked(True)  # catch up: the running goal is shown again
    assert window._followed == window._running_goal
    running = window.tree_model.index_of(window._running_goal)
    assert window.tree.isExpanded(running.parent())
    assert window.tree.viewport().rect().intersects(window.tree.visualRect(running))
    release.set()
    until(qloop, lambda: run.state is RunState.COMPLETE)


def test_a_waiting_confirmation_reaches_the_tray_title_and_status_line(window, qloop, journal, monkeypatch):
    from PySide6.QtWidgets import QSystemTrayIcon

    from .test_session import create

    class DesktopTray:  # stands in for the desktop's tray, which the offscreen platform has not
        def __init__(self):
            self.messages, self.tips, self.icons = [], [], 0

        def isVisible(self):
            return True

        def showMessage(self, title, text):
            self.messages.append((title, text))

        def setToolTip(self, tip):
            self.tips.append(tip)

        def setIcon(self, _icon):
            self.icons += 1

    monkeypatch.setattr(QSystemTrayIcon, "isSystemTrayAvailable", staticmethod(lambda: True))
    tray = window.tray = window.confirmer.tray = DesktopTray()
    chat_until_a_proposal(window, qloop, journal, create("Draft the release notes"), "please draft the release notes")
    assert tray.messages and "waiting" in tray.messages[0][0] and "start a goal" in tray.messages[0][1]
    window._update_status()
    assert "WAITING FOR YOUR CONFIRMATION" in tray.tips[-1] and window.windowTitle().startswith("⏳")
    assert tray.icons == 1  # the badge
    window.confirmer.open_dialogs[0].decline_button.click()
    until(qloop, lambda: not window.confirmer.open_dialogs)
    window._update_status()
    assert not window.windowTitle().startswith("⏳") and tray.icons == 2


def test_sorting_orders_siblings_and_keeps_the_tree_shape(window, qloop, journal):
    run = Run.create("Produce a market analysis", fast_rehearsal(), sink=journal)
    qloop.run_until_complete(run.drive())
    window.show_journaled(run.run_id)
    tokens_column = 4

    def shape(model, parent=None):
        from PySide6.QtCore import QModelIndex

        parent = parent or QModelIndex()
        while model.canFetchMore(parent):
            model.fetchMore(parent)
        return [(model.data(model.index(r, 0, parent), GOAL_ID_ROLE), model.data(model.index(r, tokens_column, parent)),
                 shape(model, model.index(r, 0, parent))) for r in range(model.rowCount(parent))]

    before = shape(window.tree_model)
    window.tree.header().sectionClicked.emit(tokens_column)
    window.tree.header().sectionClicked.emit(tokens_column)  # descending
    assert window.tree.model() is window.proxy
    after = shape(window.proxy)

    def edges(rows, parent=None):
        return {(goal, parent) for goal, _t, kids in rows} | {e for goal, _t, kids in rows for e in edges(kids, goal)}

    def check_sorted(rows):
        assert [t for _g, t, _k in rows] == sorted((t for _g, t, _k in rows), reverse=True)
        for _g, _t, kids in rows:
            check_sorted(kids)

    assert edges(after) == edges(before)  # the same parents and children
    check_sorted(after)
    window.tree.header().sectionClicked.emit(tokens_column)  # third click: creation order again
    assert window.tree.model() is window.tree_model and shape(window.tree_model) == before


def test_opening_the_run_this_window_drives_follows_it_live(window, qloop, journal):
    from goalgui.engine import ModelReply

    release = asyncio.Event()

    class Slow:
        name = "slow"

        async def complete(self, request):
            await release.wait()
            return ModelReply("YES")

    run = Run.create("Write a report", Slow(), sink=journal)
    window.run_goal(run)
    other = Run.create("Something else", fast_rehearsal(), sink=journal)
    qloop.run_until_complete(other.drive())
    window.show_journaled(other.run_id)
    assert window.run is None and not window.controls.pause_button.isEnabled()
    window.show_journaled(run.run_id)  # from the Runs view: the live run, with its controls
    assert window.run is run and window.controls.pause_button.isEnabled()
    window.show_journaled(other.run_id)  # look elsewhere while it runs, then close the window
    window.close()
    assert window.isVisible() and run.state is RunState.ACTIVE  # it asks first
    box = window.close_box
    assert "Closing pauses it" in box.text()
    box.button(box.StandardButton.Yes).click()
    assert not window.isVisible()
    assert run.state is RunState.PAUSED and run.record.stop_reason == "paused: the window was closed"
    release.set()


def test_the_runs_view_sorts_numbers_as_numbers_and_searches(qtbot):
    from PySide6.QtCore import Qt

    from goalgui.ui.panes import RunsView

    view = RunsView()
    qtbot.addWidget(view)

    def run(run_id, objective, tokens):
        return {"run_id": run_id, "objective": objective, "strategy": "goal-stack", "state": "complete",
                "stop_reason": None, "tokens": tokens, "goals": 3, "started_at": 1_800_000_000.0,
                "updated_at": 1_800_000_090.0}

    view.show_runs([run("a1", "Plan a party", 9_000), run("b2", "Compare CRMs", 10_000), run("c3", "Write notes", 950)])
    view.table.sortItems(5, Qt.SortOrder.AscendingOrder)
    assert [view.table.item(r, 0).text() for r in range(3)] == ["c3", "a1", "b2"]
    assert view.table.item(2, 5).text() == "10,000" and view.table.item(0, 8).text() == "90 s"
    view.search.setText("crm")
    assert [view.table.isRowHidden(r) for r in range(3)] == [True, True, False]


def test_a_moment_past_the_replay_limit_is_read_from_the_journal_as_it_was(window, qloop, journal, monkeypatch):
    """Past REPLAY_LIMIT events a moment is not replayed but read at that event from the goals index:
    at every moment the tree (goals, statuses, tokens, attempts, result sizes, children) is the replay's."""
    from goalgui.ui import window_journaled

    monkeypatch.setattr(window_journaled, "REPLAY_LIMIT", 10)
    run = Run.create("Produce a market analysis", fast_rehearsal(), sink=journal)
    qloop.run_until_complete(run.drive())
    window.show_journaled(run.run_id)
    last = window.shown_seq
    for n in (12, 30, last // 2, last - 3):
        shown = []
        window.moment_shown.connect(shown.append)
        window._on_inspect_moment_chosen(n)
        until(qloop, lambda: shown == [n])
        window.moment_shown.disconnect()
        assert window.record is None and window.shown_seq == n  # read, not replayed
        replayed = journal.load(run.run_id, upto=n)
        expected = {g.id: (g.status.value, g.tokens, g.attempts, len(g.result), len(g.children))
                    for g in replayed.goals.values()}
        def flat(rows):
            return {gid: status for gid, status, kids in rows} | {k: v for _g, _s, kids in rows
                                                                  for k, v in flat(kids).items()}
        assert flat(tree_rows(window.tree_model)) == {g: v[0] for g, v in expected.items()}  # what is on screen
        got = {}
        stack = [None]
        while stack:
            parent = stack.pop()
            for row in journal.children(run.run_id, parent, upto=n):
                got[row[0]] = (row[3], row[4], row[5], row[6], row[7])
                stack.append(row[0])
        assert got == expected, n


def test_text_from_a_model_or_a_server_is_never_rendered_as_markup(qtbot):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QLabel

    from goalgui.engine.confirm import ConfirmationRequest
    from goalgui.ui.confirm_dialog import ConfirmDialog

    hostile = "<b>bold</b><img src='file:///etc/passwd'><a href='http://x'>link</a>"
    dialog = ConfirmDialog(ConfirmationRequest("c1", "subgoals", {"parent": hostile, "subgoals": [hostile]}, "ask"))
    qtbot.addWidget(dialog)
    shown = [label for label in dialog.findChildren(QLabel) if hostile in label.text()]
    assert shown and all(label.textFormat() is Qt.TextFormat.PlainText for label in shown)
